//! Tasks see logical coordinates in their region, also when the region is placed transposed.

mod common;

use common::{target, threads};
use wsel_sim::{Program, TaskContext, simulate, task};
use wsel_target::{Coord, Rect};

/// Every PE writes (column, row, columns, rows) as it sees them into SRAM words 0..4.
fn whoami_program(transposed: bool) -> Program {
    let mut p = Program::new();
    let k = p.add_kernel(
        "whoami",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| {
                let (x, y) = ctx.coords();
                let (w, h) = ctx.region_size();
                for (i, v) in [x, y, w, h].into_iter().enumerate() {
                    ctx.write_u32(4 * i as u32, v)?;
                }
                Ok(())
            }),
        )],
    );
    // A physical 3 × 2 rectangle at (1, 1): 3 columns wide, 2 rows high.
    let region = Rect::new(1, 1, 3, 2);
    for dy in 0..2 {
        for dx in 0..3 {
            let pe = p.add_pe(Coord::new(1 + dx, 1 + dy), k, 16, &[], &[0]);
            p.pes[pe].region = region;
            p.pes[pe].transposed = transposed;
        }
    }
    p
}

#[test]
fn identity_regions_report_physical_offsets() {
    let out = simulate(&target(6, 4, 4), &whoami_program(false), &threads(1)).expect("runs");
    let words = out.read_u32s(Coord::new(3, 2), 0, 4).expect("sram");
    // Physical offset (2, 1): column 2, row 1 of a 3-column, 2-row region.
    assert_eq!(words, vec![2, 1, 3, 2]);
}

#[test]
fn transposed_regions_swap_rows_and_columns() {
    let out = simulate(&target(6, 4, 4), &whoami_program(true), &threads(1)).expect("runs");
    let words = out.read_u32s(Coord::new(3, 2), 0, 4).expect("sram");
    // Transposed: logical row = physical dx = 2, logical column = physical dy = 1; the region
    // has 2 logical columns and 3 logical rows.
    assert_eq!(words, vec![1, 2, 2, 3]);
}
