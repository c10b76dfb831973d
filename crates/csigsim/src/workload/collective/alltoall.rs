//! The direct all-to-all, as nccl-tests' alltoall runs it: every rank sends
//! `size / n` bytes of its buffer to every other rank, all at once, as
//! concurrent point-to-point transfers (NCCL's grouped sends and receives).
//!
//! Rank `r` sends to its peers in the order `r + 1, r + 2, ..., r + n - 1`
//! (mod `n`), as NCCL schedules point-to-point work by that distance: with
//! the NIC's round robin, at any moment every rank is sending to a different
//! rank. Each transfer is divided evenly among the channels and sent in
//! slices of at most `chunk`, like the pipelined algorithms'.
//!
//! Step `d - 1` holds the transfers at distance `d`; the steps run at the same time.

use super::{share, slices, slices_of_shares, Instance, Plan};
use crate::de::InputError;
use crate::workload::KeyErr;

/// Flows of one instance.
pub(super) fn flows(p: &Plan) -> u64 {
    let (n, ch) = (p.n as u64, p.c.channels as u64);
    let per_peer = p.c.size.0 / n;
    (n * (n - 1)).saturating_mul(slices_of_shares(per_peer, ch, p.c.chunk.0))
}

/// Numbered by distance, rank, channel, slice.
pub(super) fn expand(p: &Plan, inst: &mut Instance, err: &KeyErr) -> Result<(), InputError> {
    let (n, ch) = (p.n, p.c.channels as u64);
    let per_peer = p.c.size.0 / n as u64;
    for d in 1..n {
        inst.begin_step();
        for r in 0..n {
            for k in 0..ch {
                let mut queue = Vec::new();
                for bytes in slices(share(per_peer, ch, k), p.c.chunk.0) {
                    inst.slice(r, (r + d) % n, k as u32, bytes, &[], &mut queue, err)?;
                }
            }
        }
    }
    Ok(())
}
