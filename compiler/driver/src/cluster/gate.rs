//! The cluster's phase barrier. In weight streaming the store broadcasts a layer's weights to
//! every system at once, so every system starts phase `k + 1` when the slowest has finished
//! phase `k` (and the fabric has reconfigured). Each system simulates on a thread of its own
//! and stops at [`Participant::step`] after every phase; the calling thread
//! ([`coordinate`]) collects one message from every system of its process, takes the
//! maximum over every process ([`Comm::max_all`]) and answers. A failure anywhere is carried
//! by the same exchange, so every system of every process stops — none waits forever.

use std::sync::mpsc::{Receiver, Sender, channel};

use super::comm::Comm;

/// What a system tells the coordinator.
enum Message {
    /// It finished a phase that took this many cycles.
    Step(u64),
    /// It has no phases left.
    Done,
    /// It failed, or stopped because another failed.
    Failed,
}

/// One system's end of the barrier.
pub struct Participant {
    id: usize,
    to_coordinator: Sender<(usize, Message)>,
    answers: Receiver<Option<u64>>,
    finished: bool,
}

impl Participant {
    /// Waits for the cluster's slowest system: the cycles its phase took (at least `cycles`),
    /// or `None` when a system failed.
    pub fn step(&mut self, cycles: u64) -> Option<u64> {
        self.to_coordinator
            .send((self.id, Message::Step(cycles)))
            .ok()?;
        self.answers.recv().ok().flatten()
    }

    /// Says the system is done (`ok`) or failed; a participant dropped without it failed.
    pub fn finish(mut self, ok: bool) {
        self.finished = true;
        let message = if ok { Message::Done } else { Message::Failed };
        let _ = self.to_coordinator.send((self.id, message));
    }
}

impl Drop for Participant {
    fn drop(&mut self) {
        if !self.finished {
            let _ = self.to_coordinator.send((self.id, Message::Failed));
        }
    }
}

/// The coordinator's end: where the participants' messages arrive and where to answer.
pub struct Barrier {
    messages: Receiver<(usize, Message)>,
    answers: Vec<Sender<Option<u64>>>,
}

/// A barrier for `count` systems of this process, and their participants.
pub fn barrier(count: usize) -> (Barrier, Vec<Participant>) {
    let (to_coordinator, messages) = channel();
    let mut answers = Vec::new();
    let participants = (0..count)
        .map(|id| {
            let (answer, receive) = channel();
            answers.push(answer);
            Participant {
                id,
                to_coordinator: to_coordinator.clone(),
                answers: receive,
                finished: false,
            }
        })
        .collect();
    (Barrier { messages, answers }, participants)
}

/// Runs the barrier until every system of every process is done; `false` when one failed.
/// Every process calls it (one with no systems too), on the thread that may talk MPI.
pub fn coordinate(barrier: Barrier, comm: &dyn Comm) -> bool {
    let mut active = vec![true; barrier.answers.len()];
    loop {
        let mut stepping = Vec::new();
        let (mut longest, mut failed) = (0u64, false);
        let mut waiting = active.iter().filter(|a| **a).count();
        while waiting > 0 {
            let Ok((id, message)) = barrier.messages.recv() else {
                failed = true;
                break;
            };
            waiting -= 1;
            match message {
                Message::Step(cycles) => {
                    stepping.push(id);
                    longest = longest.max(cycles);
                }
                Message::Done => active[id] = false,
                Message::Failed => {
                    active[id] = false;
                    failed = true;
                }
            }
        }
        let running = u64::from(!stepping.is_empty());
        let all = comm.max_all(&[longest, u64::from(failed), running]);
        let answer = match (all[1], all[2]) {
            (0, 0) => return true,
            (0, _) => Some(all[0]),
            _ => None,
        };
        for &id in &stepping {
            let _ = barrier.answers[id].send(answer);
        }
        if answer.is_none() {
            return false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::comm::Local;

    #[test]
    fn systems_wait_for_the_slowest_and_a_failure_stops_them_all() {
        let (barrier, participants) = barrier(3);
        let seen = std::thread::scope(|scope| {
            let handles: Vec<_> = participants
                .into_iter()
                .enumerate()
                .map(|(i, mut p)| {
                    scope.spawn(move || {
                        let first = p.step(10 * (i as u64 + 1));
                        // System 2 fails after the first phase; the others step again.
                        if i == 2 {
                            p.finish(false);
                            return (first, None);
                        }
                        let second = p.step(5);
                        p.finish(second.is_some());
                        (first, second)
                    })
                })
                .collect();
            let ok = coordinate(barrier, &Local);
            assert!(!ok);
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect::<Vec<_>>()
        });
        assert_eq!(seen[0], (Some(30), None));
        assert_eq!(seen[1], (Some(30), None));
        assert_eq!(seen[2], (Some(30), None));
    }

    #[test]
    fn systems_with_fewer_phases_leave_and_the_rest_go_on() {
        let (barrier, participants) = barrier(2);
        let seen = std::thread::scope(|scope| {
            let handles: Vec<_> = participants
                .into_iter()
                .enumerate()
                .map(|(i, mut p)| {
                    scope.spawn(move || {
                        let steps: Vec<_> = (0..=i).map(|k| p.step(7 + k as u64)).collect();
                        p.finish(true);
                        steps
                    })
                })
                .collect();
            assert!(coordinate(barrier, &Local));
            handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect::<Vec<_>>()
        });
        assert_eq!(seen[0], vec![Some(7)]);
        assert_eq!(seen[1], vec![Some(7), Some(8)]);
    }
}
