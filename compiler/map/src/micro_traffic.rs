//! What micro-batches cost in traffic with the weight store (`docs/running.md`,
//! "Micro-batches"). A batch that runs in `m` micro-batches can take its layers in one of two
//! orders:
//!
//! - **micro-batch-major** (what runs): every phase for micro-batch 0, then every phase for
//!   micro-batch 1 …, so each micro-batch streams every layer's weights again —
//!   `weights × (m − 1)` bytes more from the store than one pass;
//! - **layer-major** (DESIGN §5): each layer over every micro-batch before the next, each
//!   weight streamed once, but the micro-batches waiting their turn have no room on the
//!   fabric, so at every layer boundary their live activations leave for the store and come
//!   back — twice their bytes. Taking the micro-batches in turn forwards at one layer and
//!   backwards at the next, the last one of a layer is the first of the next and stays: `m − 1`
//!   micro-batches are parked at each boundary.
//!
//! [`MicroTraffic::of`] counts both from the graph of one micro-batch, so that the report can
//! say which moves fewer bytes.

use serde::{Deserialize, Serialize};
use wsel_ir::graph::{LayerGraph, TensorRef};

use crate::report::group;

/// The store traffic of the two orders of a batch in micro-batches, in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MicroTraffic {
    /// Every layer's streamed weights (and biases) for one pass over the layers.
    pub weight_bytes: u64,
    /// What micro-batch-major order streams beyond one pass: `weight_bytes × (m − 1)`.
    pub restream_bytes: u64,
    /// What layer-major order would move instead: the live activations of all micro-batches
    /// but one out to the store and back in at every boundary before a layer that streams
    /// weights.
    pub park_bytes: u64,
    /// The most activation bytes parked at once (`m − 1` micro-batches' at the largest
    /// boundary), which the store would hold beside the weights.
    pub parked_peak_bytes: u64,
    /// The store's room beside one copy of every layer's weights.
    pub store_free_bytes: u64,
    /// The first layer whose weights cannot stay on the fabric from one micro-batch to the
    /// next, as layer-major order needs: more than all its region's SRAM beside its working
    /// set, even spread over every PE.
    pub unheld: Option<Unheld>,
}

/// A layer whose weights do not fit its region's free SRAM.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unheld {
    pub layer: String,
    pub weight_bytes: u64,
    /// The region's SRAM beside the layer's working set, over all its PEs.
    pub room_bytes: u64,
}

impl MicroTraffic {
    /// The traffic of `micro_batches` micro-batches of the staged graph `graph` (lowered for
    /// one micro-batch), with a store of `capacity` bytes and `room[l]` bytes of SRAM free
    /// beside layer `l`'s working set on its region.
    pub fn of(graph: &LayerGraph, room: &[u64], micro_batches: u64, capacity: u64) -> MicroTraffic {
        let weights: Vec<u64> = (0..graph.layers.len())
            .map(|l| streamed_weight_bytes(graph, l))
            .collect();
        let weight_bytes: u64 = weights.iter().sum();
        // Boundaries: before every layer that streams weights, except the first such layer
        // (the phases before it take the model's inputs, as `stage_in` does today).
        let mut weighted = (0..graph.layers.len()).filter(|&l| weights[l] > 0);
        weighted.next();
        let live: Vec<u64> = weighted.map(|j| live_bytes(graph, j)).collect();
        let unheld = (0..graph.layers.len())
            .find(|&l| weights[l] > room.get(l).copied().unwrap_or(0))
            .map(|l| Unheld {
                layer: graph.layers[l].name.clone(),
                weight_bytes: weights[l],
                room_bytes: room.get(l).copied().unwrap_or(0),
            });
        let m = micro_batches.max(1);
        MicroTraffic {
            weight_bytes,
            restream_bytes: weight_bytes * (m - 1),
            park_bytes: 2 * (m - 1) * live.iter().sum::<u64>(),
            parked_peak_bytes: (m - 1) * live.iter().copied().max().unwrap_or(0),
            store_free_bytes: capacity.saturating_sub(weight_bytes),
            unheld,
        }
    }

    /// Whether layer-major order with parked activations moves fewer bytes and can run: the
    /// store holds the parked activations and every layer's weights stay on the fabric.
    pub fn parking_pays(&self) -> bool {
        self.park_bytes < self.restream_bytes && self.obstacle().is_none()
    }

    /// What keeps layer-major order from running, in words.
    fn obstacle(&self) -> Option<String> {
        if self.parked_peak_bytes > self.store_free_bytes {
            return Some(format!(
                "{} B at once, more than the {} B the store has beside the weights",
                group(self.parked_peak_bytes),
                group(self.store_free_bytes)
            ));
        }
        self.unheld.as_ref().map(|u| {
            format!(
                "`{}`'s {} B of weights cannot stay on the fabric for the next micro-batch: its \
                 region has {} B of SRAM beside its working set",
                u.layer,
                group(u.weight_bytes),
                group(u.room_bytes)
            )
        })
    }

    /// The two orders' traffic in a sentence, for the reports' micro-batch line.
    pub fn sentence(&self) -> String {
        let (restream, park) = (group(self.restream_bytes), group(self.park_bytes));
        let base = format!("the weights streamed again add {restream} B from the store");
        if self.park_bytes >= self.restream_bytes {
            return format!(
                "{base}, no more than the {park} B parking the waiting micro-batches' \
                 activations there would move"
            );
        }
        let instead = format!(
            "{base}; parking the waiting micro-batches' activations there instead would move \
             {park} B"
        );
        match self.obstacle() {
            Some(why) => format!("{instead}, but {why}"),
            None => format!(
                "{instead} ({} B at once) — fewer, but that layer-major order does not run yet",
                group(self.parked_peak_bytes)
            ),
        }
    }
}

/// Bytes of the weights layer `l` streams from the store (its parameter arguments).
fn streamed_weight_bytes(graph: &LayerGraph, l: usize) -> u64 {
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

    /// SRAM enough beside every layer to hold its weights.
    const ROOMY: [u64; 3] = [1 << 30; 3];

    #[test]
    fn an_mlp_parks_its_hidden_activations_at_each_later_dense() {
        // 64 -> 256 -> 10 with a relu between, 128 samples per micro-batch, 2 micro-batches.
        let graph = fixtures::mlp(&[64, 256, 10], 128, true);
        let traffic = MicroTraffic::of(&graph, &ROOMY, 2, 1 << 30);
        // Weights: 4 B × (64·256 + 256 + 256·10 + 10) = 76,840 B, re-streamed once more.
        assert_eq!(traffic.weight_bytes, 76_840);
        assert_eq!(traffic.restream_bytes, 76_840);
        // One boundary, before dense#2: relu#1's 128 × 256 result, 131,072 B per
        // micro-batch, out and back in for the one parked micro-batch: 2 × 131,072 B.
        assert_eq!(traffic.park_bytes, 262_144);
        assert_eq!(traffic.parked_peak_bytes, 131_072);
        assert!(!traffic.parking_pays());
        assert!(
            traffic
                .sentence()
                .contains("add 76,840 B from the store, no more than the 262,144 B"),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn wide_layers_on_few_samples_pay_for_parking() {
        // 512 -> 512 -> 512, 4 samples per micro-batch, 8 micro-batches.
        let graph = fixtures::mlp(&[512, 512, 512], 4, false);
        let traffic = MicroTraffic::of(&graph, &ROOMY, 8, 1 << 30);
        // Weights: 2 × 4 B × (512·512 + 512) = 2,101,248 B, streamed 7 more times.
        assert_eq!(traffic.restream_bytes, 7 * 2_101_248);
        // Before dense#2: dense#1's 4 × 512 result, 8,192 B per micro-batch, out and in for
        // 7 of them.
        assert_eq!(traffic.park_bytes, 2 * 7 * 8_192);
        assert_eq!(traffic.parked_peak_bytes, 7 * 8_192);
        assert!(traffic.parking_pays());
        assert!(
            traffic
                .sentence()
                .contains("would move 114,688 B (57,344 B at once) — fewer"),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn parking_that_the_store_cannot_hold_does_not_pay() {
        // As above, with a store of the weights and 50,000 B more: 57,344 B do not fit.
        let graph = fixtures::mlp(&[512, 512, 512], 4, false);
        let traffic = MicroTraffic::of(&graph, &ROOMY, 8, 2_101_248 + 50_000);
        assert_eq!(traffic.store_free_bytes, 50_000);
        assert!(!traffic.parking_pays());
        assert!(
            traffic
                .sentence()
                .contains("but 57,344 B at once, more than the 50,000 B the store has"),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn weights_larger_than_their_region_free_sram_cannot_be_held() {
        // As above; dense#2's 1,050,624 B of weights against 1,000,000 B of free SRAM.
        let graph = fixtures::mlp(&[512, 512, 512], 4, false);
        let traffic = MicroTraffic::of(&graph, &[1 << 30, 1_000_000], 8, 1 << 30);
        let unheld = traffic.unheld.clone().expect("dense#2 cannot be held");
        assert_eq!(
            (
                unheld.layer.as_str(),
                unheld.weight_bytes,
                unheld.room_bytes
            ),
            ("dense#2", 1_050_624, 1_000_000)
        );
        assert!(!traffic.parking_pays());
        assert!(
            traffic.sentence().contains(
                "would move 114,688 B, but `dense#2`'s 1,050,624 B of weights cannot stay on"
            ),
            "{}",
            traffic.sentence()
        );
    }

    #[test]
    fn one_micro_batch_moves_nothing_extra() {
        let traffic = MicroTraffic::of(&fixtures::mlp(&[8, 8, 8], 4, true), &ROOMY, 1, 1 << 30);
        assert_eq!(traffic.restream_bytes, 0);
        assert_eq!(traffic.park_bytes, 0);
    }
}
