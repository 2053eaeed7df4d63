//! A dry run's loop whose exit reads a received value (`docs/mapping.md` §5, "Work"): every
//! received element reads as one, so a loop that runs while a received residual is above a
//! small tolerance (csl's bicgstab) runs to its other bound, as it would on data that has not
//! converged, instead of stopping at once on the buffer's zeros.

use std::path::Path;

use wsel_map::KernelWork;
use wsel_sema::Database;
use wsel_target::Target;

/// Two layers on `[1, 1]`: a solver loop that halves its input until its first element is
/// at most `tol` or it made `max_ite` steps, and the same loop with a tolerance no value
/// read as one or halved from it reaches (−1): it stops on `max_ite` alone.
const PROGRAM: &str = "
model m(x: f32[B, 8]) -> f32[B, 8] {
    return bound(received(x));
}

layer received(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 4 * (N + N); }
    pipelined on [1, 1] {
        run solve(n = N, max_ite = 3, tol = 0.001);
        bind x to port xs split [cols];
        bind y to port ys split [cols];
    }
}

layer bound(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 4 * (N + N); }
    pipelined on [1, 1] {
        run solve(n = N, max_ite = 3, tol = -1.0);
        bind x to port xs split [cols];
        bind y to port ys split [cols];
    }
}

kernel solve(n: u32, max_ite: u32, tol: f32) {
    var v: [f32; n];
    var k: u32 = 0;
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;

    task main() {
        recv(xs, v[0..n]) then step;
    }
    task step() {
        if v[0] > tol && k < max_ite {
            k += 1;
            v[0..n] *= 0.5;
            activate step;
        } else {
            send(ys, v[0..n]);
        }
    }
}
";

/// Layer `layer`'s work per sample on `[1, 1]`, measured on `dev`.
fn work(layer: usize) -> u64 {
    let mut db = Database::default();
    let file = wsel_sema::set_file(&mut db, Path::new("/received.wse"), PROGRAM.to_string());
    assert!(wsel_sema::diagnostics(&db, file).is_empty());
    let model = wsel_lower::find_model(&db, file, "m").expect("the model `m`");
    let target = Target::preset("dev").expect("dev");
    let runs = wsel_estimate::KernelDryRuns::new(&db, model, &target);
    runs.cycles_per_sample(layer, 0, 1, 1, 1).expect("measured")
}

#[test]
fn a_loop_on_a_received_residual_runs_to_its_bound() {
    // The received residual reads as one (> 0.001), and halving it three times leaves 0.125:
    // the loop makes its 3 steps, as the loop on `max_ite` alone does: 69 cycles. On the
    // buffer's zeros it made none: 12 cycles, the receive's task and the send (measured
    // before the rule).
    let (received, bound) = (work(0), work(1));
    assert_eq!(received, bound);
    assert!(received > 12, "the loop's steps are counted: {received}");
}
