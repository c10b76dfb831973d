//! Packet spraying: each packet draws its next hop uniformly from the
//! switch's own random stream. A port whose link is down is left out: when
//! the draw lands on one, a second draw picks among the ports up (only
//! failures cost that draw, so runs without them are unchanged).

use super::{Ctx, Load};
use crate::id::PortId;

pub type State = ();

#[inline]
pub fn choose<L: Fn(PortId) -> Load>(c: &mut Ctx<L>, _: &mut State) -> usize {
    let n = c.cands.len();
    let i = c.rng.below(n as u64) as usize;
    if !(c.load)(c.cands[i]).down {
        return i;
    }
    let up = c.cands.iter().filter(|&&p| !(c.load)(p).down).count();
    if up == 0 {
        return i;
    }
    let k = c.rng.below(up as u64) as usize;
    (0..n).filter(|&j| !(c.load)(c.cands[j]).down).nth(k).unwrap_or(i)
}

#[cfg(test)]
mod tests {
    use crate::id::PortId;
    use crate::lb::test_util::{ctx, stream};
    use crate::lb::{self, GroupState, Load, RoutingPolicy};

    #[test]
    fn uses_only_candidates_and_covers_all() {
        let cands = [PortId(7), PortId(3), PortId(9)];
        let mut rng = stream();
        let mut group = GroupState::default();
        let mut counts = [0u32; 3];
        for _ in 0..300 {
            let port = lb::choose(RoutingPolicy::Spray, ctx(&cands, 5, 0, &mut rng), &mut group);
            let i = cands.iter().position(|&c| c == port).expect("a candidate");
            counts[i] += 1;
        }
        assert!(counts.iter().all(|&n| n > 50), "{counts:?}");
    }

    #[test]
    fn steers_around_down_ports_evenly() {
        let cands = [PortId(0), PortId(1), PortId(2), PortId(3)];
        let mut rng = stream();
        let mut group = GroupState::default();
        let mut counts = [0u32; 4];
        for _ in 0..3000 {
            let c = lb::Ctx { cands: &cands, entropy: 5, dst: 0, salt: 1, divisor: 1, now: 0, rng: &mut rng, load: |p: PortId| Load { down: p.0 == 1, ..Load::default() } };
            counts[lb::choose(RoutingPolicy::Spray, c, &mut group).ix()] += 1;
        }
        assert_eq!(counts[1], 0);
        assert!(counts.iter().enumerate().all(|(i, &n)| i == 1 || (900..1100).contains(&n)), "{counts:?}");
    }
}
