//! Packet spraying: each packet draws its next hop uniformly from the
//! switch's own random stream.

use super::{Ctx, Load};
use crate::id::PortId;

pub type State = ();

#[inline]
pub fn choose<L: Fn(PortId) -> Load>(c: &mut Ctx<L>, _: &mut State) -> usize {
    c.rng.below(c.cands.len() as u64) as usize
}

#[cfg(test)]
mod tests {
    use crate::id::PortId;
    use crate::lb::test_util::{ctx, stream};
    use crate::lb::{self, GroupState, RoutingPolicy};

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
}
