//! The fixed benchmark set of `csigsim bench`: fat-tree permutations of 2 MB
//! flows at 100 Gbps, 1 us links, MTU 4096, DCTCP with ECN, drop-tail; the
//! NSCC permutation of htsim's UEC validation; a ring AllReduce of millions
//! of flows. The figures are recorded in docs/performance.md.

/// One benchmark case: a name and its scenario text.
#[derive(Clone, Debug)]
pub struct BenchCase {
    pub name: &'static str,
    pub description: &'static str,
    pub toml: String,
}

fn fat_tree_permutation(k: u32, cc: &str) -> String {
    fat_tree_permutation_with(k, cc, "")
}

fn fat_tree_permutation_with(k: u32, cc: &str, extra: &str) -> String {
    format!(
        r#"name = "bench fat_tree k={k} permutation"
seed = 1
[topology]
kind = "fat_tree"
k = {k}
rate = "100Gbps"
delay = "1us"
[switch]
buffer = "32MB"
mode = "lossy"
ecn = {{ kmin = "100KB", kmax = "400KB", pmax = 0.2 }}
[transport]
cc = "{cc}"
mtu = 4096
header = 64
[monitor]
links = false
{extra}
[[workload]]
kind = "permutation"
size = "2MB"
"#
    )
}

/// One BDP at 100 Gbps over the k-ary fat tree's longest path as htsim's UEC
/// validation sizes it: 178,450 B per switch port.
const UEC_BDP: u64 = 178_450;

/// The NSCC permutation that htsim's UEC validation runs: 100 Gbps, 1 us
/// links, 4086 + 64 B packets, one BDP per switch port (no shared buffer
/// beyond it), RED from 20% to 80% of the BDP, trimming, per-packet
/// spraying, and htsim's receiver: reliable unordered delivery (NSCC's
/// default on a sprayed fabric; an ACK per 16 KiB in any order).
fn nscc_uec_permutation(k: u32) -> String {
    let (kmin, kmax) = (UEC_BDP / 5, UEC_BDP * 4 / 5);
    format!(
        r#"name = "bench fat_tree k={k} nscc uec permutation"
seed = 1
[topology]
kind = "fat_tree"
k = {k}
rate = "100Gbps"
delay = "1us"
[switch]
mode = "trim"
routing = "spray"
reserved = "{UEC_BDP}B"
buffer = "{buffer}B"
ecn = {{ kmin = "{kmin}B", kmax = "{kmax}B", pmax = 1.0 }}
[transport]
cc = "nscc"
mtu = 4086
header = 64
[monitor]
links = false
[[workload]]
kind = "permutation"
size = "2MB"
"#,
        buffer = UEC_BDP * u64::from(k)
    )
}

/// A ring AllReduce of 16 MB per rank on every host of a k-ary fat tree,
/// lossless (PFC), as the shipped `ring_allreduce` scenario: 2 (n - 1)
/// flows a rank (2.1 M flows of 8 KB at k = 16), each waiting for the one
/// before it. The case of millions of short flows: set-up, flow state and
/// dependencies rather than queues.
fn ring_allreduce(k: u32) -> String {
    format!(
        r#"name = "bench fat_tree k={k} ring all-reduce"
seed = 1
[topology]
kind = "fat_tree"
k = {k}
rate = "100Gbps"
delay = "1us"
[switch]
mode = "pfc"
[monitor]
links = false
[[workload]]
kind = "collective"
op = "all_reduce"
size = "16MB"
"#
    )
}

/// The benchmark cases, smallest first.
pub fn cases() -> Vec<BenchCase> {
    vec![
        BenchCase { name: "fat_tree_128", description: "128-host fat tree (k=8), permutation of 2 MB flows, DCTCP", toml: fat_tree_permutation(8, "dctcp") },
        BenchCase { name: "fat_tree_1024", description: "1024-host fat tree (k=16), permutation of 2 MB flows, DCTCP", toml: fat_tree_permutation(16, "dctcp") },
        BenchCase {
            name: "fat_tree_1024_csig",
            description: "the 1024-host case with a CSIG max(Delay) tag on every data packet",
            toml: fat_tree_permutation_with(16, "dctcp", "[signals.csig]\ntype = \"delay\"\n"),
        },
        BenchCase { name: "fat_tree_1024_dcqcn", description: "the 1024-host case under DCQCN (hpcc profile)", toml: fat_tree_permutation(16, "dcqcn") },
        BenchCase { name: "fat_tree_1024_timely", description: "the 1024-host case under Timely", toml: fat_tree_permutation(16, "timely") },
        BenchCase { name: "fat_tree_1024_swift", description: "the 1024-host case under Swift", toml: fat_tree_permutation(16, "swift") },
        BenchCase {
            name: "fat_tree_1024_hpcc",
            description: "the 1024-host case under HPCC (INT on every packet)",
            toml: fat_tree_permutation_with(16, "hpcc", "[signals.int]\nmax_hops = 5\n"),
        },
        BenchCase { name: "fat_tree_1024_nscc", description: "the 1024-host case under NSCC", toml: fat_tree_permutation(16, "nscc") },
        BenchCase {
            name: "fat_tree_1024_dcqcn_rev",
            description: "the 1024-host case under DCQCN-Rev (ECP marking, hpcc profile)",
            toml: fat_tree_permutation(16, "dcqcn_rev").replace("pmax = 0.2 }", "pmax = 0.2, mode = \"ecp\" }"),
        },
        BenchCase { name: "fat_tree_1024_mcc", description: "the 1024-host case under MCC", toml: fat_tree_permutation(16, "mcc") },
        BenchCase {
            name: "nscc_uec_permutation_128",
            description: "htsim's UEC validation permutation on 128 hosts: NSCC, trimming, spraying, 1-BDP ports",
            toml: nscc_uec_permutation(8),
        },
        BenchCase {
            name: "nscc_uec_permutation_1024",
            description: "htsim's UEC validation permutation on 1024 hosts (k=16)",
            toml: nscc_uec_permutation(16),
        },
        BenchCase {
            name: "nscc_uec_permutation_8192",
            description: "htsim's UEC validation permutation on 8192 hosts (k=32)",
            toml: nscc_uec_permutation(32),
        },
        BenchCase { name: "fat_tree_8192", description: "8192-host fat tree (k=32), permutation of 2 MB flows, DCTCP", toml: fat_tree_permutation(32, "dctcp") },
        BenchCase {
            name: "ring_allreduce_1024",
            description: "ring AllReduce of 16 MB on 1024 hosts (k=16), PFC: 2.1 M flows of 8 KB",
            toml: ring_allreduce(16),
        },
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_case_is_a_valid_scenario_with_a_unique_name() {
        let cases = super::cases();
        for c in &cases {
            csigsim::scenario::load_str(&c.toml, c.name, std::path::Path::new("."), &[], None).unwrap_or_else(|e| panic!("{}: {e}", c.name));
            assert_eq!(cases.iter().filter(|d| d.name == c.name).count(), 1, "{}", c.name);
        }
    }
}
