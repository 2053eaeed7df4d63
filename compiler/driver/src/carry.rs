//! The SRAM pipelined training carries from program to program (`docs/running.md`,
//! "Training"): its forward and backward programs run one after the other on the same PEs,
//! and a kernel's array holds what the previous program's kernel on that PE left in the array
//! of the same name and length — as if one kernel held both passes. The weights (`w`,
//! `bias`), the activations the forward keeps for the backward (`xk`, `yk`, `pk`) and the
//! optimizer's state (`vw`, `vb`) stay on the fabric this way, step after step; nothing of
//! them passes through the host. [`Carry`] keeps each PE's arrays from a program's final SRAM
//! and puts them into the next program's SRAM images.

use std::collections::HashMap;

use wsel_ir::graph::{BindTarget, LayerGraph, TensorRef};
use wsel_map::Placement;
use wsel_target::Coord;

use crate::parts::{Cell, block_indices, padded_slots};
use crate::pipeline::Compiled;

/// The words of every array of every PE, by (PE, array name).
#[derive(Default)]
pub struct Carry {
    arrays: HashMap<(Coord, String), Vec<u32>>,
}

impl Carry {
    pub fn new() -> Carry {
        Carry::default()
    }

    /// Keeps every array of every PE of `placement` (compiled as `compiled`) from the final
    /// SRAM `sram(at)`, replacing what was kept for those PEs before.
    pub fn keep(
        &mut self,
        placement: &Placement,
        compiled: &Compiled,
        sram: &dyn Fn(Coord) -> Option<Vec<u8>>,
    ) -> Result<(), String> {
        for (l, placed) in placement.layers.iter().enumerate() {
            let ir = &compiled.irs[compiled.layer_kernel[l]];
            for at in pes(placed) {
                let bytes =
                    sram(at).ok_or_else(|| format!("PE ({}, {}) left no SRAM", at.x, at.y))?;
                for array in &ir.arrays {
                    let start = array.offset_words as usize * 4;
                    let end = start + array.len as usize * 4;
                    let words = bytes
                        .get(start..end)
                        .ok_or_else(|| {
                            format!(
                                "PE ({}, {}): array `{}` lies past its SRAM",
                                at.x, at.y, array.name
                            )
                        })?
                        .chunks_exact(4)
                        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                        .collect();
                    self.arrays.insert((at, array.name.clone()), words);
                }
            }
        }
        Ok(())
    }

    /// Writes what is kept into the SRAM images of `program`'s PEs (placed by `placement`,
    /// compiled as `compiled`): every array with a kept array of its name and length at its PE.
    pub fn load(
        &self,
        placement: &Placement,
        compiled: &Compiled,
        program: &mut wsel_sim::Program,
    ) {
        let index: HashMap<Coord, usize> = program
            .pes
            .iter()
            .enumerate()
            .map(|(i, pe)| (pe.at, i))
            .collect();
        for (l, placed) in placement.layers.iter().enumerate() {
            let ir = &compiled.irs[compiled.layer_kernel[l]];
            for at in pes(placed) {
                let Some(&pe) = index.get(&at) else { continue };
                let image = &mut program.pes[pe].sram_init;
                for array in &ir.arrays {
                    let Some(words) = self.arrays.get(&(at, array.name.clone())) else {
                        continue;
                    };
                    if words.len() != array.len as usize {
                        continue;
                    }
                    let start = array.offset_words as usize * 4;
                    for (k, w) in words.iter().enumerate() {
                        let at = start + 4 * k;
                        if let Some(bytes) = image.get_mut(at..at + 4) {
                            bytes.copy_from_slice(&w.to_le_bytes());
                        }
                    }
                }
            }
        }
    }

    /// The longest time between the two words of an array called `name` on any PE of
    /// `placement` (a kernel's record of a task's first and last cycle, as `pe.cycle` reads
    /// them); 0 when no PE has one.
    pub fn longest_span(&self, placement: &Placement, name: &str) -> u64 {
        placement
            .layers
            .iter()
            .flat_map(pes)
            .filter_map(|at| self.arrays.get(&(at, name.to_string())))
            .filter_map(|w| Some(u64::from(w.get(1)?.wrapping_sub(*w.first()?))))
            .max()
            .unwrap_or(0)
    }

    /// The parameter `param` of `graph` (placed by `placement`) as the kept arrays it is bound
    /// to hold it: every block read from the PEs of the layers that bind it to an array (a
    /// block several PEs hold, such as a bias every row of a region keeps, is read from each
    /// in turn; they hold the same words).
    pub fn param(
        &self,
        graph: &LayerGraph,
        placement: &Placement,
        param: usize,
    ) -> Result<Vec<u32>, String> {
        let shape = &graph.params[param].tensor.shape;
        let mut words = vec![0u32; shape.iter().product::<u64>() as usize];
        for (key, pairs) in blocks(graph, placement, param)? {
            let kept = self
                .arrays
                .get(&key)
                .ok_or_else(|| format!("no `{}` kept at PE ({}, {})", key.1, key.0.x, key.0.y))?;
            for (slot, i) in pairs {
                words[i] = kept[slot];
            }
        }
        Ok(words)
    }
}

/// A kept array (PE, name) and its (slot, index in the parameter) pairs.
type Block = ((Coord, String), Vec<(usize, usize)>);

/// Where the parameter `param` of `graph` lies in the arrays of the PEs of the layers that
/// bind it to an array.
fn blocks(graph: &LayerGraph, placement: &Placement, param: usize) -> Result<Vec<Block>, String> {
    let shape = &graph.params[param].tensor.shape;
    let mut out = Vec::new();
    for (l, placed) in placement.layers.iter().enumerate() {
        let layer = &graph.layers[placement.instance(l)];
        let imp = &layer.impls[placed.implementation];
        for (arg, name) in layer.args.iter().zip(&layer.arg_names) {
            if *arg != TensorRef::Param(param) {
                continue;
            }
            let binds = imp.binds.iter().filter(|b| b.target == BindTarget::Array);
            for bind in binds.filter(|b| b.tensor == *name) {
                for (row, col) in cells(placed) {
                    let cell = Cell {
                        row: u64::from(row),
                        col: u64::from(col),
                        rows: u64::from(placed.rows),
                        cols: u64::from(placed.cols),
                    };
                    let key = (placed.pe(row, col), bind.target_name.clone());
                    let (slots, _) = padded_slots(shape, &bind.split, cell);
                    let indices = block_indices(shape, &bind.split, cell);
                    out.push((key, slots.into_iter().zip(indices).collect()));
                }
            }
        }
    }
    if out.is_empty() {
        return Err(format!(
            "`{}` is bound to no array",
            graph.params[param].tensor.name
        ));
    }
    Ok(out)
}

/// The (row, column) of every PE of a placed layer's region.
fn cells(placed: &wsel_map::PlacedLayer) -> impl Iterator<Item = (u32, u32)> + '_ {
    (0..placed.rows).flat_map(move |row| (0..placed.cols).map(move |col| (row, col)))
}

/// Every PE of a placed layer's region.
fn pes(placed: &wsel_map::PlacedLayer) -> impl Iterator<Item = Coord> + '_ {
    cells(placed).map(|(row, col)| placed.pe(row, col))
}
