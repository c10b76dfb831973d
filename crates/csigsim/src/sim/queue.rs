//! The event queue: a binary heap ordered by (time, insertion sequence), so
//! events scheduled for the same picosecond pop in the order they were
//! scheduled, on every machine and every run.

use super::Event;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// time in the high 64 bits, sequence in the low 64: one comparison orders both.
    key: u128,
    event: Event,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, o: &Self) -> Ordering {
        o.key.cmp(&self.key)
    }
}

#[derive(Debug, Default)]
pub struct EventQueue {
    heap: BinaryHeap<Entry>,
    seq: u64,
    popped: u64,
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn push(&mut self, time_ps: u64, event: Event) {
        let key = ((time_ps as u128) << 64) | self.seq as u128;
        self.seq += 1;
        self.heap.push(Entry { key, event });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        let e = self.heap.pop()?;
        self.popped += 1;
        Some(((e.key >> 64) as u64, e.event))
    }

    #[inline]
    pub fn peek_time(&self) -> Option<u64> {
        self.heap.peek().map(|e| (e.key >> 64) as u64)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(10, Event::FlowStart { flow: 2 });
        q.push(5, Event::FlowStart { flow: 9 });
        q.push(10, Event::FlowStart { flow: 1 });
        q.push(10, Event::FlowStart { flow: 3 });
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        let flows: Vec<u32> = order
            .iter()
            .map(|(_, e)| match e {
                Event::FlowStart { flow } => *flow,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(flows, vec![9, 2, 1, 3]);
        assert_eq!(order[0].0, 5);
    }
}
