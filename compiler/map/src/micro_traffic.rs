//! What micro-batches cost in traffic with the weight store, and which order runs
//! (`docs/running.md`, "Micro-batches"). A batch that runs in micro-batches can take its
//! layers in one of two orders:
//!
//! - **micro-batch-major**: every phase for micro-batch 0, then every phase for micro-batch
//!   1 …, so each of its `m` micro-batches streams every layer's weights again —
//!   `weights × (m − 1)` bytes more from the store than one pass;
//! - **layer-major** (DESIGN §5): each layer over every micro-batch before the next, each
//!   weight streamed once and held on the fabric for the layer's later micro-batches (a
//!   streaming implementation with `hold = true`), while the micro-batches waiting their turn
//!   have no room on the fabric: at every boundary before a layer with weights their live
//!   activations leave for the store and come back — twice their bytes. Taking the
//!   micro-batches in turn forwards at one layer and backwards at the next, the last one of a
//!   layer is the first of the next and stays: `m' − 1` of its `m'` micro-batches are parked
//!   at each boundary. Held weights take SRAM, so `m'` may exceed `m`.
//!
//! [`MicroTraffic::of`] counts both; `auto` runs layer-major order whenever it can run, and
//! the report shows both orders' estimated cycles (`crate::micro_pace`).

use serde::{Deserialize, Serialize};
use wsel_ir::graph::{LayerGraph, TensorRef};

use crate::report::group;

/// The order of a batch's micro-batches: asked for (`--micro-order`), or run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MicroOrder {
    /// Layer-major order where it can run (DESIGN §5), else micro-batch-major.
    #[default]
    Auto,
    /// Every phase for one micro-batch, then the next.
    Micro,
    /// Every micro-batch at one layer, then the next layer.
    Layer,
}

/// The store traffic of the two orders of a batch in micro-batches, in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MicroTraffic {
    /// Every layer's streamed weights (and biases) for one pass over the layers.
    pub weight_bytes: u64,
    /// What micro-batch-major order streams beyond one pass: `weight_bytes × (m − 1)`.
    pub restream_bytes: u64,
    /// The micro-batches layer-major order runs in (its own size, with the weights held);
    /// micro-batch-major's count when it cannot run.
    pub layer_micro_batches: u64,
    /// What layer-major order moves instead: the live activations of all micro-batches but
    /// one out to the store and back in at every boundary before a layer that streams
    /// weights.
    pub park_bytes: u64,
    /// The most activation bytes parked at once (`m' − 1` micro-batches' at the largest
    /// boundary), which the store holds beside the weights.
    pub parked_peak_bytes: u64,
    /// The store's room beside one copy of every layer's weights.
    pub store_free_bytes: u64,
    /// Why layer-major order cannot run: a layer whose weights cannot stay on the fabric
    /// between micro-batches, with the bytes.
    pub unheld: Option<String>,
    /// Micro-batch-major order's estimated cycles.
    #[serde(default)]
    pub micro_cycles: u64,
    /// Layer-major order's estimated cycles, when it maps.
    #[serde(default)]
    pub layer_cycles: Option<u64>,
    /// The order asked for.
    #[serde(default)]
    pub asked: MicroOrder,
    /// Whether layer-major order runs.
    #[serde(default)]
    pub layer_major: bool,
    /// The layers layer-major order runs in chunks of their outputs, their weights too big to
    /// hold at once (`crate::held_fit::chunk_counts`).
    #[serde(default)]
    pub chunks: Vec<ChunkedLayer>,
}

/// A layer that layer-major order runs in `count` chunks of its outputs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkedLayer {
    pub layer: String,
    pub count: u32,
}

impl MicroTraffic {
    /// The traffic of `micro_batches` micro-batches of the staged graph `graph` (lowered for
    /// one micro-batch) in either order, with a store of `capacity` bytes.
    pub fn of(graph: &LayerGraph, micro_batches: u64, capacity: u64) -> MicroTraffic {
        let weight_bytes: u64 = (0..graph.layers.len())
            .map(|l| streamed_weight_bytes(graph, l))
            .sum();
        let m = micro_batches.max(1);
        let mut traffic = MicroTraffic {
            weight_bytes,
            restream_bytes: weight_bytes * (m - 1),
            store_free_bytes: capacity.saturating_sub(weight_bytes),
            ..MicroTraffic::default()
        };
        traffic.park(graph, m);
        traffic
    }

    /// Counts layer-major order's parking for `micro_batches` micro-batches of `graph`.
    pub fn park(&mut self, graph: &LayerGraph, micro_batches: u64) {
        let weighted: Vec<usize> = (0..graph.layers.len())
            .filter(|&l| streamed_weight_bytes(graph, l) > 0)
            .collect();
        // Boundaries: before every layer that streams weights, except the first such layer
        // (the phases before it take the model's inputs, as `stage_in` does).
        let live: Vec<u64> = weighted
            .iter()
            .skip(1)
            .map(|&j| live_bytes(graph, j))
            .collect();
        let m = micro_batches.max(1);
        self.layer_micro_batches = m;
        self.park_bytes = 2 * (m - 1) * live.iter().sum::<u64>();
        self.parked_peak_bytes = (m - 1) * live.iter().copied().max().unwrap_or(0);
    }

    /// What keeps layer-major order from running, in words.
    pub fn obstacle(&self) -> Option<String> {
        if self.parked_peak_bytes > self.store_free_bytes {
            return Some(format!(
                "{} B at once, more than the {} B the store has beside the weights",
                group(self.parked_peak_bytes),
                group(self.store_free_bytes)
            ));
        }
        self.unheld
            .as_ref()
            .map(|why| format!("held between micro-batches the weights do not fit: {why}"))
    }

    /// The chunked layers, for the sentence: ` (`dense#1` in 2 chunks of its outputs, …)`.
    fn chunks_note(&self) -> String {
        if self.chunks.is_empty() {
            return String::new();
        }
        let each: Vec<String> = self
            .chunks
            .iter()
            .map(|c| format!("`{}` in {} chunks of its outputs", c.layer, c.count))
            .collect();
        format!(
            " ({}, too big to hold whole: each chunk's weights held over every micro-batch \
             before the next chunk's stream in, its input parked and unparked once a chunk)",
            each.join(", ")
        )
    }

    /// The two orders' traffic and the order that runs, in a sentence, for the reports'
    /// micro-batch line; with both orders' estimated cycles where known.
    pub fn sentence(&self) -> String {
        let (restream, park) = (group(self.restream_bytes), group(self.park_bytes));
        let at_once = group(self.parked_peak_bytes);
        let cycles = self
            .cycles_note()
            .map(|n| format!("; {n}"))
            .unwrap_or_default();
        if self.layer_major {
            return format!(
                "layer-major order runs, in {} micro-batches{}: each weight streams once ({} B), \
                 and parking the waiting micro-batches' activations in the store moves {park} B \
                 ({at_once} B at once) — {}{cycles}",
                self.layer_micro_batches,
                self.chunks_note(),
                group(self.weight_bytes),
                self.layer_major_why(),
            );
        }
        let why = match self.obstacle() {
            Some(why) if self.asked != MicroOrder::Micro => format!("but {why}"),
            _ => "but micro-batch-major order was asked for".to_string(),
        };
        format!(
            "the weights streamed again add {restream} B from the store; parking the waiting \
             micro-batches' activations there instead would move {park} B ({at_once} B at once), \
             {why}{cycles}: micro-batch-major order runs"
        )
    }
}

/// Bytes of the weights layer `l` streams from the store (its parameter arguments).
pub(crate) fn streamed_weight_bytes(graph: &LayerGraph, l: usize) -> u64 {
    graph.layers[l]
        .args
        .iter()
        .filter_map(|arg| match *arg {
            TensorRef::Param(p) => graph.params.get(p),
            _ => None,
        })
        .map(|p| 4 * p.tensor.shape.iter().product::<u64>())
        .sum()
}

/// Bytes of one micro-batch's activations live across the boundary before layer `j`: the
/// results of the layers before it that it or a later layer (or the host) takes.
fn live_bytes(graph: &LayerGraph, j: usize) -> u64 {
    let taken_from = |p: usize| {
        let by_layer = graph.layers[j..]
            .iter()
            .any(|layer| layer.args.contains(&TensorRef::Layer(p)));
        by_layer || graph.output == TensorRef::Layer(p)
    };
    (0..j)
        .filter(|&p| taken_from(p))
        .map(|p| 4 * graph.layers[p].output_shape.iter().product::<u64>())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures;

    #[test]
    fn an_mlp_parks_its_hidden_activations_at_each_later_dense() {
        // 64 -> 256 -> 10 with a relu between, 128 samples per micro-batch, 2 micro-batches.
        let graph = fixtures::mlp(&[64, 256, 10], 128, true);
        let mut traffic = MicroTraffic::of(&graph, 2, 1 << 30);
        // Weights: 4 B × (64·256 + 256 + 256·10 + 10) = 76,840 B, re-streamed once more.
        assert_eq!(traffic.weight_bytes, 76_840);
        assert_eq!(traffic.restream_bytes, 76_840);
        // One boundary, before dense#2: relu#1's 128 × 256 result, 131,072 B per
        // micro-batch, out and back in for the one parked micro-batch: 2 × 131,072 B.
        assert_eq!(traffic.park_bytes, 262_144);
        assert_eq!(traffic.parked_peak_bytes, 131_072);
        traffic.layer_major = true;
        assert!(
            traffic.sentence().contains(
                "moves 262,144 B (131,072 B at once) — the default order; micro-batch-major \
                 order (`--micro-order micro`) would stream 76,840 B of weights again"
            ),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn wide_layers_on_few_samples_pay_for_parking() {
        // 512 -> 512 -> 512, 4 samples per micro-batch, 8 micro-batches.
        let graph = fixtures::mlp(&[512, 512, 512], 4, false);
        let mut traffic = MicroTraffic::of(&graph, 8, 1 << 30);
        // Weights: 2 × 4 B × (512·512 + 512) = 2,101,248 B, streamed 7 more times.
        assert_eq!(traffic.restream_bytes, 7 * 2_101_248);
        // Before dense#2: dense#1's 4 × 512 result, 8,192 B per micro-batch, out and in for
        // 7 of them.
        assert_eq!(traffic.park_bytes, 2 * 7 * 8_192);
        assert_eq!(traffic.parked_peak_bytes, 7 * 8_192);
        assert!(traffic.obstacle().is_none());
        traffic.layer_major = true;
        assert!(
            traffic.sentence().contains(
                "layer-major order runs, in 8 micro-batches: each weight streams once \
                 (2,101,248 B), and parking the waiting micro-batches' activations in the store \
                 moves 114,688 B (57,344 B at once) — the default order; micro-batch-major \
                 order (`--micro-order micro`) would stream 14,708,736 B of weights again"
            ),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn parking_that_the_store_cannot_hold_does_not_pay() {
        // As above, with a store of the weights and 50,000 B more: 57,344 B do not fit.
        let graph = fixtures::mlp(&[512, 512, 512], 4, false);
        let traffic = MicroTraffic::of(&graph, 8, 2_101_248 + 50_000);
        assert_eq!(traffic.store_free_bytes, 50_000);
        assert!(traffic.obstacle().is_some());
        assert!(
            traffic.sentence().contains(
                "but 57,344 B at once, more than the 50,000 B the store has beside the \
                 weights: micro-batch-major order runs"
            ),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn weights_that_cannot_be_held_keep_micro_batch_major_order() {
        let graph = fixtures::mlp(&[512, 512, 512], 4, false);
        let mut traffic = MicroTraffic::of(&graph, 8, 1 << 30);
        traffic.unheld = Some("`dense#2` needs 9,000 bytes".into());
        assert!(traffic.obstacle().is_some());
        assert!(
            traffic.sentence().contains(
                "would move 114,688 B (57,344 B at once), but held between micro-batches the weights do not fit: \
                 `dense#2` needs 9,000 bytes: micro-batch-major order runs"
            ),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn layer_major_in_more_micro_batches_parks_more() {
        // As above, layer-major in 16 micro-batches of 2: 15 parked, 4,096 B each.
        let graph = fixtures::mlp(&[512, 512, 512], 4, false);
        let mut traffic = MicroTraffic::of(&graph, 8, 1 << 30);
        traffic.park(&fixtures::mlp(&[512, 512, 512], 2, false), 16);
        assert_eq!(
            (traffic.layer_micro_batches, traffic.park_bytes),
            (16, 2 * 15 * 4_096)
        );
    }

    #[test]
    fn one_micro_batch_moves_nothing_extra() {
        let traffic = MicroTraffic::of(&fixtures::mlp(&[8, 8, 8], 4, true), 1, 1 << 30);
        assert_eq!(traffic.restream_bytes, 0);
        assert_eq!(traffic.park_bytes, 0);
    }
}
