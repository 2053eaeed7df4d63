//! The writer's side of the trace: the partitions' chunks come in, in whatever order the
//! threads send them; the events come out in the order of [`Event`], each as soon as no
//! partition can send an earlier one. The output therefore does not depend on how the fabric
//! was partitioned or how the threads were scheduled, and the events held here are only those
//! between the slowest partition's horizon and the fastest one's.

use super::Event;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::mpsc::Receiver;

/// Events of one partition, and its horizon: every event it sends later is at or after it.
pub(crate) struct Chunk {
    pub part: u32,
    pub horizon: u64,
    pub events: Vec<Event>,
}

/// The merge of all partitions' chunks, as an iterator over the events in order.
pub(crate) struct Merge {
    rx: Receiver<Chunk>,
    horizons: Vec<u64>,
    /// Events before this cycle can be let out: the least horizon.
    ready_before: u64,
    heap: BinaryHeap<Reverse<Event>>,
    /// Every recorder has hung up.
    done: bool,
}

impl Merge {
    pub(crate) fn new(rx: Receiver<Chunk>, parts: usize) -> Merge {
        Merge {
            rx,
            horizons: vec![0; parts],
            ready_before: 0,
            heap: BinaryHeap::new(),
            done: false,
        }
    }

    fn take(&mut self, chunk: Chunk) {
        self.heap.extend(chunk.events.into_iter().map(Reverse));
        if let Some(h) = self.horizons.get_mut(chunk.part as usize) {
            *h = (*h).max(chunk.horizon);
        }
        self.ready_before = self.horizons.iter().copied().min().unwrap_or(u64::MAX);
    }
}

impl Iterator for Merge {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(Reverse(e)) = self.heap.peek()
                && (self.done || e.ts < self.ready_before)
            {
                return self.heap.pop().map(|Reverse(e)| e);
            }
            if self.done {
                return None;
            }
            match self.rx.recv() {
                Ok(chunk) => self.take(chunk),
                // Every recorder is closed, or dropped after a failed run.
                Err(_) => self.done = true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Kind;
    use std::sync::mpsc::sync_channel;

    fn slice(ts: u64, track: u32) -> Event {
        Event {
            ts,
            kind: Kind::Slice,
            track,
            what: 0,
            value: 1,
        }
    }

    #[test]
    fn events_come_out_in_order_whatever_the_chunks() {
        let expected: Vec<Event> = (0..60).map(|i| slice(i / 2, (i % 2) as u32)).collect();
        // Partition 0 has the even tracks, partition 1 the odd ones, each sent in chunks of
        // its own size, reversed within a chunk, the two interleaved; the channel holds no
        // chunk, so the merge lets events out while later chunks are still to come.
        for (a, b) in [(3, 7), (10, 1), (20, 20)] {
            let chunks = |part: u32, size: usize| -> Vec<Chunk> {
                let mine: Vec<Event> = expected
                    .iter()
                    .copied()
                    .filter(|e| e.track == part)
                    .collect();
                mine.chunks(size)
                    .map(|c| Chunk {
                        part,
                        horizon: c.last().map_or(0, |e| e.ts),
                        events: c.iter().rev().copied().collect(),
                    })
                    .collect()
            };
            let (mut first, mut second) = (chunks(0, a).into_iter(), chunks(1, b).into_iter());
            let (tx, rx) = sync_channel(0);
            let sender = std::thread::spawn(move || {
                loop {
                    let (x, y) = (first.next(), second.next());
                    if x.is_none() && y.is_none() {
                        break;
                    }
                    for chunk in x.into_iter().chain(y) {
                        tx.send(chunk).expect("send");
                    }
                }
            });
            let got: Vec<Event> = Merge::new(rx, 2).collect();
            sender.join().expect("sender");
            assert_eq!(got, expected, "chunks of {a} and {b}");
        }
    }
}
