//! RPC traffic: the foreground's arrivals, the background's on/off pattern
//! (read from links.csv) and rpcs.csv.

use crate::common::load;
use csigsim::World;

const FT: &str = "name = \"rpc\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n[switch]\nmode = \"pfc\"\n";

#[test]
fn the_background_follows_its_on_off_pattern() {
    // One background sender, h4 -> h12: 1 MB ops every 160 us (50 Gb/s)
    // during 1 ms, then 4 ms off; a light foreground elsewhere.
    let text = format!(
        "{FT}[[workload]]\nkind = \"rpc\"\nsize = \"64KB\"\nload = 0.01\nduration = \"15ms\"\nsenders = [\"h0\"]\nreceivers = [\"h8\"]\n\
         background = {{ size = \"1MB\", on = \"1ms\", off = \"4ms\", rate = \"50Gbps\", senders = [\"h4\"], receivers = [\"h12\"] }}\n"
    );
    let mut w = World::new(load(&text));
    w.run(u64::MAX);
    w.finish();
    let port = w.network().host_port(csigsim::id::HostId(4));
    let rows: Vec<_> = w.observers().link_rows().unwrap().collect();
    let window = w.observers().window_ps();
    // Ops start at 0, 160, ..., 960 us of each 5 ms period and take 80 us
    // each at line rate: the link is busy within [k x 5 ms, k x 5 ms + 1.04 ms].
    let mut active = 0;
    for r in rows[port.ix()].iter().filter(|r| r.tx_bytes > 0) {
        let t = r.window * window;
        let in_period = t % 5_000_000_000;
        assert!(in_period < 1_040_000_000, "traffic at {t} ps, in the off period");
        active += 1;
    }
    // Three bursts (0, 5, 10 ms) of 11 windows each carry data.
    assert_eq!(active, 33);
    let bg = w.scenario().flow_specs().iter().filter(|f| f.name.ends_with("-bg")).count();
    assert_eq!(bg, 3 * 7, "7 ops (0..960 us every 160 us) per burst");
}

#[test]
fn rpcs_csv_has_every_rpc_with_its_latency() {
    let text = format!(
        "{FT}[[workload]]\nkind = \"rpc\"\nsize = \"640KB\"\nload = 0.3\nduration = \"10ms\"\nsenders = [\"h0\", \"h1\", \"h2\", \"h3\"]\nreceivers = [\"h8\", \"h9\"]\nname = \"fg\"\n"
    );
    let sc = load(&text);
    // 4 senders x 0.3 x 100 Gb/s / (8 x 640 KB) x 10 ms: about 234 RPCs.
    let n = sc.flow_specs().len() as f64;
    assert!((n - 234.4).abs() < 4.0 * 234.4f64.sqrt(), "{n} RPCs");
    assert!(sc.flow_specs().iter().all(|f| f.size == 640_000 && f.dst.0 >= 8 && f.dst.0 <= 9 && f.src.0 <= 3));
    assert!(sc.flow_specs().windows(2).all(|p| p[0].start <= p[1].start));
    let out = csigsim::run(sc, |_| true);
    let r = out.tables.rpcs.as_ref().expect("rpcs table");
    assert_eq!(r.len(), out.tables.flows.flow_id.len());
    for i in 0..r.len() {
        let f = r.flow_id[i] as usize;
        assert_eq!(r.latency_ps[i], out.tables.flows.fct_ps[f]);
        assert_eq!(r.class[i], "foreground");
    }
    assert!(out.rpcs_csv().starts_with("flow_id,name,class,src,dst,size_bytes,start_ns,finish_ns,latency_ns\n"));
}

#[test]
fn rpc_errors_name_the_key() {
    let bad = format!("{FT}[[workload]]\nkind = \"rpc\"\nsize = \"640KB\"\nload = 0.3\nduration = \"1ms\"\nsenders = [\"h0\"]\nreceivers = [\"h0\"]\n");
    let e = csigsim::scenario::load_str(&bad, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].receivers"), "{e}");
    let huge = bad.replace("size = \"640KB\"", "size = 1").replace("receivers = [\"h0\"]", "receivers = [\"h1\"]").replace("duration = \"1ms\"", "duration = \"10s\"");
    let e = csigsim::scenario::load_str(&huge, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert!(e.to_string().contains("more than 10000000"), "{e}");
    let bad = bad.replace("load = 0.3", "load = -1");
    let e = csigsim::scenario::load_str(&bad, "t.toml", std::path::Path::new("."), &[], None).unwrap_err();
    assert_eq!(e.key.as_deref(), Some("workload[0].load"), "{e}");
}
