//! Round robin: a switch sends the packets towards one destination edge
//! switch to its equal-cost next hops in turn. One pointer per (switch,
//! edge), so the choice is deterministic and needs no random draw.

use super::{Ctx, Load};
use crate::id::PortId;

/// The candidate index the group's next packet takes.
#[derive(Clone, Copy, Debug, Default)]
pub struct State {
    next: u16,
}

#[inline]
pub fn choose<L: Fn(PortId) -> Load>(c: &mut Ctx<L>, s: &mut State) -> usize {
    // A group's candidates never change, so `next` stays below their count.
    let i = s.next as usize;
    s.next = if i + 1 == c.cands.len() { 0 } else { i as u16 + 1 };
    i
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::test_util::{ctx, stream};
    use crate::lb::{self, GroupState, RoutingPolicy};

    #[test]
    fn cycles_through_the_candidates_whatever_the_packet() {
        let cands = [PortId(4), PortId(8), PortId(6)];
        let mut rng = stream();
        let mut group = GroupState::default();
        let ports: Vec<u32> =
            (0..7).map(|k| lb::choose(RoutingPolicy::RoundRobin, ctx(&cands, k * 31, k, &mut rng), &mut group).0).collect();
        assert_eq!(ports, [4, 8, 6, 4, 8, 6, 4]);
    }

    #[test]
    fn each_group_keeps_its_own_pointer() {
        let cands = [PortId(0), PortId(1)];
        let mut rng = stream();
        let (mut a, mut b) = (State::default(), State::default());
        assert_eq!(choose(&mut ctx(&cands, 0, 0, &mut rng), &mut a), 0);
        assert_eq!(choose(&mut ctx(&cands, 0, 0, &mut rng), &mut a), 1);
        assert_eq!(choose(&mut ctx(&cands, 0, 0, &mut rng), &mut b), 0);
        assert_eq!(choose(&mut ctx(&cands, 0, 0, &mut rng), &mut a), 0);
    }
}
