//! Reflected signals per flow and monitor window, for `signals.csv`: the
//! number of ACKs that carried each signal, mean, min and max of the decoded
//! values, and the most frequent writer (bottleneck) of CSIG values.

/// The series a flow can see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Series {
    Csig = 0,
    StampMax = 1,
    StampSum = 2,
    StampSumSqu = 3,
    StampInd = 4,
    /// INT: hops in the reflected stack, and the largest queue any of them reported.
    IntHops = 5,
    IntMaxQlen = 6,
}

pub const SERIES: usize = 7;
const WRITERS: usize = 8;

#[derive(Clone, Copy, Debug, Default)]
struct Acc {
    n: u64,
    sum: f64,
    min: f64,
    max: f64,
    /// (writer port, locator, count); writer u32::MAX = never written.
    writers: [(u32, u16, u32); WRITERS],
}

impl Acc {
    fn add(&mut self, v: f64, writer: Option<(u32, u16)>) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        self.sum += v;
        if let Some((w, lm)) = writer {
            for slot in self.writers.iter_mut() {
                if slot.2 == 0 {
                    *slot = (w, lm, 1);
                    return;
                }
                if slot.0 == w {
                    slot.2 += 1;
                    return;
                }
            }
        }
    }

    /// Most frequent writer; ties go to the one seen first.
    fn top_writer(&self) -> Option<(u32, u16)> {
        let mut best: Option<(u32, u16, u32)> = None;
        for &s in &self.writers {
            if s.2 > 0 && best.is_none_or(|b| s.2 > b.2) {
                best = Some(s);
            }
        }
        best.map(|b| (b.0, b.1))
    }
}

/// One row of signals.csv.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignalRow {
    pub window: u64,
    pub series: Series,
    pub samples: u64,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Most frequent CSIG writer (egress port id) and its locator.
    pub writer: Option<(u32, u16)>,
}

#[derive(Clone, Debug, Default)]
pub struct FlowSignalMon {
    window: u64,
    acc: [Acc; SERIES],
    pub rows: Vec<SignalRow>,
}

const ALL: [Series; SERIES] =
    [Series::Csig, Series::StampMax, Series::StampSum, Series::StampSumSqu, Series::StampInd, Series::IntHops, Series::IntMaxQlen];

impl FlowSignalMon {
    /// Closes the current window; `held` counts the rows added.
    fn flush(&mut self, held: &mut usize) {
        for s in ALL {
            let a = &mut self.acc[s as usize];
            if a.n > 0 {
                self.rows.push(SignalRow {
                    window: self.window,
                    series: s,
                    samples: a.n,
                    mean: a.sum / a.n as f64,
                    min: a.min,
                    max: a.max,
                    writer: a.top_writer(),
                });
                *held += 1;
            }
            *a = Acc::default();
        }
    }

    /// Asks the CPU for the lines a CSIG sample updates.
    #[inline]
    pub fn prefetch(&self) {
        crate::sim::prefetch(&self.window);
        crate::sim::prefetch_all(&self.acc[Series::Csig as usize]);
    }

    #[inline]
    pub fn record(&mut self, now: u64, window_ps: u64, s: Series, value: f64, writer: Option<(u32, u16)>, held: &mut usize) {
        let w = now / window_ps;
        if w != self.window {
            self.flush(held);
            self.window = w;
        }
        self.acc[s as usize].add(value, writer);
    }

    /// Closes the current window if it is before window `upto`.
    pub fn close_before(&mut self, upto: u64, held: &mut usize) {
        if self.window < upto {
            self.flush(held);
        }
    }

    pub fn finish(&mut self, held: &mut usize) {
        self.flush(held);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_aggregate_and_name_the_most_frequent_writer() {
        let mut m = FlowSignalMon::default();
        let mut held = 0;
        m.record(5, 100, Series::Csig, 3.0, Some((7, 70)), &mut held);
        m.record(50, 100, Series::Csig, 5.0, Some((9, 90)), &mut held);
        m.record(60, 100, Series::Csig, 1.0, Some((9, 90)), &mut held);
        m.record(150, 100, Series::StampMax, 2.0, None, &mut held);
        m.finish(&mut held);
        assert_eq!(m.rows.len(), 2);
        assert_eq!(held, 2);
        let r = m.rows[0];
        assert_eq!((r.window, r.samples, r.min, r.max, r.writer), (0, 3, 1.0, 5.0, Some((9, 90))));
        assert_eq!(r.mean, 3.0);
        assert_eq!((m.rows[1].window, m.rows[1].series, m.rows[1].writer), (1, Series::StampMax, None));
    }
}
