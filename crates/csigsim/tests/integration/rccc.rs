//! Receiver credits (`[transport.rccc]`) on a whole fabric: the incast
//! invariant and determinism.

use crate::common::world;

/// 15 -> 1 incast of 300 KB on a k = 4 fat tree, the htsim profile, with
/// receiver credits alone or under NSCC and 20 KB of speculative bytes.
fn incast(cc: &str) -> String {
    format!(
        "name = \"rccc\"\nprofile = \"htsim-uec\"\n[topology]\nkind = \"fat_tree\"\nk = 4\nrate = \"100Gbps\"\ndelay = \"1us\"\n\
         [transport]\ncc = \"{cc}\"\n[transport.rccc]\nspeculative = \"20KB\"\n\
         [[workload]]\nkind = \"incast\"\nreceiver = \"h0\"\ncount = 15\nsize = \"300KB\"\n"
    )
}

#[test]
fn the_receivers_link_is_offered_no_more_than_its_credit_beyond_the_speculative_bytes() {
    for cc in ["none", "nscc"] {
        let mut w = world(&incast(cc), &[]);
        w.keep_flow_states();
        let t = &w.scenario().transport;
        let packet = (t.mtu + t.header) as u64;
        let quantum = t.rccc.unwrap().quantum.0;
        let pull = 4 * t.mtu as u64 / quantum * quantum;
        let rate = 100e9 * 0.99 / 8.0 / 1e12; // credited bytes per ps
        let n = w.flows().len();
        let mut now = 0;
        let mut grants_seen = false;
        while w.flows().iter().any(|f| f.finish_ps.is_none()) {
            now += 500_000;
            w.run_until(now);
            let (mut offered, mut speculative, mut granted, mut added) = (0u64, 0u64, 0u64, 0u64);
            for i in 0..n {
                let c = w.flow_state(i).and_then(|f| f.credit.as_deref()).expect("credit state");
                offered += c.tx.spent;
                speculative += c.tx.speculative;
                granted += c.rx.granted as u64 * quantum;
                added += c.tx.added;
                // A sender sends what it was given, overshooting by less than a packet.
                assert!(c.tx.spent < c.tx.speculative + c.tx.added + packet, "{cc}: flow {i} at {now}: spent {} of {} + {}", c.tx.spent, c.tx.speculative, c.tx.added);
            }
            // Grants arrive after they are made, and at most at the credited rate.
            assert!(added <= granted, "{cc}: {added} > {granted}");
            assert!((granted as f64) <= rate * now as f64 + pull as f64, "{cc}: {granted} B granted by {now} ps");
            assert!(offered < speculative + granted + n as u64 * packet, "{cc}: {offered} offered at {now}");
            grants_seen |= granted > 0;
            assert!(now < 50_000_000_000, "{cc}: the incast does not finish");
        }
        assert!(grants_seen);
        w.finish();
        assert!(w.check_invariants().is_empty(), "{cc}: {:?}", w.check_invariants());
        // 15 x 300 KB in 74 packets each through one 100 Gb/s link: at
        // least 365.7 us; the speculative bytes and the pacer (99%) keep it
        // within 10% of that.
        let end = w.flows().iter().filter_map(|f| f.finish_ps).max().unwrap();
        let ideal = 15 * (300_000 + 74 * 64) * 8 * 10; // ps at 100 Gb/s
        assert!(end > ideal && end < ideal * 11 / 10, "{cc}: ends at {end} ps, ideal {ideal}");
    }
}

#[test]
fn credited_runs_are_deterministic() {
    let run = || {
        let mut w = world(&incast("nscc"), &[]);
        w.run(u64::MAX);
        w.finish();
        (w.events(), w.flows().iter().map(|f| (f.finish_ps, f.sender_done_ps, f.bytes_sent, f.retransmits)).collect::<Vec<_>>())
    };
    assert_eq!(run(), run());
}
