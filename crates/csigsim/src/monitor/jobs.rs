//! Per-job link bytes: the wire bytes each job's packets (data and the
//! control packets of its flows) put on each directed link, beside every
//! byte the link carried, for jobs.csv and job_links.csv. At flow level
//! the fluid model adds each flow's bytes per link itself
//! ([`JobLinks::add`]).

use crate::packet::{Packet, PacketKind};

/// Each job's flows, and per port the bytes of each job and of all.
#[derive(Clone, Debug, Default)]
pub struct JobLinks {
    /// Job `j`'s flows are `ranges[j].0 .. ranges[j].1`, in increasing order.
    ranges: Vec<(u32, u32)>,
}

impl JobLinks {
    pub fn new(ranges: Vec<(u32, u32)>) -> JobLinks {
        debug_assert!(ranges.windows(2).all(|w| w[0].1 <= w[1].0));
        JobLinks { ranges }
    }

    /// Counters per port: one per job, then the link's total.
    pub fn counters(&self) -> Box<[u64]> {
        vec![0; self.ranges.len() + 1].into_boxed_slice()
    }

    /// `p` went on the wire of the port whose counters are `c`.
    #[inline]
    pub fn on_tx(&self, c: &mut [u64], p: &Packet) {
        if p.kind == PacketKind::Pause {
            // A pause frame is the link's, no job's.
            let last = c.len() - 1;
            c[last] += p.wire as u64;
            return;
        }
        self.add(c, p.flow.0, p.wire as u64);
    }

    /// `bytes` of flow `flow` went on the wire of the port whose counters
    /// are `c` (a packet, or the flow level's fluid).
    #[inline]
    pub fn add(&self, c: &mut [u64], flow: u32, bytes: u64) {
        let last = c.len() - 1;
        c[last] += bytes;
        let j = self.ranges.partition_point(|r| r.1 <= flow);
        if j < self.ranges.len() && self.ranges[j].0 <= flow {
            c[j] += bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_go_to_the_job_of_the_flow() {
        let m = JobLinks::new(vec![(2, 5), (5, 6), (9, 12)]);
        let mut c = m.counters();
        let mut p = Packet { wire: 100, ..Default::default() };
        for (flow, job) in [(0, None), (2, Some(0)), (4, Some(0)), (5, Some(1)), (7, None), (11, Some(2)), (12, None)] {
            let before = c.clone();
            p.flow = crate::id::FlowId(flow);
            m.on_tx(&mut c, &p);
            assert_eq!(c[3], before[3] + 100, "total");
            for j in 0..3 {
                assert_eq!(c[j] - before[j], if job == Some(j) { 100 } else { 0 }, "flow {flow} job {j}");
            }
        }
        p.kind = PacketKind::Pause;
        p.flow = crate::id::FlowId(3);
        let before = c.clone();
        m.on_tx(&mut c, &p);
        assert_eq!((c[0], c[3]), (before[0], before[3] + 100));
    }
}
