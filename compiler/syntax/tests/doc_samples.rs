//! Every `wse` code sample of docs/language.md, copied here, parses with zero errors.
//! Fragments (kernel members, statements) are wrapped in a kernel or a task first.

use wsel_syntax::parse;

const DOC: &str = include_str!("../../../docs/language.md");

/// How a sample is turned into a module.
enum Wrap {
    Module,
    /// Kernel members: wrapped in `kernel k(n: u32, m: u32) { ... }`.
    Member,
    /// Statements: wrapped in a task of a kernel.
    Stmt,
}

fn check(sample: &str, wrap: Wrap) {
    assert!(
        DOC.contains(sample),
        "sample no longer in docs/language.md:\n{sample}"
    );
    // `{ ... }` in the doc stands for "some body".
    let body = sample.replace("{ ... }", "{ }");
    let src = match wrap {
        Wrap::Module => body,
        Wrap::Member => format!("kernel k(n: u32, m: u32) {{\n{body}\n}}\n"),
        Wrap::Stmt => format!("kernel k(n: u32, m: u32) {{\ntask main() {{\n{body}\n}}\n}}\n"),
    };
    let parsed = parse(&src);
    assert!(parsed.errors.is_empty(), "{src}\n{:#?}", parsed.errors);
    assert!(!parsed.module.items.is_empty());
}

#[test]
fn every_sample_of_the_doc_is_tested() {
    assert_eq!(
        DOC.matches("```wse").count(),
        25,
        "a sample was added to or removed from the doc"
    );
}

#[test]
fn a_layer_that_trains_as_other_layers() {
    check(
        "layer double_dense(x: f32[B, N], param w1: f32[N, H], param b1: f32[H], param w2: f32[H, M],
        param b2: f32[M]) -> y: f32[B, M]
    train as dense(dense(x, w1, b1), w2, b2) {
    cost { flops = 2 * N * H + 2 * H * M; weights = N * H + H + H * M + M; activations = N + M; }
}",
        Wrap::Module,
    );
}

#[test]
fn reshape_between_layers() {
    check(
        "import std.nn.{transpose, relu};

model flat(x: f32[B, 5, 7]) -> f32[B, 5, 7] {
    let t = reshape(transpose(x), 35);     // f32[B, 7, 5] read as f32[B, 35]
    return transpose(reshape(relu(t), 7, 5));
}",
        Wrap::Module,
    );
}

#[test]
fn switched_ports() {
    check(
        "  kernel slide_row(w: u32, n: u32) {   // 1 × w: each PE of the left half sends to PE + w/4
      var x: [f32; n];
      var y: [f32; n];
      out east: stream<f32> to east switch {
          pos1: rx west;                  // 1 = WEST → EAST: pass on
          pos2: tx ramp;                  // 2 = WEST → RAMP: deliver here
          start: select(pe.col + 1 == 3 * w / 4, 2, select(pe.col >= w / 2, 1, 0));
      };
      in  from_west: stream<f32> from west switch;
      task main() {
          if pe.col < w / 2 { send(east, x[0..n]) then sent; }
          if pe.col >= w / 4 && pe.col < 3 * w / 4 { recv(from_west, y[0..n]) then got; }
      }
      task sent() { control(east, [adv, nop * (w / 4 - 2), adv]); }   // this router and the one w/4 − 1 on
      task got() { }
  }",
        Wrap::Module,
    );
}

#[test]
fn pass_through_ports() {
    check(
        "  kernel swap_ends(half: u32, n: u32) {   // on a 1 × (2·half + 1) row: PEs 0, half, 2·half
      var x: [f32; n];
      out to_mid: stream<f32> to east by half;
      in  at_mid: stream<f32> from west by half;
      task main() {
          if pe.col == 0 { send(to_mid, x[0..n]); }
          if pe.col == half { recv(at_mid, x[0..n]) then got; }
      }
      task got() { }
  }",
        Wrap::Module,
    );
}

#[test]
fn data_routed_sends_in_software() {
    check(
        "  task own_group() {          // this PE's group from the sender: `left` values, in chunks
      taken = min(left, CHUNK);
      recv(row_in, chunk[0..taken]) then fold;
  }
  task fold() {               // e.g. a histogram: one bin per value
      for i in 0..taken {
          bins[min((chunk[i] * SCALE) as u32, BINS - 1)] += 1;
      }
      left -= taken;
      if left > 0 { activate own_group; } else { activate next_group; }
  }",
        Wrap::Member,
    );
}

#[test]
fn bus_ports() {
    check(
        "  out to_row: stream<f32> to row;      // PE (r, k) sends its tile along row r
  in  row_in: stream<f32> from row;    // every other PE of row r receives it
  task step() {
      if pe.col == k { send(to_row, a[0..n]); } else { recv(row_in, a_k[0..n]) then use; }
  }",
        Wrap::Member,
    );
}

#[test]
fn layer_scalar_inputs() {
    check(
        "layer jacobi(x: f32[B, H, W], steps: u32 = 16) -> y: f32[B, H, W] { ... }
layer scaled(x: f32[B, N], factor: f32, eps: f32 = 1e-5) -> y: f32[B, N] { ... }

model smooth(plate: f32[B, 64, 64]) -> f32[B, 64, 64] {
    let t = jacobi(plate, steps = 500);     // 500 steps
    return jacobi(t);                       // 16, the default
}",
        Wrap::Module,
    );
}

#[test]
fn masks_and_select() {
    check(
        "  var keep: [bool; n];
  keep[0..n] = x[0..n] > 0.0 && x[0..n] < limit;
  y[0..n] = select(keep[0..n], x[0..n], 0.0);          // y = np.where(keep, x, 0.0)
  alive[0..n] = select(nb[0..n] == 3.0 || (alive[0..n] > 0.5 && nb[0..n] == 2.0), 1.0, 0.0);",
        Wrap::Stmt,
    );
}

#[test]
fn intro_model() {
    check(
        r#"import std.nn.{dense, relu, softmax};

model digits(x: f32[B, 64]) -> f32[B, 10] {
    param w1: f32[64, 32];
    param b1: f32[32];
    param w2: f32[32, 10];
    param b2: f32[10];
    let h = relu(dense(x, w1, b1));
    return softmax(dense(h, w2, b2));
}
"#,
        Wrap::Module,
    );
}

#[test]
fn imports() {
    check(
        r#"import std.nn.{dense, relu};          // from the standard library (embedded in wsel)
import kernels.gemv.{gemv_tile};      // kernels/gemv.wse, relative to this file's folder
import std.nn.{softmax as probs};     // renamed on import
"#,
        Wrap::Module,
    );
}

#[test]
fn constants() {
    check(
        r#"const HIDDEN: u32 = 32;
const SCALE: f32 = 0.5;
"#,
        Wrap::Module,
    );
}

#[test]
fn kernel_axpy_row() {
    check(
        r#"/// y = alpha * x + y over one row of PEs.
kernel axpy_row(n: u32, alpha: f32) {
    var x: [f32; n];
    var y: [f32; n] = 0.0;
    in  xs: stream<f32> from west;
    out ys: stream<f32> to east;

    task main() { recv(xs, x[0..n]) then step; }
    task step() {
        y[0..n] += alpha * x[0..n];
        send(ys, y[0..n]);
    }
}
"#,
        Wrap::Module,
    );
}

#[test]
fn kernel_storage() {
    check(
        r#"var w: [f32; n * m];         // an array in this PE's SRAM, zero-initialised
var acc: [f32; m] = 0.0;     // every element initialised to 0.0
var count: u32 = 0;          // a scalar in SRAM; keeps its value between tasks
const half: u32 = n / 2;     // a compile-time constant local to the kernel
"#,
        Wrap::Member,
    );
}

#[test]
fn kernel_ports() {
    check(
        r#"in  xs:   stream<f32> from west multicast;  // enters the region's west edge, reaches every PE of the row
in  psum: stream<f32> from north;           // from the PE above (row 0: the region's north edge)
out ysum: stream<f32> to south;             // to the PE below (last row: leaves the south edge)
"#,
        Wrap::Member,
    );
}

#[test]
fn kernel_tasks() {
    check(
        r#"task main() { ... }        // activated once on every PE when the program starts
task step() { ... }        // activated by another task or by a completion
"#,
        Wrap::Member,
    );
}

#[test]
fn statements() {
    check(
        r#"let s: f32 = sum(x[0..n]);      // immutable local (the type may be omitted: let s = ...)
var i: u32 = 0;                 // mutable local
i = i + 1;  y[i] += 2.0;        // assignment: = += -= *= /=
for k in 0..n { acc[k] += x[k] * w[k]; }   // k takes lo, lo+1, ..., hi-1
while i < n { i += 1; }
if pe.row == 0 { activate emit; } else { recv(psum, acc[0..m]) then add; }
return;                          // leave the task early
"#,
        Wrap::Stmt,
    );
}

#[test]
fn vector_operations() {
    check(
        r#"  y[0..m] += a * x[0..m];
  h[0..n] = max(h[0..n], 0.0);
  e[0..n] = exp(v[0..n] - mx);
  "#,
        Wrap::Stmt,
    );
}

#[test]
fn layer_dense() {
    check(
        r#"/// y = x · w + b
layer dense(x: f32[B, N], param w: f32[N, M], param b: f32[M]) -> y: f32[B, M] {
    cost {
        flops = 2 * N * M;            // per sample
        weights = 4 * (N * M + M);    // bytes of parameters
        activations = 4 * (N + M);    // bytes moved per sample
    }
    pipelined on [R, C] where N % R == 0, M % C == 0 {
        run gemv_tile(n = N / R, m = M / C, samples = B);
        bind w to array w split [rows, cols];
        bind b to array bias split [cols];
        bind x to port xs split [rows];
        bind y to port ysum split [cols];
    }
}
"#,
        Wrap::Module,
    );
}

#[test]
fn model_digits() {
    check(
        r#"model digits(x: f32[B, 64]) -> f32[B, 10] {
    param w1: f32[64, 32];                      // loaded from w1.npy beside this file
    param b1: f32[32] from "weights/b1.npy";   // or from an explicit path
    let h = relu(dense(x, w1, b1));
    return softmax(dense(h, w2, b2));
}
"#,
        Wrap::Module,
    );
}

#[test]
fn run_config() {
    check(
        r#"run digits {
    input x = "data/x_test.npy";     // one per model input
    output = "out/probs.npy";        // where the result is written
    labels = "data/y_test.npy";      // optional: print accuracy of argmax against these
    target = "dev";                  // optional: dev, wse2, wse3 or a path to a target .toml
    mode = "auto";                   // optional: pipelined, streaming or auto
    micro_order = "auto";            // optional: auto, micro or layer (weight streaming)
    batch = 64;                      // optional: samples per batch
    systems = 4;                     // optional: a cluster of 4 systems in data parallel
}
"#,
        Wrap::Module,
    );
}

/// The examples and the standard library are written in the language too.
#[test]
fn examples_and_stdlib_parse() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut files = Vec::new();
    for dir in ["examples", "stdlib"] {
        collect_wse(&std::path::Path::new(root).join(dir), &mut files);
    }
    for file in files {
        let src = std::fs::read_to_string(&file).expect("readable example");
        let parsed = parse(&src);
        assert!(
            parsed.errors.is_empty(),
            "{}: {:#?}",
            file.display(),
            parsed.errors
        );
    }
}

fn collect_wse(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect_wse(&path, out);
        } else if path.extension().is_some_and(|e| e == "wse") {
            out.push(path);
        }
    }
}

#[test]
fn a_backward_layer() {
    check(
        "/// The gradient of relu's input: dy where relu's result is positive, else 0.
layer relu_backward(y: f32[B, N], dy: f32[B, N]) -> dx: f32[B, N] {
    cost { flops = N; weights = 0; activations = 4 * (3 * N); }
    streaming on [R, C] where C <= B {
        run relu_backward_resident(N = N, S = B, R = R, C = C,
            len = ((N + R - 1) / R) * ((B + C - 1) / C));
        bind y to array yv split [cols, rows];
        bind dy to array g split [cols, rows];
        bind dx to array g split [cols, rows];
    }
}",
        Wrap::Module,
    );
}

#[test]
fn a_result_summed_over_the_batch_parses() {
    let parsed = parse("layer g(x: f32[B, N], dy: f32[B, M]) -> param dw: f32[N, M] {}");
    assert!(parsed.errors.is_empty(), "{:#?}", parsed.errors);
    match &parsed.module.items[0] {
        wsel_syntax::ast::Item::Layer(layer) => assert!(layer.output_is_param),
        other => panic!("not a layer: {other:?}"),
    }
}

#[test]
fn train_item() {
    check(
        r#"train digits {
    input x = "data/x_train.npy";    // one per model input
    labels = "data/y_train.npy";     // class indices (cross_entropy) or target values (mse)
    loss = "cross_entropy";          // a loss layer of std.loss; default cross_entropy
    optimizer = "sgd";               // "sgd" (default) or "adam"
    momentum = 0.9;                  // SGD: in [0, 1), default 0.9
    lr = 0.05;                       // a finite positive number, default 0.01
    steps = 50;                      // or `epochs = 2;` (not both); default one epoch
    batch = 16;                      // samples per step, default 32
    seed = 1;                        // the batch order's seed, default 0
    shuffle = true;                  // false: the samples in file order
    target = "wse2";                 // as in `run`; default dev
    mode = "streaming";              // "streaming" (default) or "pipelined"
    out_dir = "out/train";           // the trained weights, loss.csv, loss.svg
}"#,
        Wrap::Module,
    );
}

#[test]
fn pipelined_training_layer() {
    check(
        "layer relu_train_back(dy: f32[B, N]) -> dx: f32[B, N] {
    cost { flops = N; weights = 0; activations = 4 * (3 * N); }
    pipelined on [1, C] where N % C == 0 {
        run relu_train_back_tile(n = N / C, samples = B);  // dx = dy where the kept y > 0
        bind dy to port dys split [cols];                   // from south: where y left
        bind dx to port dxs split [cols];                   // to north: where x came in
    }
}",
        Wrap::Module,
    );
}

#[test]
fn output_dimension_expression() {
    check(
        "layer matmul_qk(q: f32[B, N], k: f32[B, N], heads: u32, context: u32, scale: f32 = 1.0)
    -> s: f32[B, heads * context] { ... }",
        Wrap::Module,
    );
}

#[test]
fn attention_composed() {
    check(
        "  model scores(q: f32[B, 16], k: f32[B, 16], v: f32[B, 16]) -> f32[B, 16] {
      let s = matmul_qk(q, k, heads = 2, context = 4, scale = 0.35355339);   // 1 / sqrt(8)
      let p = softmax(s, context = 4);                  // causal = true by default
      return matmul_pv(p, v, heads = 2, context = 4);   // = attention(q, k, v, heads = 2, context = 4)
  }",
        Wrap::Module,
    );
}
