//! Load balancing. Switch-side policies (ECMP, spray, adaptive, D-mod-K) are
//! chosen per scenario with `switch.routing` and applied in
//! [`crate::net::switch`]; host-side policies will live here, one file each.

/// Every switch routing policy this build knows, for `csigsim list`.
pub const ROUTING: &[(&str, &str)] = &[
    ("ecmp", "per-flow hash of the packet's entropy over equal-cost next hops"),
    ("spray", "per-packet uniform random choice among equal-cost next hops"),
    ("adaptive", "the equal-cost next hop with the shortest egress queue"),
    ("deterministic", "D-mod-K: candidate (dst / k^stage) mod n, balanced on k-ary trees"),
];
