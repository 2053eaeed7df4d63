//! Benchmark: checking a generated 10,000-line program (parse, resolve, type-check), cold and
//! after a one-line edit. Run with `cargo bench -p wsel --bench check_large`; the figures go
//! in BENCHMARKS.md. Not a test: nothing here asserts a time.

use std::path::Path;
use std::time::{Duration, Instant};

use wsel_sema::{Database, load_program, set_file};

const TARGET_LINES: usize = 10_000;
const RUNS: usize = 11;

fn main() {
    let source = generate(TARGET_LINES);
    let lines = source.lines().count();
    let path = Path::new("large.wse");

    let mut cold = Vec::new();
    for _ in 0..RUNS {
        let mut db = Database::default();
        let start = Instant::now();
        let file = load_program(&mut db, path, &mut |_| Ok(source.clone())).expect("in memory");
        let diagnostics = wsel_sema::diagnostics(&db, file);
        cold.push(start.elapsed());
        assert!(
            diagnostics.is_empty(),
            "generated program must check clean: {diagnostics:?}"
        );
    }

    let mut db = Database::default();
    let file = load_program(&mut db, path, &mut |_| Ok(source.clone())).expect("in memory");
    let _ = wsel_sema::diagnostics(&db, file);
    let mut edited = Vec::new();
    for run in 0..RUNS {
        // Change one constant inside one kernel body; everything else is reused.
        let text = source.replacen("acc[0..n] += 1.0;", &format!("acc[0..n] += {run}.5;"), 1);
        let start = Instant::now();
        set_file(&mut db, path, text);
        let diagnostics = wsel_sema::diagnostics(&db, file);
        edited.push(start.elapsed());
        assert!(diagnostics.is_empty());
    }

    println!("check_large: {lines} lines, {} bytes", source.len());
    println!(
        "  cold check (parse + resolve + type-check): median {:.1} ms",
        median_ms(&mut cold)
    );
    println!(
        "  re-check after editing one kernel body:    median {:.2} ms",
        median_ms(&mut edited)
    );
}

fn median_ms(samples: &mut [Duration]) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e3
}

/// A realistic program of about `lines` lines: kernels with ports and tasks, layers that run
/// them, and models that chain the layers.
fn generate(lines: usize) -> String {
    let mut out = String::from("// Generated for the front-end benchmark.\n\n");
    let mut i = 0;
    while out.lines().count() < lines {
        out.push_str(&unit(i));
        i += 1;
    }
    out
}

fn unit(i: usize) -> String {
    format!(
        r#"/// Scale-and-accumulate tile number {i}.
kernel tile{i}(n: u32, samples: u32) {{
    var x: [f32; n];
    var acc: [f32; n] = 0.0;
    var done: u32 = 0;
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;

    task main() {{
        if samples > 0 {{
            recv(xs, x[0..n]) then step;
        }}
    }}

    task step() {{
        acc[0..n] += 1.0;
        acc[0..n] += 0.5 * x[0..n];
        let m = max(acc[0..n]);
        for k in 0..n {{
            if acc[k] > m / 2.0 {{
                acc[k] = sqrt(abs(acc[k]));
            }}
        }}
        send(ys, acc[0..n]);
        done += 1;
        if done < samples {{
            recv(xs, x[0..n]) then step;
        }}
    }}
}}

layer scale{i}(x: f32[B, N]) -> y: f32[B, N] {{
    cost {{
        flops = 4 * N;
        weights = 0;
        activations = 8 * N;
    }}
    pipelined, streaming on [1, C] where N % C == 0 {{
        run tile{i}(n = N / C, samples = B);
        bind x to port xs split [cols];
        bind y to port ys split [cols];
    }}
}}

model chain{i}(x: f32[B, 64]) -> f32[B, 64] {{
    let a = scale{i}(x);
    let b = scale{i}(a);
    return scale{i}(b);
}}

"#
    )
}
