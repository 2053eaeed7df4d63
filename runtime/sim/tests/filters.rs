//! Ramp filters (`RampFilter`): a PE keeps its part of a stream and passes the rest on. Cycle
//! counts derived by hand in the comments (the timing rules are in `timing.rs`).

mod common;

use common::streams::{scatter, scattered};
use common::{run_agreeing, target};
use wsel_sim::{RampFilter, SimError, simulate};
use wsel_target::Coord;

#[test]
fn each_pe_keeps_its_part_and_passes_the_rest() {
    // L = 2, S = 2, three PEs taking m = 5 of every 15, two rows (n = 30). The send is issued at
    // t0 = S = 2; wavelet i leaves router k at 2 + i + 2k. PE x gets wavelets x·5 − 5 + 15·r +
    // j; its first is delivered at 2 + 5(x − 1) + 2x: 4, 11, 18.
    let (parts, m, rows) = (3, 5, 2);
    let t = target(2, 2, 4);
    let p = scatter(parts, m, rows);
    let out = run_agreeing(&t, &p);
    for x in 1..=parts {
        let got = out.read_u32s(Coord::new(x, 0), 0, m * rows).expect("sram");
        assert_eq!(got, scattered(parts, m, rows, x), "PE {x}");
        let pe = out
            .report
            .pes
            .iter()
            .find(|pe| (pe.x, pe.y) == (x, 0))
            .expect("PE in the report");
        let first = 2 + 5 * u64::from(x - 1) + 2 * u64::from(x);
        assert_eq!(pe.waits[0].first_delivery, Some(first), "PE {x}");
    }
    // Hops: all 30 wavelets cross the first link, 20 the second, 10 the third.
    assert_eq!(out.report.wavelet_hops, 30 + 20 + 10);
    assert_eq!(out.report.wavelets_delivered, 30);
    // The last wavelet (i = 29) is delivered at 2 + 29 + 6 = 37; the row task is ready at 38
    // and runs S = 2 cycles.
    assert_eq!(out.cycles, 40);
}

#[test]
fn a_filter_needs_one_receive_port_the_ramp_and_a_link() {
    let t = target(1, 1, 4);
    let mut p = scatter(2, 3, 1);
    // The last PE's route forwards to the ramp alone: a filter there is refused.
    assert!(p.set_filter(Coord::new(2, 0), 0, RampFilter { keep: 1, period: 3 }));
    let err = simulate(&t, &p, &common::threads(1)).expect_err("refused");
    assert!(
        matches!(&err, SimError::Program { at: Some(at), message } if *at == Coord::new(2, 0) && message.contains("ramp filter")),
        "{err}"
    );
    let mut p = scatter(2, 3, 1);
    assert!(p.set_filter(Coord::new(1, 0), 0, RampFilter { keep: 4, period: 3 }));
    assert!(simulate(&t, &p, &common::threads(1)).is_err());
}
