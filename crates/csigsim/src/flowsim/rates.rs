//! Max-min fair rates by progressive filling over weighted links.
//!
//! A fluid flow crosses links, each carrying a share of its rate (1 on a
//! single path; a fraction where spraying splits it over equal-cost
//! paths). Filling raises the rates of a set of flows together from zero;
//! when a link is full (or a flow reaches its own cap) the flows on it keep
//! their rate and the others go on rising. The flows outside the set keep
//! their rates: a change (a flow that starts or ends) refills only the
//! flows that share a link with it, which is what keeps an event's cost
//! to its neighbourhood rather than the fabric.

/// One fluid flow: its links with the share of its rate each carries, its
/// own cap (a rate cap, in bits/s; infinite when none) and its rate now.
#[derive(Clone, Debug, Default)]
pub struct Share {
    pub links: Vec<(u32, f64)>,
    pub cap: f64,
    pub rate: f64,
}

/// Links' capacities, loads and the flows on each.
#[derive(Debug, Default)]
pub struct Fabric {
    /// Per link: capacity in bits/s (0 while it is down).
    pub cap: Vec<f64>,
    /// Per link: the sum of its flows' rates times their shares.
    pub load: Vec<f64>,
    /// Per link: the flows crossing it, as (slot, index of the link in the
    /// flow's list); `at[slot][k]`: where the flow's `k`-th link lists it,
    /// so a flow leaves a link in constant time.
    on: Vec<Vec<(u32, u32)>>,
    at: Vec<Vec<u32>>,
    /// Scratch, per link: the capacity left to the set being filled and
    /// the sum of the shares of its flows still rising; `seen` marks links
    /// (and `fseen` flows, `lseen` links gathered) already taken in this pass.
    left: Vec<f64>,
    rising: Vec<f64>,
    seen: Vec<u64>,
    fseen: Vec<u64>,
    lseen: Vec<u64>,
    pass: u64,
}

/// Shares below this are rounding left over from removing a flow.
const TINY: f64 = 1e-12;

impl Fabric {
    pub fn new(cap: Vec<f64>) -> Fabric {
        let n = cap.len();
        Fabric {
            cap,
            load: vec![0.0; n],
            on: vec![Vec::new(); n],
            at: Vec::new(),
            left: vec![0.0; n],
            rising: vec![0.0; n],
            seen: vec![0; n],
            fseen: Vec::new(),
            lseen: vec![0; n],
            pass: 0,
        }
    }

    /// Puts flow `slot` on its links (at rate 0 until filled).
    pub fn add(&mut self, slot: u32, s: &Share) {
        debug_assert_eq!(s.rate, 0.0);
        if self.at.len() <= slot as usize {
            self.at.resize(slot as usize + 1, Vec::new());
        }
        let at = &mut self.at[slot as usize];
        at.clear();
        for (k, &(l, _)) in s.links.iter().enumerate() {
            let on = &mut self.on[l as usize];
            at.push(on.len() as u32);
            on.push((slot, k as u32));
        }
    }

    /// Takes flow `slot` off its links.
    pub fn remove(&mut self, slot: u32, s: &Share) {
        for (k, &(l, w)) in s.links.iter().enumerate() {
            let on = &mut self.on[l as usize];
            let i = self.at[slot as usize][k] as usize;
            debug_assert_eq!(on[i], (slot, k as u32), "a flow is on its links");
            on.swap_remove(i);
            if let Some(&(moved, j)) = on.get(i) {
                self.at[moved as usize][j as usize] = i as u32;
            }
            self.load[l as usize] = if on.is_empty() { 0.0 } else { self.load[l as usize] - w * s.rate };
        }
    }

    /// Appends to `out` every flow on the links `links` not yet in it this
    /// pass (begin a pass with [`Fabric::begin`]), in link order then in
    /// the order they sit on the link. A link met again in the pass adds
    /// nothing (its flows are in already).
    pub fn gather(&mut self, links: impl IntoIterator<Item = u32>, out: &mut Vec<u32>) {
        for l in links {
            if std::mem::replace(&mut self.lseen[l as usize], self.pass) == self.pass {
                continue;
            }
            for &(f, _) in &self.on[l as usize] {
                let fs = &mut self.fseen[f as usize];
                if *fs != self.pass {
                    *fs = self.pass;
                    out.push(f);
                }
            }
        }
    }

    /// Starts a pass of [`Fabric::gather`] and [`Fabric::mark_flow`].
    pub fn begin(&mut self, slots: usize) {
        self.pass += 1;
        if self.fseen.len() < slots {
            self.fseen.resize(slots, 0);
        }
    }

    /// Marks flow `f` as taken in this pass; false if it already was.
    pub fn mark_flow(&mut self, f: u32) -> bool {
        let fs = &mut self.fseen[f as usize];
        if *fs == self.pass {
            return false;
        }
        *fs = self.pass;
        true
    }

    /// Progressive filling of the flows `set` (slots into `shares`), the
    /// others' rates held. Sets their rates and the links' loads; appends
    /// to `touched` every link of the set (once).
    pub fn fill(&mut self, set: &[u32], shares: &mut [Share], touched: &mut Vec<u32>) {
        self.pass += 1;
        let first = touched.len();
        for &f in set {
            let s = &shares[f as usize];
            for &(l, w) in &s.links {
                let li = l as usize;
                if self.seen[li] != self.pass {
                    self.seen[li] = self.pass;
                    touched.push(l);
                    self.left[li] = self.cap[li] - self.load[li];
                    self.rising[li] = 0.0;
                }
                self.left[li] += w * s.rate;
                self.rising[li] += w;
            }
        }
        let links = &touched[first..];
        let old: Vec<f64> = set.iter().map(|&f| shares[f as usize].rate).collect();
        let mut rising: Vec<u32> = set.to_vec();
        while !rising.is_empty() {
            // The level at which the first link fills or the first flow
            // reaches its cap.
            let mut level = f64::INFINITY;
            for &l in links {
                let li = l as usize;
                if self.rising[li] > TINY {
                    level = level.min(self.left[li].max(0.0) / self.rising[li]);
                }
            }
            for &f in &rising {
                level = level.min(shares[f as usize].cap);
            }
            if !level.is_finite() {
                // No link limits them (cannot happen on a fabric: every
                // flow crosses its NIC's link).
                level = 0.0;
            }
            let tight = level * (1.0 + 1e-12) + TINY;
            // Rates in whole bits per second: flows that fill together at
            // rounding apart keep one rate (and drain together), and a
            // whole rate on a whole capacity drains in exact picoseconds.
            let level = level.floor();
            let full = |fab: &Fabric, s: &Share| {
                s.cap <= tight || s.links.iter().any(|&(l, _)| fab.rising[l as usize] > TINY && fab.left[l as usize].max(0.0) / fab.rising[l as usize] <= tight)
            };
            let (mut stop, mut go) = (Vec::new(), Vec::new());
            for &f in &rising {
                if full(self, &shares[f as usize]) {
                    stop.push(f);
                } else {
                    go.push(f);
                }
            }
            for &f in &stop {
                let s = &mut shares[f as usize];
                s.rate = level;
                for &(l, w) in &s.links {
                    self.left[l as usize] -= w * level;
                    self.rising[l as usize] -= w;
                }
            }
            rising = go;
        }
        for (k, &f) in set.iter().enumerate() {
            let s = &shares[f as usize];
            let d = s.rate - old[k];
            if d != 0.0 {
                for &(l, w) in &s.links {
                    self.load[l as usize] += w * d;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(links: &[(u32, f64)]) -> Share {
        Share { links: links.to_vec(), cap: f64::INFINITY, rate: 0.0 }
    }

    /// The textbook case: flows A (links 0, 1), B (link 0), C (link 1), D
    /// (link 1) on links of 10 and 12: link 1 fills first at 4 (A, C, D),
    /// then B takes the 6 left on link 0.
    #[test]
    fn progressive_filling_gives_the_max_min_rates() {
        let mut fab = Fabric::new(vec![10.0, 12.0]);
        let mut s = vec![share(&[(0, 1.0), (1, 1.0)]), share(&[(0, 1.0)]), share(&[(1, 1.0)]), share(&[(1, 1.0)])];
        for (i, x) in s.iter().enumerate() {
            fab.add(i as u32, x);
        }
        let mut touched = Vec::new();
        fab.fill(&[0, 1, 2, 3], &mut s, &mut touched);
        let r: Vec<f64> = s.iter().map(|x| x.rate).collect();
        assert_eq!(r, vec![4.0, 6.0, 4.0, 4.0]);
        assert_eq!(fab.load, vec![10.0, 12.0]);
        // D leaves: refilling its link's flows gives A, C 6 each and B 4.
        fab.remove(3, &s[3]);
        let mut set = Vec::new();
        fab.begin(4);
        fab.gather([1], &mut set);
        fab.gather([0], &mut set);
        fab.fill(&set, &mut s, &mut touched);
        assert_eq!((s[0].rate, s[1].rate, s[2].rate), (5.0, 5.0, 7.0));
        assert!((fab.load[0] - 10.0).abs() < 1e-9 && (fab.load[1] - 12.0).abs() < 1e-9);
    }

    /// A cap below the fair share holds the flow there and leaves the rest
    /// to the others; a flow split over two links at half each gets twice
    /// a link's fair share.
    #[test]
    fn caps_and_split_flows() {
        let mut fab = Fabric::new(vec![100e9, 100e9, 100e9]);
        let mut s = vec![Share { cap: 10e9, ..share(&[(0, 1.0)]) }, share(&[(0, 1.0)]), share(&[(1, 0.5), (2, 0.5)]), share(&[(1, 1.0)])];
        for (i, x) in s.iter().enumerate() {
            fab.add(i as u32, x);
        }
        fab.fill(&[0, 1, 2, 3], &mut s, &mut Vec::new());
        assert_eq!((s[0].rate, s[1].rate), (10e9, 90e9));
        // Link 1: 0.5 x + y = 100 G with x = y: both 66.67 G, in whole bits/s.
        assert_eq!((s[2].rate, s[3].rate), (66_666_666_666.0, 66_666_666_666.0));
    }
}
