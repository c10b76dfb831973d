//! D-mod-K: candidate `(dst / divisor) % n`. On a k-ary tree whose switches
//! list their up-ports by digit (see net/topology), destinations spread
//! evenly over the uplinks and no two share a downward path.

use super::{Ctx, Load};
use crate::id::PortId;

pub type State = ();

#[inline]
pub fn choose<L: Fn(PortId) -> Load>(c: &mut Ctx<L>, _: &mut State) -> usize {
    (c.dst / c.divisor) as usize % c.cands.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::test_util::{ctx, stream};

    #[test]
    fn picks_dst_over_divisor_mod_n() {
        let cands = [PortId(0), PortId(1), PortId(2), PortId(3)];
        let mut rng = stream();
        for dst in 0..64u32 {
            for divisor in [1, 4, 16] {
                let mut c = ctx(&cands, 99, dst, &mut rng);
                c.divisor = divisor;
                assert_eq!(choose(&mut c, &mut ()), (dst / divisor % 4) as usize);
            }
        }
    }
}
