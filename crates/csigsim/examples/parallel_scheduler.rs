//! What the parallel scheduler costs and gains, on a model of packets
//! that, event by event, either wait a serialization (332 ns) at their node
//! or hop to a random node one link delay (1 us, plus 0 to 3
//! serializations) later, each event costing the handler a given amount of
//! work. Runs the model on the single queue, then on the scheduler with two
//! partitions on one and on two threads, checks that the three end in the
//! same state, and prints the time per event.
//!
//! `cargo run --release --example parallel_scheduler -- [work] [nodes] [hops] [threads...]`
//! (`work`: rounds of a 64-bit mix per event, the crate's `rng::mix`, about 5 ns each; default 60).

use csigsim::sim::parallel::{PartHandler, Partition, Scheduler};
use csigsim::sim::queue::{EventQueue, Item};

#[derive(Clone, Copy)]
struct Hop {
    node: u32,
    left: u32,
    value: u64,
}

impl Item for Hop {
    const FILLER: Hop = Hop { node: 0, left: 0, value: 0 };
}

fn mix(x: u64) -> u64 {
    csigsim::rng::mix(x, 0)
}

#[derive(Clone)]
struct Nodes {
    state: Vec<u64>,
    work: u32,
    parts: u32,
}

impl Nodes {
    /// Handles a hop at `t`: its next hop, if any.
    #[inline]
    fn step(&mut self, t: u64, h: Hop) -> Option<(u64, Hop)> {
        let n = h.node as usize;
        let mut x = self.state[n] ^ h.value ^ t;
        for _ in 0..self.work {
            x = mix(x);
        }
        self.state[n] = x;
        (h.left > 0).then(|| {
            let next = Hop { node: h.node, left: h.left - 1, value: x >> 7 };
            if x >> 20 & 1 == 0 {
                // Its next serialization at the same node (kept in the
                // partition's wheel when it falls in the window).
                (t + 332_000, next)
            } else {
                let node = (x % self.state.len() as u64) as u32;
                (t + 1_000_000 + (x >> 40) % 4 * 332_000, Hop { node, ..next })
            }
        })
    }
}

impl PartHandler<Hop> for Nodes {
    fn handle(&mut self, t: u64, h: Hop, part: &mut Partition<Hop>) {
        if let Some((t2, h2)) = self.step(t, h) {
            part.push(t2, h2.node % self.parts, h2);
        }
    }
}

fn cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime fills the struct it is given and reads nothing else.
    #[allow(unsafe_code)]
    unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (w, c) = (std::time::Instant::now(), cpu_s());
    let r = f();
    (r, w.elapsed().as_secs_f64(), cpu_s() - c)
}

fn main() {
    let arg = |i: usize, d: u64| std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (work, nodes, hops) = (arg(1, 60) as u32, arg(2, 1024) as u32, arg(3, 400) as u32);
    let seeds: Vec<(u64, Hop)> =
        (0..nodes as u64 * 8).map(|i| (mix(i) % 8 * 332_000, Hop { node: (i % nodes as u64) as u32, left: hops, value: i })).collect();
    let nodes0 = Nodes { state: vec![0; nodes as usize], work, parts: 2 };

    let (seq, wall, cpu) = timed(|| {
        let mut m = nodes0.clone();
        let mut q: EventQueue<Hop> = EventQueue::new();
        for &(t, h) in &seeds {
            q.push(t, h);
        }
        let mut events = 0u64;
        while let Some((t, h)) = q.pop() {
            events += 1;
            if let Some((t2, h2)) = m.step(t, h) {
                q.push(t2, h2);
            }
        }
        (m.state, events)
    });
    let events = seq.1;
    println!("{events} events, {work} rounds of work each, {nodes} nodes");
    println!("| run | wall s | CPU s | wall ns / event | CPU ns / event | merge ns / event |");
    println!("|---|---|---|---|---|---|");
    let row = |name: &str, wall: f64, cpu: f64, merge: f64| {
        let per = |s: f64| s * 1e9 / events as f64;
        println!("| {name} | {wall:.3} | {cpu:.3} | {:.1} | {:.1} | {:.1} |", per(wall), per(cpu), per(merge))
    };
    row("single queue", wall, cpu, 0.0);
    // `[threads...]` after the three numbers: which scheduler runs to make
    // (default 1 and 2; 0 for none, to measure the single queue alone).
    let runs: Vec<usize> = std::env::args().skip(4).filter_map(|a| a.parse().ok()).collect();
    for threads in if runs.is_empty() { vec![1, 2] } else { runs.into_iter().filter(|&n| n > 0).map(|n| n.min(2)).collect() } {
        let ((state, stats), wall, cpu) = timed(|| {
            let mut s = Scheduler::new(2, 1_000_000);
            for &(t, h) in &seeds {
                s.push(t, h.node % 2, h);
            }
            let mut parts = [nodes0.clone(), nodes0.clone()];
            let stats = s.run(&mut parts, threads);
            let state: Vec<u64> = (0..nodes as usize).map(|n| parts[n % 2].state[n]).collect();
            (state, stats)
        });
        assert_eq!(state, seq.0, "the scheduler's outcome differs from the single queue's");
        assert_eq!(stats.events, events);
        row(&format!("2 partitions, {threads} thread(s), {} windows", stats.windows), wall, cpu, stats.merge_s);
    }
}
