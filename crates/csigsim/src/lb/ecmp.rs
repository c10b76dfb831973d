//! ECMP: every packet of a flow takes the same next hop at a switch, chosen
//! by hashing the flow's entropy with the switch's salt (so switches at
//! different stages do not make correlated choices).

use super::{Ctx, Load};
use crate::id::PortId;
use crate::rng::mix;

pub type State = ();

/// The flow's hash at a switch.
#[inline]
pub fn hash(entropy: u32, salt: u64) -> u64 {
    mix(entropy as u64, salt)
}

#[inline]
pub fn choose<L: Fn(PortId) -> Load>(c: &mut Ctx<L>, _: &mut State) -> usize {
    (hash(c.entropy, c.salt) % c.cands.len() as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::test_util::{ctx, stream};

    #[test]
    fn same_entropy_same_port_and_flows_cover_all_ports() {
        let cands = [PortId(10), PortId(11), PortId(12), PortId(13)];
        let mut rng = stream();
        let mut seen = [false; 4];
        for entropy in 0..64u32 {
            let first = choose(&mut ctx(&cands, entropy, 0, &mut rng), &mut ());
            for dst in 1..4 {
                assert_eq!(choose(&mut ctx(&cands, entropy, dst, &mut rng), &mut ()), first);
            }
            seen[first] = true;
        }
        assert_eq!(seen, [true; 4]);
    }
}
