//! The two micro-batch orders in cycles (`docs/running.md`, "Micro-batches"): why the order
//! that runs does, and what the other would cost by the estimate. `auto` runs layer-major
//! order whenever it can run (DESIGN §5: each layer over every micro-batch before its weights
//! are dropped), faster or not; the report then shows both orders' estimated cycles, so a
//! user sees what `--micro-order micro` would take.

use crate::micro_traffic::{MicroOrder, MicroTraffic};
use crate::report::group;

impl MicroTraffic {
    /// Why layer-major order runs, in words: asked for, or the default, with the bytes
    /// micro-batch-major order would stream again.
    pub(crate) fn layer_major_why(&self) -> String {
        match self.asked {
            MicroOrder::Layer => "asked for".to_string(),
            _ => format!(
                "the default order; micro-batch-major order (`--micro-order micro`) would \
                 stream {} B of weights again",
                group(self.restream_bytes)
            ),
        }
    }

    /// The two orders' estimated cycles, in words, when layer-major order mapped.
    pub(crate) fn cycles_note(&self) -> Option<String> {
        let layer = self.layer_cycles?;
        Some(format!(
            "estimated {} cycles layer-major against {} micro-batch-major",
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
    fn by_default_layer_major_runs_and_shows_what_the_other_order_costs() {
        let ran = MicroTraffic {
            layer_major: true,
            ..wide()
        };
        assert_eq!(
            ran.sentence(),
            "layer-major order runs, in 8 micro-batches: each weight streams once (12,384 B), \
             and parking the waiting micro-batches' activations in the store moves 28,672 B \
             (14,336 B at once) — the default order; micro-batch-major order (`--micro-order \
             micro`) would stream 37,152 B of weights again; estimated 288,224 cycles \
             layer-major against 224,508 micro-batch-major"
        );
        let asked = MicroTraffic {
            asked: MicroOrder::Layer,
            ..ran
        };
        assert!(
            asked.sentence().ends_with(
                "(14,336 B at once) — asked for; estimated 288,224 cycles layer-major against \
                 224,508 micro-batch-major"
            ),
            "{}",
            asked.sentence()
        );
    }

    #[test]
    fn micro_batch_major_runs_where_asked_for_or_where_layer_major_cannot() {
        // Asked for: layer-major was not mapped, so its cycles are not known.
        let asked = MicroTraffic {
            asked: MicroOrder::Micro,
            layer_cycles: None,
            ..wide()
        };
        assert!(asked.cycles_note().is_none());
        assert!(
            asked.sentence().ends_with(
                "would move 28,672 B (14,336 B at once), but micro-batch-major order was asked \
                 for: micro-batch-major order runs"
            ),
            "{}",
            asked.sentence()
        );
        // By default, where the store cannot hold the parked activations beside the weights.
        let full = MicroTraffic {
            store_free_bytes: 10_000,
            ..wide()
        };
        assert!(
            full.sentence().ends_with(
                "but 14,336 B at once, more than the 10,000 B the store has beside the weights; \
                 estimated 288,224 cycles layer-major against 224,508 micro-batch-major: \
                 micro-batch-major order runs"
            ),
            "{}",
            full.sentence()
        );
    }
}
