//! Unit tests of the layout rules on small sources, and of the examples and the stdlib.

use super::*;

fn fmt(src: &str) -> String {
    match format(src) {
        Ok(out) => out,
        Err(e) => panic!("{e}\n{src}"),
    }
}

#[track_caller]
fn check(src: &str, expected: &str) {
    let out = fmt(src);
    assert_eq!(out, expected, "formatting\n{src}");
    assert_eq!(fmt(&out), out, "not idempotent");
}

#[test]
fn kernel_layout() {
    check(
        "kernel k(n:u32,a:f32){var x:[f32;n];in xs:stream<f32> from west;out ys:stream<f32> to east;\
         task main(){recv(xs,x[0..n]) then step;} task step(){x[0..n]+=a*x[0..n];send(ys,x[0..n]);}}",
        "kernel k(n: u32, a: f32) {
    var x: [f32; n];
    in  xs: stream<f32> from west;
    out ys: stream<f32> to east;
    task main() {
        recv(xs, x[0..n]) then step;
    }
    task step() {
        x[0..n] += a * x[0..n];
        send(ys, x[0..n]);
    }
}
",
    );
}

#[test]
fn layer_scalar_inputs_and_named_arguments() {
    check(
        "layer l(x:f32[B,N],steps:u32=16)->y:f32[B,N]{cost{flops=steps;weights=0;activations=0;}}\n\
         model m(x:f32[B,4])->f32[B,4]{return l(x,steps=2);}",
        "layer l(x: f32[B, N], steps: u32 = 16) -> y: f32[B, N] {
    cost {
        flops = steps;
        weights = 0;
        activations = 0;
    }
}
model m(x: f32[B, 4]) -> f32[B, 4] {
    return l(x, steps = 2);
}
",
    );
}

#[test]
fn operators_and_unary() {
    check(
        "const A: i32 = -1;\nconst B: i32 = A*-2+(3-A)%4;\nconst C: bool = !(A<B)&&B>=A;\n",
        "const A: i32 = -1;\nconst B: i32 = A * -2 + (3 - A) % 4;\nconst C: bool = !(A < B) && B >= A;\n",
    );
}

#[test]
fn ranges_keep_their_spacing() {
    check(
        "kernel k(n: u32) { var x: [f32; n]; task main() { x[0 .. n-1] = 0.0; x[0..n] = 1.0; } }",
        "kernel k(n: u32) {
    var x: [f32; n];
    task main() {
        x[0 .. n - 1] = 0.0;
        x[0..n] = 1.0;
    }
}
",
    );
}

#[test]
fn imports_models_and_else() {
    check(
        "import std.nn.{ dense , relu as r };\n\n\n\nmodel m(x: f32[B, 4]) -> f32[B, 2]\n{\n\n  param w: f32[4, 2];\n  param b: f32[2];\n  return r(dense(x, w, b));\n\n}\n",
        "import std.nn.{dense, relu as r};

model m(x: f32[B, 4]) -> f32[B, 2] {
    param w: f32[4, 2];
    param b: f32[2];
    return r(dense(x, w, b));
}
",
    );
    check(
        "kernel k() { task main() { if pe.row == 0 { activate main; }\n else { return; } } }",
        "kernel k() {
    task main() {
        if pe.row == 0 {
            activate main;
        } else {
            return;
        }
    }
}
",
    );
}

#[test]
fn comments_stay_where_they_were() {
    check(
        "// header\n\n/// The doc.\nkernel k() {// trailing\n    var a: u32 = 0;      // aligned\n  var bb: u32 = 0;       // aligned\n   /* block */ task main() { }\n}\n",
        "// header

/// The doc.
kernel k() { // trailing
    var a: u32 = 0;      // aligned
    var bb: u32 = 0;     // aligned
    /* block */
    task main() {}
}
",
    );
}

#[test]
fn continuation_lines_are_indented_once() {
    check(
        "const X: u32 = 1 +\n2 +\n        3;\nlayer l(\nx: f32[B, N]\n) -> y: f32[B, N] { cost { flops = N; weights = 0; activations = N; } }\n",
        "const X: u32 = 1 +
    2 +
    3;
layer l(
    x: f32[B, N]
) -> y: f32[B, N] {
    cost {
        flops = N;
        weights = 0;
        activations = N;
    }
}
",
    );
}

#[test]
fn syntax_errors_leave_the_text_alone() {
    let err = format("kernel k( {").err();
    assert!(err.is_some_and(|e| !e.errors.is_empty() && e.to_string().contains("syntax error")));
    assert!(!is_formatted("kernel @"));
}

#[test]
fn empty_and_blank_files() {
    assert_eq!(fmt(""), "");
    assert_eq!(fmt("  \n\n "), "");
    assert_eq!(fmt("// only\n\n\n"), "// only\n");
}

#[test]
fn examples_and_stdlib_are_stable() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for dir in ["examples", "stdlib"] {
        for path in crate_sources(&root.join(dir)) {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let once = fmt(&text);
            assert_eq!(fmt(&once), once, "{} is not stable", path.display());
        }
    }
}

fn crate_sources(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(crate_sources(&path));
        } else if path.extension().is_some_and(|e| e == "wse") {
            out.push(path);
        }
    }
    out.sort();
    out
}
