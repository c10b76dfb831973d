//! The progress watchdog and the diagnosis of runs that end with unfinished
//! flows.

use super::common::{dumbbell, load, load_with};

/// A five-switch ring, one host per switch, every flow two hops clockwise
/// (the only shortest path), tiny PFC buffers: the paused ring links wait on
/// each other, a PFC deadlock. The flows' retransmission timers keep events
/// coming, so without the watchdog the run never ends.
pub fn pfc_ring() -> String {
    let n = 5;
    let hosts: Vec<String> = (0..n).map(|i| format!("\"h{i}\"")).collect();
    let switches: Vec<String> = (0..n).map(|i| format!("\"s{i}\"")).collect();
    let mut links: Vec<String> = (0..n).map(|i| format!("{{ a = \"h{i}\", b = \"s{i}\", rate = \"100Gbps\", delay = \"1us\" }}")).collect();
    links.extend((0..n).map(|i| format!("{{ a = \"s{i}\", b = \"s{}\", rate = \"100Gbps\", delay = \"1us\" }}", (i + 1) % n)));
    let flows: String = (0..n)
        .map(|i| format!("[[flow]]\nsrc = \"h{i}\"\ndst = \"h{}\"\nsize = \"10MB\"\n", (i + 2) % n))
        .collect();
    format!(
        "name = \"pfc ring\"\n[topology]\nkind = \"custom\"\nhosts = [{}]\nswitches = [{}]\nlinks = [\n{}\n]\n\
         [switch]\nmode = \"pfc\"\nbuffer = \"200KB\"\nreserved = \"4KB\"\n[transport]\ncc = \"none\"\nrto = \"100us\"\n\
         [monitor]\nlinks = false\nstall = \"1ms\"\n{flows}",
        hosts.join(", "),
        switches.join(", "),
        links.join(",\n")
    )
}

#[test]
fn pfc_deadlock_on_a_ring_stalls_with_its_cycle() {
    let out = csigsim::run(load(&pfc_ring()), |_| true);
    let s = &out.summary;
    eprintln!("{}", serde_json::to_string_pretty(&s.diagnosis).unwrap());
    assert_eq!(s.end_reason, "stalled", "{s:?}");
    let d = s.diagnosis.as_ref().expect("a stalled run has a diagnosis");
    assert_eq!(d.cause, "pfc_deadlock");
    assert!(d.message.contains("PFC deadlock"), "{}", d.message);
    assert_eq!(d.unfinished_flows, 5);
    assert_eq!(d.flows.len(), 5);
    assert!(d.flows.iter().all(|f| f.started && f.in_flight && f.delivered_bytes < f.size_bytes));
    assert!(!d.pfc_cycle.is_empty());
    for l in &d.pfc_cycle {
        assert!(d.paused_ports.contains(l), "{l} is in the cycle but not paused");
    }
    assert!(d.stretch.length_ns >= 1e6, "stalled after less than monitor.stall: {}", d.stretch.length_ns);
}

#[test]
fn watchdog_off_keeps_running_to_the_stop_time() {
    let out = csigsim::run(load_with(&pfc_ring(), &["monitor.stall=0s", "stop=3ms"]), |_| true);
    assert_eq!(out.summary.end_reason, "stop_time");
    assert!(out.summary.flows_completed < 5);
    assert!(out.summary.diagnosis.is_none(), "a stop time is no diagnosis in summary.json");
}

/// A 1 Mbps bottleneck (12 ms per full packet) and a 10 us retransmission
/// timeout: the sender resends long before anything arrives.
pub fn timer_storm() -> String {
    "name = \"timer storm\"\n[topology]\nkind = \"custom\"\nhosts = [\"h0\", \"h1\"]\nswitches = [\"s0\"]\nlinks = [\n\
     { a = \"h0\", b = \"s0\", rate = \"100Gbps\", delay = \"1us\" },\n{ a = \"s0\", b = \"h1\", rate = \"1Mbps\", delay = \"1us\" },\n]\n\
     [transport]\ncc = \"none\"\nrto = \"10us\"\n[monitor]\nlinks = false\nstall = \"5ms\"\n\
     [[flow]]\nsrc = \"h0\"\ndst = \"h1\"\nsize = \"1MB\"\n"
        .to_string()
}

#[test]
fn timer_storm_stalls_as_a_retransmission_storm() {
    let out = csigsim::run(load(&timer_storm()), |_| true);
    let s = &out.summary;
    eprintln!("{} {}", s.end_reason, serde_json::to_string_pretty(&s.diagnosis).unwrap());
    assert_eq!(s.end_reason, "stalled");
    let d = s.diagnosis.as_ref().unwrap();
    assert_eq!(d.unfinished_flows, 1);
    assert_eq!(d.cause, "retransmission_storm", "{}", d.message);
    assert!(d.stretch.timeouts > 0);
    assert!(d.pfc_cycle.is_empty());
}

#[test]
fn a_run_that_completes_has_no_diagnosis() {
    let toml = dumbbell(2, "[[flow]]\nsrc = \"h0\"\ndst = \"rx\"\nsize = \"1MB\"\n[[flow]]\nsrc = \"h1\"\ndst = \"rx\"\nsize = \"1MB\"\n");
    let out = csigsim::run(load(&toml), |_| true);
    assert_eq!(out.summary.end_reason, "completed");
    assert!(out.summary.diagnosis.is_none());
    let json = serde_json::to_string(&out.summary).unwrap();
    assert!(!json.contains("diagnosis"), "{json}");
}

/// A fat tree of 10 us links and a stall limit of 2 us: the first packet
/// is still on its first link when the watchdog's deadline comes, and no
/// event falls before it.
fn stalled_before_any_event() -> String {
    "name = \"slow links\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"10us\"\n\
     [monitor]\nstall = \"2us\"\n[[flow]]\nsrc = \"h0\"\ndst = \"h15\"\nsize = \"100KB\"\n"
        .to_string()
}

#[test]
fn a_stall_with_no_event_before_the_deadline_is_found_on_one_thread_and_on_two() {
    for threads in [1, 2] {
        let opts = csigsim::RunOptions { threads, ..Default::default() };
        // The loop looks at progress between stretches: a run that never
        // finds its deadline keeps looking, and is cut short here.
        let mut looks = 0;
        let out = csigsim::run_with(load(&stalled_before_any_event()), &opts, |_| {
            looks += 1;
            looks < 10_000
        })
        .unwrap();
        let s = &out.summary;
        assert_eq!(s.end_reason, "stalled", "threads {threads}: {s:?}");
        assert_eq!(s.sim_time_ns, 2000.0, "threads {threads}: the run ends where it was found stalled");
        assert_eq!(out.threads.partitions, threads as u32, "threads {threads}");
    }
}
