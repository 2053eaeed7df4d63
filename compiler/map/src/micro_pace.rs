//! The two micro-batch orders in cycles (`docs/running.md`, "Micro-batches"): what binds a
//! phase of micro-batch-major order, and which order the estimate says is faster. `auto`
//! chooses by cycles when the store's bandwidth binds no phase — streaming the weights again
//! then costs no time, and moving fewer bytes buys nothing — and by bytes when it binds one.

use wsel_ir::graph::LayerGraph;

use crate::micro_traffic::{MicroTraffic, streamed_weight_bytes};
use crate::placement::Placement;
use crate::report::group;

/// The first phase of `placement` (micro-batch-major weight streaming of `graph`, lowered for
/// one micro-batch) whose weights take at least as long to come from a store of
/// `bytes_per_cycle` as its work for the micro-batch, in words; `None` when the store binds
/// no phase.
pub(crate) fn store_bound(
    graph: &LayerGraph,
    placement: &Placement,
    bytes_per_cycle: u64,
) -> Option<String> {
    placement.layers.iter().find_map(|placed| {
        let bytes = streamed_weight_bytes(graph, placed.phase as usize);
        let cycles = bytes.div_ceil(bytes_per_cycle.max(1));
        let work = placed.estimate.batch_compute;
        (bytes > 0 && cycles >= work).then(|| {
            format!(
                "`{}`'s {} B of weights take {} cycles from the store, its work {}",
                placed.name,
                group(bytes),
                group(cycles),
                group(work)
            )
        })
    })
}

impl MicroTraffic {
    /// Whether `auto` chooses by cycles: both orders' estimates are known and the store's
    /// bandwidth binds no phase.
    pub(crate) fn by_cycles(&self) -> bool {
        self.store_bound.is_none() && self.layer_cycles.is_some()
    }

    /// Whether layer-major order is the one `auto` runs: it can run, and it takes fewer
    /// estimated cycles ([`MicroTraffic::by_cycles`]) or else moves fewer bytes.
    pub fn layer_major_pays(&self) -> bool {
        match self.layer_cycles {
            Some(layer) if self.by_cycles() => {
                layer < self.micro_cycles && self.obstacle().is_none()
            }
            _ => self.parking_pays(),
        }
    }

    /// The two orders' estimated cycles when `auto` chooses by them, in words.
    pub(crate) fn cycles_note(&self) -> Option<String> {
        let layer = self.layer_cycles.filter(|_| self.by_cycles())?;
        Some(format!(
            "estimated {} cycles layer-major against {} micro-batch-major, the store's \
             bandwidth binding no phase",
            group(layer),
            group(self.micro_cycles)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures of 1,024 samples of 768 → 4 → 4 on dev (streaming_models.rs): parking
    /// moves fewer bytes, micro-batch-major order takes fewer estimated cycles.
    fn wide() -> MicroTraffic {
        MicroTraffic {
            weight_bytes: 12_384,
            restream_bytes: 37_152,
            layer_micro_batches: 8,
            park_bytes: 28_672,
            parked_peak_bytes: 14_336,
            store_free_bytes: 1 << 30,
            micro_cycles: 224_508,
            layer_cycles: Some(288_224),
            ..MicroTraffic::default()
        }
    }

    #[test]
    fn with_the_store_free_the_fewer_cycles_win() {
        let traffic = wide();
        assert!(traffic.by_cycles() && !traffic.layer_major_pays());
        // Layer-major faster by the estimate runs though it moved more bytes.
        let faster = MicroTraffic {
            layer_cycles: Some(200_000),
            park_bytes: 40_000,
            ..wide()
        };
        assert!(faster.layer_major_pays());
        assert_eq!(
            faster.cycles_note().as_deref(),
            Some(
                "estimated 200,000 cycles layer-major against 224,508 micro-batch-major, the \
                 store's bandwidth binding no phase"
            )
        );
    }

    #[test]
    fn where_the_store_binds_the_fewer_bytes_win() {
        let bound = MicroTraffic {
            store_bound: Some("`dense#1`'s ...".into()),
            ..wide()
        };
        assert!(!bound.by_cycles() && bound.cycles_note().is_none());
        assert!(bound.layer_major_pays());
        let ran = MicroTraffic {
            layer_major: true,
            ..bound
        };
        assert!(
            ran.sentence().ends_with(
                "fewer than the 37,152 B micro-batch-major order would stream again, and the \
                 store's bandwidth binds (`dense#1`'s ...)"
            ),
            "{}",
            ran.sentence()
        );
        // Without layer-major's estimate (it did not map) the bytes decide too.
        let unmapped = MicroTraffic {
            layer_cycles: None,
            ..wide()
        };
        assert!(!unmapped.by_cycles() && unmapped.layer_major_pays());
    }
}
