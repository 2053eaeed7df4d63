//! Switched ports (`out p: stream<T> to east switch { ... }`, `docs/language.md` §5.4,
//! "Switched ports") end to end on `dev` (S = 2 task-switch cycles, L = 2 cycles per hop), on
//! every backend: a row of 3 PEs whose east line has the positions 0 = RAMP → E (the base),
//! 1 = W → E, 2 = W → RAMP and 3 = W → E; PE 1 starts at 3, the others at 0, and PE 2, the
//! line's far end, has the fixed route W → RAMP (`wsel_map::switched`).
//!
//! PE 0's task `first` sends a control wavelet `[nop, adv]` (nothing for its own router,
//! advance PE 1's) and then its value 7. Router 1 advances from its last position: in ring
//! mode it wraps to 0 (RAMP → E), which does not receive from the west, so 7 waits in router 1
//! until PE 1's task `open` sends `[adv]` (to 1, W → E); without ring mode it stays at 3 and 7
//! goes straight on. Either way PE 2 receives 7 and its task `done` emits it.
//!
//! Hand-derived timing (`wsel_ir::cost`: a control statement costs 1, `send(line, x[0])` 2 —
//! the send and the load; a statement is issued when its cost has been charged; a wavelet is
//! injected when issued and forwarded by its router in the same cycle; a receive completing
//! at `d` readies its task at `d + 1`):
//!
//! - **stay**: `first` starts at `f`; the control wavelet is issued at `f + S + 1` and 7 at
//!   `f + S + 3`; 7 reaches router 1 at `f + S + 3 + L`, passes, and reaches PE 2 at
//!   `f + S + 3 + 2L`, completing its receive: `done` starts at `f + S + 2L + 4` (PE 2 is
//!   idle): **done − first = S + 2L + 4 = 10**.
//! - **ring**: 7 waits in router 1 from `f + S + 3 + L`. PE 1's `open` starts at `o` (later:
//!   PE 1 first runs a vector statement of 40 elements) and issues its control wavelet at
//!   `o + S + 1`; router 1 forwards it east in that cycle and then advances to 1, so 7 leaves
//!   in the next cycle (port E was served in this one), reaches PE 2 at `o + S + 2 + L`, and
//!   `done` starts at `o + S + L + 3`: **done − open = S + L + 3 = 7**.
//! - **ring, without PE 1's control wavelet**: 7 never leaves router 1: a deadlock.

use std::path::Path;
use std::process::Command;

mod support;
use support::{starts, temp_dir};

const S: u64 = 2;
const L: u64 = 2;

/// The program, with `ring` or not, and with PE 1 opening its switch (`opens = 1`) or not.
fn source(ring: bool, opens: u32) -> String {
    let ring = if ring { " ring;" } else { "" };
    format!(
        r#"
kernel ring_or_stay(opens: u32) {{
    var x: [f32; 1];
    var got: [f32; 1];
    var pad: [f32; 40];
    in  xs:   stream<f32> from west multicast;
    out line: stream<f32> to east switch {{
        pos1: rx west; pos2: tx ramp; pos3: tx east;
        start: select(pe.col == 1, 3, 0);{ring}
    }};
    in  ends: stream<f32> from west switch;
    out ys:   stream<f32> to east;

    task main() {{ recv(xs, x[0..1]) then go; }}
    task go() {{
        if pe.col == 0 {{ activate first; }}
        if pe.col == 1 && opens == 1 {{ activate wait; }}
        if pe.col == 2 {{ recv(ends, got[0..1]) then done; }}
    }}
    task first() {{ control(line, [nop, adv]); send(line, x[0]); }}
    task wait() {{ pad[0..40] = 2.0 * pad[0..40]; activate open; }}
    task open() {{ control(line, [adv]); }}
    task done() {{ send(ys, got[0..1]); }}
}}

layer ring_row(x: f32[B, 1]) -> y: f32[B, 1] {{
    cost {{ flops = 1; weights = 0; activations = 8; }}
    pipelined on [1, 3] {{
        run ring_or_stay(opens = {opens});
        bind x to port xs;
        bind y to port ys;
    }}
}}

model m(x: f32[B, 1]) -> f32[B, 1] {{
    return ring_row(x);
}}
"#
    )
}

fn wsel(dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs")
}

/// Runs the program on `backend`; returns its output values and trace, or its stderr.
fn run(ring: bool, opens: u32, backend: &str) -> Result<(Vec<f32>, serde_json::Value), String> {
    let dir = temp_dir(&format!("{ring}-{opens}-{backend}"));
    std::fs::write(dir.join("ring.wse"), source(ring, opens)).expect("source");
    let tensor = wsel::tensor::Tensor {
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: vec![1, 1],
        words: vec![7.0f32.to_bits()],
    };
    wsel::tensor::write_npy_atomic(&dir.join("x.npy"), &tensor).expect("x.npy");
    let args = [
        "run",
        "ring.wse",
        "--target",
        "dev",
        "--copies",
        "1",
        "--no-cache",
        "--backend",
        backend,
        "--input",
        "x=x.npy",
        "--output",
        "y.npy",
        "--trace",
        "t.json",
    ];
    let output = wsel(&dir, &args);
    if output.status.success() {
        let bytes = std::fs::read(dir.join("y.npy")).expect("output");
        let y: Vec<f32> = npyz::NpyFile::new(&bytes[..])
            .expect("an .npy file")
            .into_vec()
            .expect("f32 values");
        let trace = std::fs::read_to_string(dir.join("t.json")).expect("trace");
        Ok((y, serde_json::from_str(&trace).expect("json")))
    } else {
        Err(String::from_utf8_lossy(&output.stderr).into_owned())
    }
}

/// The backends this build has.
fn backends() -> Vec<&'static str> {
    let mut all = vec!["interp", "cranelift"];
    if cfg!(feature = "llvm") {
        all.push("llvm");
    }
    all
}

/// (done − first, done − open) of one run, checking its value.
fn timing(ring: bool, backend: &str) -> (u64, Option<u64>) {
    let (y, trace) = run(ring, u32::from(ring), backend).expect("the run succeeds");
    assert_eq!(y, vec![7.0], "ring = {ring}, {backend}");
    let first = starts(&trace, "first");
    let done = starts(&trace, "done");
    assert_eq!(first.iter().map(|s| s.0).collect::<Vec<_>>(), [0]);
    assert_eq!(done.iter().map(|s| s.0).collect::<Vec<_>>(), [2]);
    let open = starts(&trace, "open").first().map(|o| {
        assert_eq!(o.0, 1);
        // 7 is already waiting in router 1 when PE 1's control wavelet leaves it.
        assert!(o.1 + S + 1 > first[0].1 + S + 3 + L, "open at {}", o.1);
        done[0].1 - o.1
    });
    (done[0].1 - first[0].1, open)
}

#[test]
fn ring_mode_wraps_and_holds_the_data_until_a_control_wavelet_opens_the_way() {
    let mut seen = Vec::new();
    for backend in backends() {
        let stay = timing(false, backend);
        assert_eq!(stay, (S + 2 * L + 4, None), "stay, {backend}");
        let ring = timing(true, backend);
        assert_eq!(ring.1, Some(S + L + 3), "ring, {backend}");
        seen.push((stay, ring));
    }
    // The backends agree cycle for cycle.
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

#[test]
fn without_the_opening_control_wavelet_the_data_waits_forever() {
    let stderr = run(true, 0, "interp").expect_err("a deadlock");
    assert!(stderr.contains("error[E0806]"), "{stderr}");
    assert!(stderr.contains("deadlock"), "{stderr}");
    assert!(
        stderr.contains("router (1, 0) holds 1 wavelet(s)"),
        "{stderr}"
    );
}
