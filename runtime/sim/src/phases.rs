//! Weight-store phases: the store serves its streams layer by layer.
//!
//! The weight streams' distinct `phase` values, in ascending order, are the *groups*. Group 0
//! is requested at build time. Group `j + 1` is requested once every non-empty stream of the
//! groups up to `j` has entered the fabric completely: each of its streams at
//! `max(start, e + 1)`, where `e` is the cycle the last of those wavelets entered (`start`
//! alone if none did), and moves from `weight_store.latency_cycles` later, sharing the store's
//! bandwidth with the streams of its own group only.
//!
//! A partition counts the streams of each group it completed locally. With one partition
//! that is the whole picture, and the next group is requested in the same cycle. With several,
//! partitions exchange their counts after every window and request the next group together;
//! the window is then at most `latency_cycles + 1` cycles long, so a group requested after
//! the window in which the previous one completed still starts moving in time.

use crate::fabric::Source;
use crate::pacer::Pacer;
use crate::program::{EdgeSource, Program};
use wsel_target::Target;

/// Progress of one group: streams whose last wavelet has entered, and the latest cycle one
/// did.
pub(crate) type Progress = (u32, Option<u64>);

/// The weight phases as one partition sees them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Phases {
    /// The distinct `phase` values of the weight streams, ascending: the groups.
    pub values: Vec<u32>,
    /// Per group: its weight streams in the whole program (the store's bandwidth is shared
    /// among them).
    pub streams: Vec<u32>,
    /// Per group: its non-empty weight streams in the whole program.
    pub nonempty: Vec<u32>,
    /// Per group: the partition's sources in it.
    pub members: Vec<Vec<u32>>,
    /// Per group: the partition's streams whose last wavelet has entered, and the latest
    /// cycle one did.
    pub done: Vec<u32>,
    pub last: Vec<Option<u64>>,
    /// Groups requested so far (always a prefix).
    pub requested: usize,
    /// The cycle the last wavelet of the complete groups entered.
    pub end: Option<u64>,
    /// The partition is the only one: advance as soon as a group completes.
    pub local: bool,
    /// The store's bandwidth, and its latency less `Program::weight_store_warm`.
    pub pool: u32,
    pub latency: u64,
}

impl Phases {
    /// The phases of `program` on `target`, before any stream is requested; `local` when
    /// there is one partition.
    pub(crate) fn of(program: &Program, target: &Target, local: bool) -> Phases {
        let weights = || {
            program
                .inputs
                .iter()
                .filter(|i| i.source == EdgeSource::WeightStore)
        };
        let mut values: Vec<u32> = weights().map(|i| i.phase).collect();
        values.sort_unstable();
        values.dedup();
        let groups = values.len();
        let mut phases = Phases {
            values,
            streams: vec![0; groups],
            nonempty: vec![0; groups],
            members: vec![Vec::new(); groups],
            done: vec![0; groups],
            last: vec![None; groups],
            requested: 0,
            end: None,
            local,
            pool: target.weight_store.bandwidth_bytes_per_cycle,
            latency: u64::from(target.weight_store.latency_cycles)
                .saturating_sub(program.weight_store_warm),
        };
        for i in weights() {
            let g = phases.group_of(i.phase) as usize;
            phases.streams[g] += 1;
            phases.nonempty[g] += u32::from(!i.data.is_empty());
        }
        phases
    }

    /// The group of weight phase `phase`.
    pub(crate) fn group_of(&self, phase: u32) -> u32 {
        self.values.partition_point(|&g| g < phase) as u32
    }

    /// Whether some group still waits to be requested.
    pub(crate) fn pending(&self) -> bool {
        self.requested < self.streams.len()
    }

    /// A weight stream of group `g` had its last wavelet enter at cycle `t`.
    pub(crate) fn stream_done(&mut self, g: u32, t: u64) {
        let g = g as usize;
        self.done[g] += 1;
        self.last[g] = self.last[g].max(Some(t));
    }

    /// Request every group whose predecessors are complete, given the whole program's
    /// progress per group (`(streams done, latest last entry)`). The sources' wake cycles go
    /// to `wakes` as (source, cycle).
    pub(crate) fn advance(
        &mut self,
        progress: &dyn Fn(usize) -> Progress,
        program: &Program,
        sources: &mut [Source],
        wakes: &mut Vec<(u32, u64)>,
    ) {
        while self.pending() {
            if let Some(g) = self.requested.checked_sub(1) {
                let (done, last) = progress(g);
                if done < self.nonempty[g] {
                    return;
                }
                self.end = self.end.max(last);
            }
            let j = self.requested;
            self.requested += 1;
            for &s in &self.members[j] {
                let src = &mut sources[s as usize];
                let start = program.inputs[src.input as usize].start;
                let requested = self.end.map_or(start, |e| start.max(e + 1));
                let moving = requested + self.latency;
                src.requested = requested;
                src.waiting = false;
                src.pacer = Pacer::new(self.pool, self.streams[j] as usize, moving);
                wakes.push((s, moving));
            }
        }
    }

    /// [`Phases::advance`] on this partition's own progress (the only partition).
    pub(crate) fn advance_local(
        &mut self,
        program: &Program,
        sources: &mut [Source],
        wakes: &mut Vec<(u32, u64)>,
    ) {
        let progress: Vec<Progress> = self
            .done
            .iter()
            .copied()
            .zip(self.last.iter().copied())
            .collect();
        self.advance(&|g| progress[g], program, sources, wakes);
    }
}
