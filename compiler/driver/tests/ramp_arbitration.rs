//! The shared ramp (`Target::ramp.shared`, `runtime/sim/README.md` "Machine model"): a PE's
//! ramp moves one wavelet per cycle, in or out, and when a send and a delivery could both
//! move, the one on the lower color goes. Shown end to end on `dev` (L = 2 cycles per hop,
//! Q = 4) with and without the shared ramp, on every backend.
//!
//! A row of 3 PEs with two eastward lines declared in the order `lo` then `hi`, so that `lo`
//! has the lower color (a kernel's ports get colors in declaration order). PE 0 sends n = 8
//! values to PE 1 on one line; PE 1 posts its receive of them, then sends its own m = 16
//! values to PE 2 on the other line; PE 2 receives them. Each PE takes its part of the
//! model's input (on the lowest color) only after its transfers, so that nothing else uses a
//! ramp meanwhile.
//!
//! Let `s0` and `s1` be the cycles PE 0's and PE 1's sends are issued (both `main`s start at
//! cycle 0; PE 1's `if` chain and its receive come first, so `s0 = 5`, `s1 = 8`, read off the
//! unshared run: `got = s0 + L + n = 15`, `sent = s1 + m = 24`). PE 0's wavelets reach PE 1's
//! router at `s0 + L … s0 + L + 7 = 7 … 14` (PE 0 injects one per cycle from `s0`, nothing
//! else on the line). Shared, PE 1's ramp has n + m wavelets to move from cycle 7 on, one per
//! cycle and without a gap (`s1 = 8` falls inside the deliveries), so its last transfer
//! completes at `s0 + L + n + m − 1 = 30` and its task starts at **31**; the transfer on the
//! lower color goes first and keeps its unshared cycle:
//!
//! - **The receive on the lower color** (PE 0 → PE 1 on `lo`, PE 1 → PE 2 on `hi`): the
//!   deliveries take the ramp at 7 … 14, `got` at 15 as unshared; the send issued at 8 waits
//!   for them and injects at 15 … 30: `sent` at **31** instead of 24.
//! - **The send on the lower color** (PE 0 → PE 1 on `hi`, PE 1 → PE 2 on `lo`): one wavelet
//!   is delivered at 7, before the send is issued; from 8 the send injects at 8 … 23, `sent`
//!   at 24 as unshared, while PE 0's other 7 wavelets wait: 4 in router 1's queue (Q = 4), 3
//!   in router 0's. Router 1 delivers its 4 at 24 … 27; the credit of the first pop is back at
//!   router 0 at 24 + L = 26, its wavelet arrives at 28, and the last two follow: deliveries
//!   at 28, 29, 30, `got` at **31** instead of 15.

use std::path::Path;

mod support;
use support::{starts, temp_dir};

/// `dev`'s hop latency.
const L: u64 = 2;
/// PE 0's and PE 1's values.
const N: u64 = 8;
const M: u64 = 16;
/// The cycles PE 0's and PE 1's sends are issued (their statements' costs).
const S0: u64 = 5;
const S1: u64 = 8;

/// The program: PE 0 sends on `first` (`lo` or `hi`), PE 1 sends on the other line.
fn source(first: &str) -> String {
    let (a, a_in, b, b_in) = if first == "lo" {
        ("lo", "lo_in", "hi", "hi_in")
    } else {
        ("hi", "hi_in", "lo", "lo_in")
    };
    // PE 1's last transfer takes the model's input: its send when the receive goes first.
    let (got_last, sent_last) = if first == "lo" { (0, 1) } else { (1, 0) };
    format!(
        r#"
kernel arbitrate() {{
    var mine: [f32; 16];
    var got_v: [f32; 16];
    var start: [f32; 1];
    in  go:    stream<f32> from north;
    out lo:    stream<f32> to east;
    in  lo_in: stream<f32> from west;
    out hi:    stream<f32> to east;
    in  hi_in: stream<f32> from west;
    out ys:    stream<f32> to south;

    task main() {{
        if pe.col == 0 {{
            send({a}, mine[0..8]) then sent;
        }} else if pe.col == 1 {{
            recv({a_in}, got_v[0..8]) then got;
            send({b}, mine[0..16]) then sent;
        }} else {{
            recv({b_in}, got_v[0..16]) then got;
        }}
    }}
    task got() {{
        if pe.col == 2 || pe.col == 1 && {got_last} == 1 {{
            recv(go, start[0..1]) then emit;
        }}
    }}
    task sent() {{
        if pe.col == 0 || pe.col == 1 && {sent_last} == 1 {{
            recv(go, start[0..1]) then emit;
        }}
    }}
    task emit() {{ send(ys, start[0..1]); }}
}}

layer arbitration(x: f32[B, W]) -> y: f32[B, W] {{
    cost {{ flops = 0; weights = 0; activations = 8 * W; }}
    pipelined on [1, C] where C == W && W == 3 {{
        run arbitrate();
        bind x to port go split [cols];
        bind y to port ys split [cols];
    }}
}}

model m(x: f32[B, 3]) -> f32[B, 3] {{
    return arbitration(x);
}}
"#
    )
}

/// `dev`, with the shared ramp or not, as a target file in `dir`.
fn target(dir: &Path, shared: bool) -> String {
    let mut t = wsel_target::Target::dev();
    t.name = format!("dev-shared-{shared}");
    t.ramp.shared = shared;
    let path = dir.join(format!("{}.toml", t.name));
    std::fs::write(&path, t.to_toml_string()).expect("target file");
    path.display().to_string()
}

/// (start of PE 1's `got`, start of PE 1's `sent`) of one run.
fn pe1(first: &str, shared: bool, backend: &str) -> (u64, u64) {
    let dir = temp_dir(&format!("{first}-{shared}-{backend}"));
    std::fs::write(dir.join("arb.wse"), source(first)).expect("source");
    support::write_f32_npy(&dir.join("x.npy"), &[1, 3], &[1.0, 2.0, 3.0]);
    let target = target(&dir, shared);
    let run = [
        "run",
        "arb.wse",
        "--copies",
        "1",
        "--no-cache",
        "--trace",
        "t.json",
    ];
    let io = ["--input", "x=x.npy", "--output", "y.npy"];
    let on = ["--target", &target, "--backend", backend];
    support::wsel_ok(&dir, &[&run[..], &io, &on].concat());
    assert_eq!(support::read_f32(&dir.join("y.npy")), [1.0, 2.0, 3.0]);
    let text = std::fs::read_to_string(dir.join("t.json")).expect("trace");
    let trace: serde_json::Value = serde_json::from_str(&text).expect("json");
    let at = |task: &str| {
        starts(&trace, task)
            .into_iter()
            .find(|s| s.0 == 1)
            .unwrap_or_else(|| panic!("no `{task}` on PE 1"))
            .1
    };
    (at("got"), at("sent"))
}

/// PE 1's (got, sent) unshared and shared, the same on every backend.
fn both(first: &str) -> ((u64, u64), (u64, u64)) {
    let mut seen = Vec::new();
    for backend in support::backends() {
        seen.push((pe1(first, false, backend), pe1(first, true, backend)));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    seen[0]
}

#[test]
fn a_receive_on_the_lower_color_holds_back_the_pes_send() {
    let (unshared, shared) = both("lo");
    assert_eq!(unshared, (S0 + L + N, S1 + M));
    assert_eq!(shared, (S0 + L + N, S0 + L + N + M));
    assert_eq!(shared, (15, 31));
}

#[test]
fn a_send_on_the_lower_color_holds_back_the_pes_receive() {
    let (unshared, shared) = both("hi");
    assert_eq!(unshared, (S0 + L + N, S1 + M));
    assert_eq!(shared, (S0 + L + N + M, S1 + M));
    assert_eq!(shared, (31, 24));
}
