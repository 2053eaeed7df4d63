//! The activations a weight-streaming run keeps in SRAM between its phases
//! (`docs/running.md`, "Weight streaming").
//!
//! When a phase ends, the layer's resident result — the block of its output array on every
//! PE of the region — is what the fabric's SRAM holds; the next phases run on the same PEs, and
//! a layer that takes that result binds it to an array of its own kernel. Nothing moves: the
//! consumer's array is the producer's words at the same PE (its kernel addresses them under
//! another name), so [`Resident`] keeps each PE's words and puts them into the consumer's SRAM
//! image where its array lies. The mapper has checked that producer and consumer split the
//! tensor the same way on the same region (E0611), so the blocks are the same.
//!
//! With per-layer rows the phases' regions share their north-west corner and columns, and a
//! relayout phase (`std.resident`'s `relayout`) runs on the larger of its two row counts: its
//! input lies on the first `from_rows` rows, its result on the first `to_rows`
//! (`LayerInstance::row_move`). A PE below the rows a result lies on holds no block of it.

use std::collections::HashMap;

use wsel_ir::graph::{BindTarget, LayerImpl, LayerInstance, TensorRef};
use wsel_ir::kernel::KernelIr;
use wsel_map::PlacedLayer;
use wsel_target::Coord;

use crate::parts::{Cell, block_indices};

/// Resident results by (graph layer, PE), as words of the output array's block.
#[derive(Default)]
pub struct Resident {
    blocks: HashMap<(usize, Coord), Vec<u32>>,
    /// The rows of its region each kept result lies on.
    rows: HashMap<usize, u32>,
}

impl Resident {
    pub fn new() -> Resident {
        Resident::default()
    }

    /// Keeps the resident result of graph layer `l` (placed as `placed`, running `ir`), read
    /// from the final SRAM `sram(at)` of each of its PEs; nothing when its result is not
    /// resident.
    pub fn keep(
        &mut self,
        l: usize,
        layer: &LayerInstance,
        placed: &PlacedLayer,
        ir: &KernelIr,
        sram: &dyn Fn(Coord) -> Option<Vec<u8>>,
    ) -> Result<(), String> {
        let imp = &layer.impls[placed.implementation];
        let Some((array, split)) = resident_array(imp, ir, &layer.output_name) else {
            return Ok(());
        };
        let rows = layer.row_move().map_or(placed.rows, |(_, to)| to);
        self.rows.insert(l, rows);
        for row in 0..rows {
            for col in 0..placed.cols {
                let cell = Cell {
                    rows: u64::from(rows),
                    ..cell(placed, row, col)
                };
                let len = block_indices(&layer.output_shape, split, cell).len();
                let at = placed.pe(row, col);
                let bytes = sram(at).unwrap_or_default();
                let start = array.offset_words as usize * 4;
                let words: Vec<u32> = bytes
                    .get(start..start + len * 4)
                    .ok_or_else(|| {
                        format!(
                            "`{}`: PE ({}, {}) has no result block of {len} words in `{}`",
                            layer.name, at.x, at.y, array.name
                        )
                    })?
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                self.blocks.insert((l, at), words);
            }
        }
        Ok(())
    }

    /// Writes into the SRAM `image` of the PE at `at` (logical `cell` of `layer`'s region) the
    /// resident blocks of the layer's activation inputs bound to arrays.
    pub fn load(
        &self,
        image: &mut [u32],
        ir: &KernelIr,
        imp: &LayerImpl,
        layer: &LayerInstance,
        cell: Cell,
        at: Coord,
    ) -> Result<(), String> {
        for (arg, name) in layer.args.iter().zip(&layer.arg_names) {
            let TensorRef::Layer(p) = *arg else { continue };
            let Some((array, _)) = resident_array(imp, ir, name) else {
                continue;
            };
            let beyond = self.rows.get(&p).is_some_and(|&r| cell.row >= u64::from(r));
            if beyond {
                continue;
            }
            let block = self.blocks.get(&(p, at)).ok_or_else(|| {
                format!(
                    "`{}`: no resident `{name}` at PE ({}, {}), row {} column {} of its region",
                    layer.name, at.x, at.y, cell.row, cell.col
                )
            })?;
            let start = array.offset_words as usize;
            image
                .get_mut(start..start + block.len())
                .ok_or_else(|| format!("`{}`: array `{}` is too short", layer.name, array.name))?
                .copy_from_slice(block);
        }
        Ok(())
    }

    /// Keeps graph layer `from`'s resident result as layer `to`'s too: `to` passes it on where
    /// it lies (a parking phase that a micro-batch staying on the fabric skips).
    pub fn alias(&mut self, from: usize, to: usize) {
        let blocks: Vec<_> = self
            .blocks
            .iter()
            .filter(|((l, _), _)| *l == from)
            .map(|((_, at), words)| ((to, *at), words.clone()))
            .collect();
        self.blocks.extend(blocks);
        if let Some(&rows) = self.rows.get(&from) {
            self.rows.insert(to, rows);
        }
    }

    /// Drops the resident result of graph layer `l` once nothing needs it any more.
    pub fn release(&mut self, l: usize) {
        self.blocks.retain(|(layer, _), _| *layer != l);
        self.rows.remove(&l);
    }
}

/// The kernel array a tensor named `name` is bound to, with the bind's split.
fn resident_array<'a>(
    imp: &'a LayerImpl,
    ir: &'a KernelIr,
    name: &str,
) -> Option<(&'a wsel_ir::kernel::Array, &'a [wsel_ir::graph::SplitAxis])> {
    let bind = imp
        .binds
        .iter()
        .find(|b| b.target == BindTarget::Array && b.tensor == name)?;
    let array = ir.arrays.iter().find(|a| a.name == bind.target_name)?;
    Some((array, bind.split.as_slice()))
}

fn cell(placed: &PlacedLayer, row: u32, col: u32) -> Cell {
    Cell {
        row: u64::from(row),
        col: u64::from(col),
        rows: u64::from(placed.rows),
        cols: u64::from(placed.cols),
    }
}
