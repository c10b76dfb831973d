//! Several jobs on one fabric: placement policies lay the documented
//! hosts, a job that shares nothing with the others runs exactly as alone,
//! jobs that share uplinks slow each other down, and bad placements are
//! refused with the file and key.

use crate::common::{load, load_with};
use csigsim::output::tables::JobTable;

/// Two `collective` jobs of `ranks` ranks each on `topology`, the entries'
/// placement keys given as TOML lines.
fn two_jobs(topology: &str, a: &str, b: &str) -> String {
    format!(
        r#"name = "jobs"
{topology}
[transport]
cc = "dctcp"
[switch]
ecn = {{ kmin = "100KB", kmax = "400KB", pmax = 0.2 }}

[[workload]]
kind = "collective"
job = "a"
op = "all_reduce"
size = "2MB"
iterations = 2
gap = "5us"
{a}

[[workload]]
kind = "collective"
job = "b"
op = "all_reduce"
size = "2MB"
iterations = 2
gap = "5us"
{b}
"#
    )
}

const LEAF_SPINE: &str = "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\noversubscription = 2";

/// The shared run's jobs table, the alone runs' times filled in.
fn with_alone(toml: &str) -> JobTable {
    let sc = load(toml);
    let alone = csigsim::run_jobs_alone(&sc, &Default::default()).unwrap();
    let out = csigsim::run(sc, |_| true);
    assert!(out.summary.invariants_ok);
    let mut t = out.tables.jobs.expect("a jobs table");
    csigsim::output::jobs::set_alone(&mut t, &alone);
    t
}

fn hosts(sc: &csigsim::Scenario, job: usize) -> Vec<&str> {
    sc.jobs[job].hosts.iter().map(|&h| sc.topology.hosts[h as usize].as_str()).collect()
}

/// Two jobs in two pods of a fat tree share no link and no switch: each
/// ends at the same picosecond as alone (slowdown exactly 1), through the
/// same number of links, none shared.
#[test]
fn jobs_kept_apart_run_exactly_as_alone() {
    let toml = two_jobs(
        "[topology]\nkind = \"fat_tree\"\nk = 4",
        "placement = \"contiguous\"\nnum_ranks = 4",
        "placement = \"contiguous\"\nnum_ranks = 4",
    );
    let t = with_alone(&toml);
    assert_eq!(t.hosts, ["h0 h1 h2 h3", "h4 h5 h6 h7"]);
    for j in 0..2 {
        assert_eq!(t.iterations_completed[j], 2);
        assert!(t.time_ps[j].is_some());
        assert_eq!(t.time_ps[j], t.alone_time_ps[j], "job {j}");
        assert_eq!(t.slowdown[j], Some(1.0));
        assert_eq!(t.shared_links[j], Some(0));
        // Each rank's NIC link both ways, and its ToR's links to the pod's aggs.
        assert!(t.links[j].unwrap() >= 8);
    }
}

/// Two jobs interleaved on an oversubscribed leaf-spine (even hosts and
/// odd hosts): both rings cross every leaf's uplinks, which they share,
/// and each is slower than alone.
#[test]
fn jobs_sharing_uplinks_report_a_slowdown() {
    let toml = two_jobs(
        LEAF_SPINE,
        "hosts = [0, 2, 4, 6, 8, 10, 12, 14]",
        "hosts = [1, 3, 5, 7, 9, 11, 13, 15]",
    );
    let t = with_alone(&toml);
    for j in 0..2 {
        assert_eq!(t.placement[j], "explicit");
        assert!(t.shared_links[j].unwrap() > 0);
        let s = t.slowdown[j].unwrap();
        assert!(s > 1.05, "job {j}: slowdown {s}");
        assert_eq!(s, t.time_ps[j].unwrap() as f64 / t.alone_time_ps[j].unwrap() as f64);
        // An iteration's time is within the job's (iterations overlap:
        // a rank starts the next once it has received the last).
        assert!(t.iteration_mean_ps[j].unwrap() <= t.iteration_max_ps[j].unwrap());
        assert!(t.iteration_max_ps[j].unwrap() <= t.time_ps[j].unwrap());
    }
}

/// The link table: per job, one row per link its packets crossed, its
/// bytes at most the link's, and the jobs' bytes on a link adding up to at
/// most the link's; a link both jobs use is a shared one.
#[test]
fn job_links_add_up_to_the_links() {
    let toml = two_jobs(LEAF_SPINE, "placement = \"random\"\nnum_ranks = 8", "placement = \"random\"\nnum_ranks = 8");
    let out = csigsim::run(load(&toml), |_| true);
    let l = out.tables.job_links.expect("job_links");
    let t = out.tables.jobs.expect("jobs");
    let mut by_link: std::collections::BTreeMap<u32, (u64, u64, u32)> = Default::default();
    for i in 0..l.len() {
        assert!(l.tx_bytes[i] > 0 && l.tx_bytes[i] <= l.link_bytes[i]);
        assert_eq!(l.share[i], l.tx_bytes[i] as f64 / l.link_bytes[i] as f64);
        let e = by_link.entry(l.link_id[i]).or_insert((0, l.link_bytes[i], 0));
        e.0 += l.tx_bytes[i];
        e.2 += 1;
    }
    for (link, (jobs, total, users)) in &by_link {
        // Data and ACKs of the jobs are all the link carries here.
        assert_eq!(jobs, total, "link {link} carried {users} jobs");
    }
    let shared = by_link.values().filter(|v| v.2 == 2).count() as u32;
    assert!(shared > 0);
    assert_eq!(t.shared_links, [Some(shared), Some(shared)]);
    for j in 0..2 {
        assert_eq!(t.links[j], Some(l.job.iter().filter(|n| **n == t.job[j]).count() as u32));
    }
}

/// Per job: its directed links (job_links.csv), and jobs.csv's `links`
/// and `shared_links`.
type JobLinkSets = (Vec<std::collections::BTreeSet<u32>>, Vec<Option<u32>>, Vec<Option<u32>>);

/// Each job's directed links, from job_links.csv, and jobs.csv's `links`
/// and `shared_links`.
fn job_link_sets(out: &csigsim::RunOutput) -> JobLinkSets {
    let l = out.tables.job_links.as_ref().expect("job_links");
    let t = out.tables.jobs.as_ref().expect("jobs");
    let sets = t.job.iter().map(|j| (0..l.len()).filter(|&i| &l.job[i] == j).map(|i| l.link_id[i]).collect()).collect();
    (sets, t.links.clone(), t.shared_links.clone())
}

/// At flow level jobs.csv's `links` and `shared_links` and job_links.csv
/// come from the fluid's paths (data out, ACKs back): two jobs in two
/// pods share no link; two jobs interleaved on a leaf-spine cross exactly
/// the links they cross at packet level and share the same ones, and each
/// link's bytes are its jobs' bytes.
#[test]
fn flow_level_jobs_cross_the_links_their_packets_would() {
    let flow = &["engine.fidelity=\"flow\""];
    let apart = two_jobs("[topology]\nkind = \"fat_tree\"\nk = 4", "placement = \"contiguous\"\nnum_ranks = 4", "placement = \"contiguous\"\nnum_ranks = 4");
    let out = csigsim::run(load_with(&apart, flow), |_| true);
    let (sets, links, shared) = job_link_sets(&out);
    assert_eq!(shared, [Some(0), Some(0)]);
    assert!(sets[0].is_disjoint(&sets[1]));
    for j in 0..2 {
        // Each rank's NIC link both ways, and its ToR's links to the pod's aggs.
        assert!(sets[j].len() >= 8, "job {j}: {:?}", sets[j]);
        assert_eq!(links[j], Some(sets[j].len() as u32));
    }
    let together = two_jobs(LEAF_SPINE, "hosts = [0, 2, 4, 6, 8, 10, 12, 14]", "hosts = [1, 3, 5, 7, 9, 11, 13, 15]");
    let packet = csigsim::run(load(&together), |_| true);
    let fluid = csigsim::run(load_with(&together, flow), |_| true);
    let (want, want_links, want_shared) = job_link_sets(&packet);
    let (got, got_links, got_shared) = job_link_sets(&fluid);
    assert_eq!(got, want);
    assert!(got_shared.iter().all(|s| s.unwrap() > 0));
    assert_eq!((got_links, got_shared), (want_links, want_shared));
    let l = fluid.tables.job_links.as_ref().unwrap();
    let mut by_link: std::collections::BTreeMap<u32, (u64, u64)> = Default::default();
    for i in 0..l.len() {
        let e = by_link.entry(l.link_id[i]).or_insert((0, l.link_bytes[i]));
        e.0 += l.tx_bytes[i];
    }
    assert!(by_link.iter().all(|(_, (jobs, total))| jobs == total), "{by_link:?}");
    // The bytes: each job's data and ACKs over its links, what its packets
    // put there (nothing is lost or sent again here: to the byte).
    let bytes = |o: &csigsim::RunOutput, job: &str| {
        let l = o.tables.job_links.as_ref().unwrap();
        (0..l.len()).filter(|&i| l.job[i] == job).map(|i| l.tx_bytes[i]).sum::<u64>()
    };
    for job in ["a", "b"] {
        let (p, f) = (bytes(&packet, job), bytes(&fluid, job));
        println!("job {job}: {f} bytes at flow level, {p} at packet level");
        assert_eq!(f, p, "job {job}");
    }
}

/// `contiguous` takes the lowest-indexed free hosts: around a host an
/// explicit job holds, and after the jobs before it.
#[test]
fn contiguous_placement_takes_the_next_free_hosts() {
    let toml = two_jobs(LEAF_SPINE, "hosts = [\"h2\", \"h5\"]", "placement = \"contiguous\"\nnum_ranks = 6");
    let sc = load(&toml);
    assert_eq!(hosts(&sc, 0), ["h2", "h5"]);
    assert_eq!(hosts(&sc, 1), ["h0", "h1", "h3", "h4", "h6", "h7"]);
    assert_eq!(sc.jobs[1].placement.name(), "contiguous");
    // The flows follow: job b's ring runs h0 -> h1 -> h3 ...
    let f = sc.flow_specs();
    let first_b = sc.workloads[sc.jobs[1].workload].first as usize;
    assert_eq!((f[first_b].src.0, f[first_b].dst.0), (0, 1));
    assert_eq!(sc.flow_name(csigsim::id::FlowId(first_b as u32)), "b");
}

/// `random` draws distinct free hosts from the seed and the job's name:
/// the same seed gives the same hosts, ranks in host order; other seeds
/// other hosts; another job's name other hosts.
#[test]
fn random_placement_is_deterministic_per_seed() {
    let toml = two_jobs(LEAF_SPINE, "hosts = [0, 1]", "placement = \"random\"\nnum_ranks = 6");
    let draw = |seed: u64| {
        let sc = csigsim::scenario::load_str(&toml, "t.toml", std::path::Path::new("."), &[], Some(seed)).unwrap();
        sc.jobs[1].hosts.clone()
    };
    let first = draw(1);
    assert_eq!(first, draw(1));
    assert!(first.windows(2).all(|w| w[0] < w[1]), "{first:?}");
    assert!(first.iter().all(|h| (2..16).contains(h)));
    let others: Vec<Vec<u32>> = (2..6).map(draw).collect();
    assert!(others.iter().any(|o| *o != first));
    let renamed = load_with(&toml, &["workload[1].job=\"c\""]);
    let by_name: Vec<Vec<u32>> = ["c", "d", "e", "f"]
        .iter()
        .map(|n| load_with(&toml, &[&format!("workload[1].job=\"{n}\"")]).jobs[1].hosts.clone())
        .collect();
    assert_eq!(renamed.jobs[1].hosts, by_name[0]);
    assert!(by_name.iter().any(|h| *h != first));
    // Every host equally likely: over many seeds each free host is drawn
    // about 6 / 14 of the time.
    let mut count = [0u32; 16];
    for seed in 0..700 {
        for h in draw(seed) {
            count[h as usize] += 1;
        }
    }
    for (h, &c) in count.iter().enumerate().skip(2) {
        assert!((240..360).contains(&c), "host {h}: {c} of 700");
    }
}

/// `rail_aligned` takes whole servers and lays the ranks rail by rail: rank
/// `r S + s` on NIC `r` of server `s`.
#[test]
fn rail_aligned_placement_lays_ranks_rail_by_rail() {
    let topo = "[topology]\nkind = \"leaf_spine\"\nleaves = 4\nspines = 2\nhosts_per_leaf = 4\nnics = 2\nnic_attach = \"rail\"";
    let toml = two_jobs(topo, "placement = \"rail_aligned\"\nnum_ranks = 4", "placement = \"rail_aligned\"\nnum_ranks = 6");
    let sc = load(&toml);
    assert_eq!(hosts(&sc, 0), ["h0.0", "h1.0", "h0.1", "h1.1"]);
    assert_eq!(hosts(&sc, 1), ["h2.0", "h3.0", "h4.0", "h2.1", "h3.1", "h4.1"]);
    // With group_size = S the groups are the rails: each ring on one rail switch.
    // (A server's name stands for its NICs: job b runs on h7.0 and h7.1.)
    let toml = two_jobs(topo, "placement = \"rail_aligned\"\nnum_ranks = 8\ngroup_size = 4", "hosts = [\"h7\"]");
    let sc = load(&toml);
    assert_eq!(hosts(&sc, 0), ["h0.0", "h1.0", "h2.0", "h3.0", "h0.1", "h1.1", "h2.1", "h3.1"]);
    assert_eq!(hosts(&sc, 1), ["h7.0", "h7.1"]);
    let rails: Vec<&str> = sc.collectives.iter().filter(|c| c.iteration == 0 && c.name.starts_with("a.")).map(|c| c.name.as_str()).collect();
    assert_eq!(rails, ["a.g0", "a.g1"]);
    let f = sc.flow_specs();
    for g in sc.collectives.iter().filter(|c| c.name.starts_with("a.")) {
        let rail = if g.name == "a.g0" { 0 } else { 1 };
        for i in g.steps[0].start..g.steps[g.steps.len() - 1].end {
            // Both ends of every flow on the group's rail: NIC `rail` of a server.
            assert_eq!((f[i as usize].src.0 % 2, f[i as usize].dst.0 % 2), (rail, rail));
        }
    }
}

/// Bad placements: the file, the entry's key and why.
#[test]
fn bad_placements_name_the_file_and_key() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (LEAF_SPINE, "placement = \"contiguous\"\nnum_ranks = 8", "placement = \"contiguous\"\nnum_ranks = 12", "workload[1].placement"),
        (LEAF_SPINE, "hosts = [0, 1, 2]", "hosts = [3, 2]", "workload[1].hosts[1]"),
        (LEAF_SPINE, "placement = \"rail_aligned\"\nnum_ranks = 4", "hosts = [9, 10]", "workload[0].placement"),
        (LEAF_SPINE, "placement = \"random\"", "hosts = [9, 10]", "workload[0].num_ranks"),
        (LEAF_SPINE, "num_ranks = 4", "hosts = [9, 10]", "workload[0].num_ranks"),
        (LEAF_SPINE, "placement = \"contiguous\"\nnum_ranks = 4\nhosts = [0, 1, 2, 3]", "hosts = [9, 10]", "workload[0].hosts"),
        (LEAF_SPINE, "placement = \"everywhere\"\nnum_ranks = 4", "hosts = [9, 10]", "workload[0].placement"),
        (LEAF_SPINE, "hosts = [0, 1]", "hosts = [2, 3]\njob = \"a\"", "workload[1].job"),
        // Without `hosts` a job runs on all hosts: the second meets the first.
        (LEAF_SPINE, "", "placement = \"contiguous\"\nnum_ranks = 2", "workload[1].placement"),
    ];
    for (topo, a, b, key) in cases {
        let mut toml = two_jobs(topo, a, b);
        if b.contains("job = \"a\"") {
            toml = toml.replacen("job = \"b\"\n", "", 1);
        }
        let e = csigsim::scenario::load_str(&toml, "jobs.toml", std::path::Path::new("."), &[], None).expect_err(key);
        assert_eq!(e.file, "jobs.toml");
        assert_eq!(e.key.as_deref(), Some(*key), "{e}");
        assert!(e.line_col.is_some(), "{e}");
    }
    // Sharing a host is allowed when the later job says so.
    let toml = two_jobs(LEAF_SPINE, "hosts = [0, 1, 2]", "hosts = [3, 2]\nshare_hosts = true");
    assert_eq!(load(&toml).jobs[1].hosts, [3, 2]);
}

/// A job alone: the other job's flows keep their ids and never start.
#[test]
fn a_job_alone_leaves_the_others_unstarted() {
    let toml = two_jobs(LEAF_SPINE, "placement = \"contiguous\"\nnum_ranks = 4", "placement = \"contiguous\"\nnum_ranks = 4");
    let sc = load(&toml);
    let b = &sc.workloads[sc.jobs[1].workload];
    let out = csigsim::run(sc.alone(0), |_| true);
    let f = &out.tables.flows;
    assert_eq!(f.len(), sc.flow_count());
    for i in 0..f.len() {
        let in_b = (b.first..b.first + b.len()).contains(&(i as u32));
        assert_eq!(f.finish_ps[i].is_none(), in_b, "flow {i}");
    }
    let t = out.tables.jobs.unwrap();
    assert_eq!(t.flows_completed, [t.flows[0], 0]);
    assert_eq!(t.end_ps[1], None);
}

/// Traces as jobs: a GOAL schedule of 2 ranks and a Chakra trace of 8
/// laid `contiguous` one after the other; each job starts with its first
/// compute and ends with its last operation, and a job that waits for
/// compute only on one rank still completes; the Chakra job counts its
/// trace's iterations.
#[test]
fn trace_jobs_are_placed_and_timed() {
    let dir = std::env::temp_dir().join(format!("csigsim-jobs-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("two.goal"),
        "num_ranks 2\nrank 0 {\n  c: calc 20000\n  s: send 1000000b to 1\n  s requires c\n}\nrank 1 {\n  r: recv 1000000b from 0\n  d: calc 5000\n  d requires r\n}\n",
    )
    .unwrap();
    let chakra = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/chakra/dp8");
    let toml = format!(
        r#"name = "trace jobs"
[topology]
kind = "fat_tree"
k = 4

[[workload]]
kind = "goal"
job = "g"
placement = "contiguous"
file = "two.goal"

[[workload]]
kind = "chakra"
job = "c"
placement = "contiguous"
path = "{}"
"#,
        chakra.display()
    );
    let sc = csigsim::scenario::load_str(&toml, "t.toml", &dir, &[], None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(hosts(&sc, 0), ["h0", "h1"]);
    assert_eq!(hosts(&sc, 1), ["h2", "h3", "h4", "h5", "h6", "h7", "h8", "h9"]);
    let alone = csigsim::run_jobs_alone(&sc, &Default::default()).unwrap();
    let out = csigsim::run(sc, |_| true);
    let t = out.tables.jobs.unwrap();
    assert_eq!(t.kind, ["goal", "chakra"]);
    assert_eq!(t.flows_completed, t.flows);
    // The GOAL job: 20 us of compute from 0, then 1 MB at 100 Gb/s (80 us
    // and the headers), then 5 us more.
    assert_eq!(t.start_ps[0], Some(0));
    let time = t.time_ps[0].unwrap();
    assert!((105_000_000..110_000_000).contains(&time), "{time}");
    assert_eq!(t.iteration_mean_ps[0], t.time_ps[0]);
    assert_eq!((t.iterations[0], t.iterations_completed[0]), (1, 1));
    // The Chakra job: its iterations are the trace's (iterations.csv's
    // totals rows), not the job as one.
    let it = out.iterations.as_ref().unwrap();
    let totals: Vec<u64> = (0..it.len()).filter(|&i| it.rank[i].is_none() && it.workload[i] == it.workload[it.len() - 1]).map(|i| it.time_ps[i].unwrap()).collect();
    assert!(totals.len() >= 2, "{totals:?}");
    assert_eq!((t.iterations[1], t.iterations_completed[1]), (totals.len() as u32, totals.len() as u32));
    assert_eq!(t.iteration_max_ps[1], totals.iter().copied().max());
    assert_eq!(t.iteration_mean_ps[1], Some(totals.iter().sum::<u64>() / totals.len() as u64));
    assert!(t.iteration_mean_ps[1] < t.time_ps[1]);
    for (j, a) in alone.iter().enumerate() {
        assert!(t.time_ps[j].unwrap() >= a.unwrap() * 99 / 100, "job {j}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
