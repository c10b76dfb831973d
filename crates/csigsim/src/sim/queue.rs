//! The event queue: a binary heap ordered by (time, insertion sequence), so
//! events scheduled for the same picosecond pop in the order they were
//! scheduled, on every machine and every run.

use super::Event;
use radix_heap::RadixHeapMap;
use std::cmp::Reverse;

/// A radix heap over the key (time << 64 | sequence). Keys popped never
/// decrease (the simulation never schedules into the past), which is all a
/// radix heap needs; it is markedly cheaper per event than a binary heap.
/// One popped entry may be held back by [`EventQueue::peek_time`].
#[derive(Default)]
pub struct EventQueue {
    heap: RadixHeapMap<Reverse<u128>, Event>,
    peeked: Option<(u128, Event)>,
    seq: u64,
    popped: u64,
}

impl std::fmt::Debug for EventQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "EventQueue {{ len: {}, popped: {} }}", self.len(), self.popped)
    }
}

impl EventQueue {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn push(&mut self, time_ps: u64, event: Event) {
        let key = ((time_ps as u128) << 64) | self.seq as u128;
        self.seq += 1;
        debug_assert!(self.peeked.is_none_or(|(k, _)| key > k), "event scheduled before a peeked one");
        self.heap.push(Reverse(key), event);
    }

    #[inline]
    pub fn pop(&mut self) -> Option<(u64, Event)> {
        let (key, event) = match self.peeked.take() {
            Some(e) => e,
            None => {
                let (Reverse(k), e) = self.heap.pop()?;
                (k, e)
            }
        };
        self.popped += 1;
        Some(((key >> 64) as u64, event))
    }

    #[inline]
    pub fn peek_time(&mut self) -> Option<u64> {
        if self.peeked.is_none() {
            let (Reverse(k), e) = self.heap.pop()?;
            self.peeked = Some((k, e));
        }
        self.peeked.map(|(k, _)| (k >> 64) as u64)
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.peeked.is_some() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::FlowId;

    #[test]
    fn same_time_events_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(10, Event::FlowStart { flow: FlowId(2) });
        q.push(5, Event::FlowStart { flow: FlowId(9) });
        q.push(10, Event::FlowStart { flow: FlowId(1) });
        q.push(10, Event::FlowStart { flow: FlowId(3) });
        let order: Vec<(u64, Event)> = std::iter::from_fn(|| q.pop()).collect();
        let flows: Vec<u32> = order
            .iter()
            .map(|(_, e)| match e {
                Event::FlowStart { flow } => flow.0,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(flows, vec![9, 2, 1, 3]);
        assert_eq!(order[0].0, 5);
    }
}
