//! The weights a layer holds on the fabric between its micro-batches in layer-major order
//! (`docs/running.md`, "Micro-batches"). A streaming implementation with `hold = true`
//! (std.nn's `dense_resident`) keeps every weight block it takes in arrays named `held_*`,
//! and marks them held; the layer's later micro-batches run the same kernel on the same PEs
//! and find those arrays as the first micro-batch left them, so they stream nothing. Between
//! two phases of the layer nothing moves: [`HeldWeights`] keeps each PE's `held_*` words from
//! the end of the first phase and puts them back into the next phase's SRAM image at the same
//! place.

use std::collections::HashMap;

use wsel_ir::kernel::KernelIr;
use wsel_sim::Program;
use wsel_target::Coord;

/// Each PE's `held_*` arrays, as (offset in words, words).
#[derive(Default)]
pub struct HeldWeights {
    arrays: HashMap<Coord, Vec<(usize, Vec<u32>)>>,
}

impl HeldWeights {
    /// The `held_*` arrays of `ir` on every PE of `pes`, read from their final SRAM `sram(at)`.
    pub fn keep(
        ir: &KernelIr,
        pes: impl Iterator<Item = Coord>,
        sram: &dyn Fn(Coord) -> Option<Vec<u8>>,
    ) -> Result<HeldWeights, String> {
        let mut arrays = HashMap::new();
        for at in pes {
            let bytes = sram(at).unwrap_or_default();
            let mut kept = Vec::new();
            for array in ir.arrays.iter().filter(|a| a.name.starts_with("held_")) {
                let start = array.offset_words as usize;
                let words = bytes
                    .get(start * 4..(start + array.len as usize) * 4)
                    .ok_or_else(|| {
                        format!("PE ({}, {}) has no `{}` to hold", at.x, at.y, array.name)
                    })?
                    .chunks_exact(4)
                    .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect();
                kept.push((start, words));
            }
            arrays.insert(at, kept);
        }
        Ok(HeldWeights { arrays })
    }

    /// The most bytes held on one PE.
    pub fn bytes_per_pe(&self) -> u64 {
        let pe = |kept: &Vec<(usize, Vec<u32>)>| kept.iter().map(|(_, w)| w.len() as u64).sum();
        4 * self.arrays.values().map(pe).max().unwrap_or(0)
    }

    /// Puts the held arrays into the SRAM images of `program`'s PEs, and drops its weight
    /// streams: the layer takes nothing from the store.
    pub fn load(&self, program: &mut Program) -> Result<(), String> {
        program
            .inputs
            .retain(|input| input.source != wsel_sim::EdgeSource::WeightStore);
        for pe in &mut program.pes {
            let kept = self
                .arrays
                .get(&pe.at)
                .ok_or_else(|| format!("PE ({}, {}) holds no weights", pe.at.x, pe.at.y))?;
            for (start, words) in kept {
                let bytes = pe
                    .sram_init
                    .get_mut(start * 4..(start + words.len()) * 4)
                    .ok_or_else(|| {
                        format!("PE ({}, {}): held array out of SRAM", pe.at.x, pe.at.y)
                    })?;
                for (chunk, word) in bytes.chunks_exact_mut(4).zip(words) {
                    chunk.copy_from_slice(&word.to_le_bytes());
                }
            }
        }
        Ok(())
    }
}
