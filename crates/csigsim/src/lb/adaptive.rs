//! Adaptive routing: the next hop with the least load, where load is the
//! data bytes queued plus 1 if the transmitter is busy (so an idle port beats
//! a busy one with an empty queue). The scan starts at the flow's ECMP hash,
//! so ties spread over flows instead of all landing on the first port. A
//! port whose link is down is never taken while another is up.

use super::{ecmp, Ctx, Load};
use crate::id::PortId;

pub type State = ();

#[inline]
pub fn choose<L: Fn(PortId) -> Load>(c: &mut Ctx<L>, _: &mut State) -> usize {
    let n = c.cands.len();
    let start = (ecmp::hash(c.entropy, c.salt) % n as u64) as usize;
    let mut best = start;
    let mut best_load = u64::MAX;
    for k in 0..n {
        let i = (start + k) % n;
        let l = (c.load)(c.cands[i]);
        let load = if l.down { u64::MAX } else { l.queue_bytes + l.busy_until.saturating_sub(c.now).min(1) };
        if load < best_load {
            best_load = load;
            best = i;
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::test_util::stream;

    fn pick(queues: [u64; 4], busy: [u64; 4], entropy: u32) -> usize {
        pick_down(queues, busy, [false; 4], entropy)
    }

    fn pick_down(queues: [u64; 4], busy: [u64; 4], down: [bool; 4], entropy: u32) -> usize {
        let mut rng = stream();
        let mut c = Ctx {
            cands: &[PortId(0), PortId(1), PortId(2), PortId(3)],
            entropy,
            dst: 0,
            salt: 0x5eed,
            divisor: 1,
            now: 100,
            rng: &mut rng,
            load: |p: PortId| Load { queue_bytes: queues[p.ix()], busy_until: busy[p.ix()], down: down[p.ix()] },
        };
        choose(&mut c, &mut ())
    }

    #[test]
    fn picks_the_least_loaded() {
        for entropy in 0..16 {
            assert_eq!(pick([900, 40, 500, 41], [0; 4], entropy), 1);
            // Equal queues: the idle transmitter wins.
            assert_eq!(pick([0; 4], [200, 200, 50, 200], entropy), 2);
        }
    }

    #[test]
    fn never_picks_a_down_port_while_one_is_up() {
        for entropy in 0..64 {
            // Port 2 is down with the shortest queue; the others hold data.
            assert_eq!(pick_down([900, 800, 0, 700], [0; 4], [false, false, true, false], entropy), 3);
            assert_ne!(pick_down([0; 4], [0; 4], [false, false, true, false], entropy), 2);
        }
    }

    #[test]
    fn ties_start_at_the_flow_hash() {
        let mut seen = [false; 4];
        for entropy in 0..64 {
            let i = pick([0; 4], [0; 4], entropy);
            assert_eq!(i as u64, ecmp::hash(entropy, 0x5eed) % 4);
            seen[i] = true;
        }
        assert_eq!(seen, [true; 4]);
    }
}
