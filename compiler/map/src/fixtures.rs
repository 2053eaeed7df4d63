//! Hand-built layer graphs for tests and benchmarks: layers shaped like `std.nn`'s `dense`
//! (a weight tile per PE, `x` multicast along rows from the west, partial sums down the
//! columns, `y` out of the south edge) and `relu` (one row of PEs, north in, south out), and
//! chains of them. They let the mapper be tested without the front end.

use std::collections::BTreeMap;
use std::path::PathBuf;

use wsel_ir::graph::{
    BindInfo, BindTarget, Bus, CBinOp, CExpr, KernelRef, LayerCost, LayerGraph, LayerImpl,
    LayerInstance, Mode, ParamDecl, PortInfo, RegionSide, Side, SourceSpan, SplitAxis, TensorDecl,
    TensorRef,
};
use wsel_ir::kernel::{PortDirection, ScalarTy};
use wsel_target::{Coord, Target};

/// The span every fixture item points at (file `fixture.wse`, offset `at`).
pub fn span(at: usize) -> SourceSpan {
    SourceSpan {
        file: PathBuf::from("fixture.wse"),
        span: at..at + 1,
    }
}

fn var(name: &str) -> CExpr {
    CExpr::Var(name.to_string())
}

fn bin(op: CBinOp, a: CExpr, b: CExpr) -> CExpr {
    CExpr::Binary(op, Box::new(a), Box::new(b))
}

fn divides(n: &str, r: &str) -> CExpr {
    bin(CBinOp::Eq, bin(CBinOp::Rem, var(n), var(r)), CExpr::Int(0))
}

/// `target` with PEs killed, scattered by the xorshift sequence from `seed`, until `n` are dead.
pub fn scatter_dead_pes(mut target: Target, n: usize, mut seed: u64) -> Target {
    while target.defects.dead_pes.len() < n {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let x = (seed % u64::from(target.width)) as u32;
        let y = ((seed >> 32) % u64::from(target.height)) as u32;
        target.defects.add_dead_pe(Coord::new(x, y));
    }
    target
}

/// A kernel port.
pub fn port(name: &str, direction: PortDirection, side: Side, multicast: bool) -> PortInfo {
    PortInfo {
        name: name.to_string(),
        direction,
        elem: ScalarTy::F32,
        side,
        multicast,
        bus: None,
        distance: None,
        switch: None,
        span: span(0),
    }
}

/// A `bind`.
pub fn bind(tensor: &str, target: BindTarget, name: &str, split: &[SplitAxis]) -> BindInfo {
    BindInfo {
        tensor: tensor.to_string(),
        target,
        target_name: name.to_string(),
        split: split.to_vec(),
        tiles: Vec::new(),
        span: span(0),
    }
}

/// `y = x · w + b` with `x: [B, n]`, `w: [n, m]`: `std.nn.dense`'s pipelined implementation
/// (`dense_tile`) and its weight-streaming one (`dense_resident`: activations resident in
/// `std.resident`'s layout, weights and bias streamed into `ws` and `bs`). `x`, `w`, `b` are
/// the graph's tensors for the arguments.
pub fn dense(
    index: usize,
    x: TensorRef,
    w: TensorRef,
    b: TensorRef,
    n: u64,
    m: u64,
    batch: u64,
) -> LayerInstance {
    let dims: BTreeMap<String, u64> = [("B", batch), ("N", n), ("M", m)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    LayerInstance {
        name: format!("dense#{index}"),
        layer: "dense".into(),
        call: span(100 * index),
        args: vec![x, w, b],
        arg_names: vec!["x".into(), "w".into(), "b".into()],
        output_name: "y".into(),
        output_elem: ScalarTy::F32,
        output_shape: vec![batch, m],
        dims,
        scalars: Vec::new(),
        cost: LayerCost {
            flops: 2 * n * m + m,
            weight_bytes: 4 * (n * m + m),
            activation_bytes: 4 * (n + m),
        },
        impls: vec![dense_tile(), dense_resident()],
    }
}

/// `dense_tile` on `R × C`: a weight tile per PE, `x` multicast along rows from the west,
/// partial sums down the columns, `y` out of the south edge.
fn dense_tile() -> LayerImpl {
    let small_n = bin(CBinOp::Div, var("N"), var("R"));
    let small_m = bin(CBinOp::Div, var("M"), var("C"));
    let words = bin(
        CBinOp::Add,
        bin(
            CBinOp::Add,
            bin(CBinOp::Mul, small_n.clone(), small_m.clone()),
            bin(CBinOp::Mul, CExpr::Int(3), small_m.clone()),
        ),
        bin(CBinOp::Add, small_n.clone(), CExpr::Int(1)),
    );
    LayerImpl {
        conditions: vec![divides("N", "R"), divides("M", "C")],
        kernel_args: vec![
            ("n".to_string(), small_n),
            ("m".to_string(), small_m),
            ("samples".to_string(), var("B")),
        ],
        sram_words: words,
        ports: vec![
            port("xs", PortDirection::In, Side::West, true),
            port("psum", PortDirection::In, Side::North, false),
            port("ysum", PortDirection::Out, Side::South, false),
        ],
        binds: dense_binds([SplitAxis::Rows, SplitAxis::Cols]),
        ..pipelined_on_rc("dense_tile")
    }
}

/// A std.nn kernel `name` run pipelined on a free `R × C` region, weightless between
/// micro-batches: the fields every pipelined dense implementation shares (the others are
/// placeholders for the caller to set).
fn pipelined_on_rc(name: &str) -> LayerImpl {
    LayerImpl {
        modes: vec![Mode::Pipelined],
        rows: RegionSide::Free("R".into()),
        cols: RegionSide::Free("C".into()),
        conditions: Vec::new(),
        kernel: KernelRef {
            file: PathBuf::from("<std>/nn.wse"),
            name: name.into(),
        },
        kernel_args: Vec::new(),
        sram_words: CExpr::Int(0),
        held_words: CExpr::Int(0),
        ports: Vec::new(),
        binds: Vec::new(),
        span: span(0),
    }
}

/// A pipelined dense's binds: `w` split over `[x's axis, y's axis]`, `b` and `y` over y's
/// axis, `x` over x's — `[rows, cols]` for `dense_tile`, `[cols, rows]` for the straight one
/// (its `w` is split the other way round, `x` and `y` both over the rows).
fn dense_binds([w_in, w_out]: [SplitAxis; 2]) -> Vec<BindInfo> {
    vec![
        bind("w", BindTarget::Array, "w", &[w_in, w_out]),
        bind("b", BindTarget::Array, "bias", &[w_out]),
        bind("x", BindTarget::Port, "xs", &[SplitAxis::Rows]),
        bind("y", BindTarget::Port, "ysum", &[w_out]),
    ]
}

/// `layer` (a [`dense`]) as std.nn's `dense_straight`: pipelined only, `dense_straight_tile`
/// on `R × C` with `C % R == 0` or `R % C == 0`, `N % C == 0`, `N % R == 0` and `R ≤ M` — `x`
/// multicast along the rows from the west, each column's block of it passed down the column's
/// bus (by the rows that hold it, in turns when there are several), partial sums east along
/// the rows, `y` out of the east edge split over the same rows as `x`.
pub fn straight(mut layer: LayerInstance) -> LayerInstance {
    layer.name = layer.name.replacen("dense", "dense_straight", 1);
    layer.layer = "dense_straight".into();
    layer.impls = vec![dense_straight_tile()];
    layer
}

/// `dense_straight_tile`'s implementation (see [`straight`]).
fn dense_straight_tile() -> LayerImpl {
    let row_part = bin(CBinOp::Div, var("N"), var("R"));
    let block = bin(CBinOp::Div, var("N"), var("C"));
    let m = ceil_div(var("M"), var("R"));
    // w (nc · m), bias, acc and part (3 m), x's two slots (2 (n + nc)) and 14 scalars.
    let words = bin(
        CBinOp::Add,
        bin(
            CBinOp::Mul,
            bin(CBinOp::Add, block.clone(), CExpr::Int(3)),
            m.clone(),
        ),
        bin(
            CBinOp::Add,
            bin(
                CBinOp::Mul,
                CExpr::Int(2),
                bin(CBinOp::Add, row_part.clone(), block.clone()),
            ),
            CExpr::Int(14),
        ),
    );
    let bus_port = |name: &str, direction: PortDirection| PortInfo {
        bus: Some(Bus::Col),
        ..port(name, direction, Bus::Col.side(), false)
    };
    LayerImpl {
        conditions: vec![
            bin(CBinOp::Or, divides("C", "R"), divides("R", "C")),
            divides("N", "C"),
            divides("N", "R"),
            bin(CBinOp::Le, var("R"), var("M")),
        ],
        kernel_args: vec![
            ("n".to_string(), row_part),
            ("nc".to_string(), block),
            ("k".to_string(), at_least_one(var("C"), var("R"))),
            ("j".to_string(), at_least_one(var("R"), var("C"))),
            ("m".to_string(), m),
            ("samples".to_string(), var("B")),
            ("m_total".to_string(), var("M")),
        ],
        sram_words: words,
        ports: vec![
            port("xs", PortDirection::In, Side::West, true),
            port("psum", PortDirection::In, Side::West, false),
            port("ysum", PortDirection::Out, Side::East, false),
            bus_port("xb", PortDirection::Out),
            bus_port("xc", PortDirection::In),
        ],
        binds: dense_binds([SplitAxis::Cols, SplitAxis::Rows]),
        ..pipelined_on_rc("dense_straight_tile")
    }
}

/// `max(a / b, 1)` as an expression.
fn at_least_one(a: CExpr, b: CExpr) -> CExpr {
    CExpr::Max(Box::new(bin(CBinOp::Div, a, b)), Box::new(CExpr::Int(1)))
}

/// `ceil(a / b)` as an expression.
fn ceil_div(a: CExpr, b: CExpr) -> CExpr {
    bin(
        CBinOp::Div,
        bin(CBinOp::Sub, bin(CBinOp::Add, a, b.clone()), CExpr::Int(1)),
        b,
    )
}

/// `dense_resident` on `R × C` (`C ≤ B`): `x` and `y` resident, samples over the columns and
/// features over the rows; the bias and the weight rows (in `R` chunks) multicast along the
/// rows from the west on one port; partial sums reduce-scattered down the columns.
fn dense_resident() -> LayerImpl {
    let nmax = ceil_div(var("N"), var("R"));
    let mmax = ceil_div(var("M"), var("R"));
    let smax = ceil_div(var("B"), var("C"));
    // smax · (nmax + 4 · mmax) + 2 · 256 + mmax words (a weight block holds at most 256).
    let words = bin(
        CBinOp::Add,
        bin(
            CBinOp::Mul,
            smax.clone(),
            bin(
                CBinOp::Add,
                nmax.clone(),
                bin(CBinOp::Mul, CExpr::Int(4), mmax.clone()),
            ),
        ),
        bin(CBinOp::Add, CExpr::Int(512), mmax.clone()),
    );
    let mut binds = vec![
        bind(
            "x",
            BindTarget::Array,
            "xb",
            &[SplitAxis::Cols, SplitAxis::Rows],
        ),
        bind(
            "y",
            BindTarget::Array,
            "yb",
            &[SplitAxis::Cols, SplitAxis::Rows],
        ),
        bind("b", BindTarget::Port, "ws", &[SplitAxis::Rows]),
        bind(
            "w",
            BindTarget::Port,
            "ws",
            &[SplitAxis::Rows, SplitAxis::Whole],
        ),
    ];
    binds[3].tiles = vec![CExpr::Int(1), var("R")];
    LayerImpl {
        modes: vec![Mode::Streaming],
        rows: RegionSide::Free("R".into()),
        cols: RegionSide::Free("C".into()),
        conditions: vec![bin(CBinOp::Le, var("C"), var("B"))],
        kernel: KernelRef {
            file: PathBuf::from("<std>/nn.wse"),
            name: "dense_resident".into(),
        },
        kernel_args: vec![
            ("nmax".to_string(), nmax),
            ("mmax".to_string(), mmax),
            ("smax".to_string(), smax),
        ],
        sram_words: words,
        held_words: CExpr::Int(0),
        ports: vec![
            port("ws", PortDirection::In, Side::West, true),
            port("from_n", PortDirection::In, Side::North, false),
            port("to_s", PortDirection::Out, Side::South, false),
            port("from_s", PortDirection::In, Side::South, false),
            port("to_n", PortDirection::Out, Side::North, false),
        ],
        binds,
        span: span(0),
    }
}

/// `layer` (a [`dense`]) whose streaming implementation holds its weights between
/// micro-batches (`hold = true`), as std.nn's `dense_held` does, in a simpler shape: each PE
/// keeps its share of its row's weights, `nmax · M / C` words more (`held_words`).
pub fn held(mut layer: LayerInstance) -> LayerInstance {
    let share = bin(
        CBinOp::Div,
        bin(CBinOp::Mul, ceil_div(var("N"), var("R")), var("M")),
        var("C"),
    );
    if let Some(imp) = layer
        .impls
        .iter_mut()
        .find(|i| i.modes == [Mode::Streaming])
    {
        imp.kernel_args.push(("hold".into(), CExpr::Bool(true)));
        imp.sram_words = bin(CBinOp::Add, imp.sram_words.clone(), share.clone());
        imp.held_words = share;
    }
    layer
}

/// `impl` (a `dense_tile`-shaped implementation) with its weights streamed from the weight
/// store instead of held in SRAM, in pipelined mode: `x` and `w` multicast along rows from the
/// west, as `std.nn` once streamed weights into regions placed all at once. For tests of the
/// placer with weight-store edges.
fn store_fed(batch: u64) -> LayerImpl {
    let small_n = bin(CBinOp::Div, var("N"), var("R"));
    let small_m = bin(CBinOp::Div, var("M"), var("C"));
    let words = bin(
        CBinOp::Add,
        bin(
            CBinOp::Mul,
            CExpr::Int(batch as i64),
            bin(CBinOp::Add, small_n.clone(), small_m.clone()),
        ),
        bin(
            CBinOp::Add,
            bin(CBinOp::Mul, CExpr::Int(5), small_m),
            CExpr::Int(3),
        ),
    );
    LayerImpl {
        kernel: KernelRef {
            file: PathBuf::from("<std>/nn.wse"),
            name: "dense_store_fed".into(),
        },
        sram_words: words,
        held_words: CExpr::Int(0),
        ports: vec![
            port("xs", PortDirection::In, Side::West, true),
            port("ws", PortDirection::In, Side::West, true),
            port("psum", PortDirection::In, Side::North, false),
            port("ysum", PortDirection::Out, Side::South, false),
        ],
        binds: vec![
            bind(
                "w",
                BindTarget::Port,
                "ws",
                &[SplitAxis::Rows, SplitAxis::Whole],
            ),
            bind("b", BindTarget::Array, "bias", &[SplitAxis::Cols]),
            bind("x", BindTarget::Port, "xs", &[SplitAxis::Rows]),
            bind("y", BindTarget::Port, "ysum", &[SplitAxis::Cols]),
        ],
        ..dense_tile()
    }
}

/// [`mlp`] with every dense layer's weights streamed from the weight store into its region in
/// pipelined mode ([`store_fed`]): small SRAM plans, and weight-store edges for the placer.
pub fn mlp_store_fed(widths: &[u64], batch: u64, relus: bool) -> LayerGraph {
    let mut graph = mlp(widths, batch, relus);
    for layer in &mut graph.layers {
        if layer.layer == "dense" {
            layer.impls = vec![store_fed(batch)];
        }
    }
    graph
}

/// `y = max(x, 0)`: `std.nn.relu`'s pipelined implementation (one row of PEs, north in, south
/// out) and its weight-streaming one (in place on a resident block).
pub fn relu(index: usize, x: TensorRef, n: u64, batch: u64) -> LayerInstance {
    let dims: BTreeMap<String, u64> = [("B", batch), ("N", n)]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let small_n = bin(CBinOp::Div, var("N"), var("C"));
    let pipelined = LayerImpl {
        modes: vec![Mode::Pipelined],
        rows: RegionSide::Fixed(CExpr::Int(1)),
        cols: RegionSide::Free("C".into()),
        conditions: vec![divides("N", "C")],
        kernel: KernelRef {
            file: PathBuf::from("<std>/nn.wse"),
            name: "relu_tile".into(),
        },
        kernel_args: vec![
            ("n".to_string(), small_n.clone()),
            ("samples".to_string(), var("B")),
        ],
        sram_words: bin(CBinOp::Add, small_n, CExpr::Int(1)),
        held_words: CExpr::Int(0),
        ports: vec![
            port("xs", PortDirection::In, Side::North, false),
            port("ys", PortDirection::Out, Side::South, false),
        ],
        binds: vec![
            bind("x", BindTarget::Port, "xs", &[SplitAxis::Cols]),
            bind("y", BindTarget::Port, "ys", &[SplitAxis::Cols]),
        ],
        span: span(0),
    };
    let len = bin(
        CBinOp::Mul,
        ceil_div(var("N"), var("R")),
        ceil_div(var("B"), var("C")),
    );
    let resident = LayerImpl {
        modes: vec![Mode::Streaming],
        rows: RegionSide::Free("R".into()),
        conditions: vec![bin(CBinOp::Le, var("C"), var("B"))],
        kernel: KernelRef {
            file: PathBuf::from("<std>/nn.wse"),
            name: "relu_resident".into(),
        },
        kernel_args: vec![("len".to_string(), len.clone())],
        sram_words: len,
        ports: Vec::new(),
        binds: vec![
            bind(
                "x",
                BindTarget::Array,
                "v",
                &[SplitAxis::Cols, SplitAxis::Rows],
            ),
            bind(
                "y",
                BindTarget::Array,
                "v",
                &[SplitAxis::Cols, SplitAxis::Rows],
            ),
        ],
        ..pipelined.clone()
    };
    LayerInstance {
        name: format!("relu#{index}"),
        layer: "relu".into(),
        call: span(100 * index + 50),
        args: vec![x],
        arg_names: vec!["x".into()],
        output_name: "y".into(),
        output_elem: ScalarTy::F32,
        output_shape: vec![batch, n],
        dims,
        scalars: Vec::new(),
        cost: LayerCost {
            flops: n,
            weight_bytes: 0,
            activation_bytes: 8 * n,
        },
        impls: vec![pipelined, resident],
    }
}

/// `y = a + b`: `std.nn.add`'s pipelined implementation (one row of PEs, both operands in at
/// the north edge, the sum out of the south edge).
pub fn add(index: usize, a: TensorRef, b: TensorRef, n: u64, batch: u64) -> LayerInstance {
    let mut layer = relu(index, a, n, batch);
    layer.impls.truncate(1);
    let pipelined = &mut layer.impls[0];
    pipelined.kernel.name = "add_tile".into();
    pipelined.ports = vec![
        port("a_in", PortDirection::In, Side::North, false),
        port("b_in", PortDirection::In, Side::North, false),
        port("ys", PortDirection::Out, Side::South, false),
    ];
    pipelined.binds = vec![
        bind("a", BindTarget::Port, "a_in", &[SplitAxis::Cols]),
        bind("b", BindTarget::Port, "b_in", &[SplitAxis::Cols]),
        bind("y", BindTarget::Port, "ys", &[SplitAxis::Cols]),
    ];
    LayerInstance {
        name: format!("add#{index}"),
        layer: "add".into(),
        args: vec![a, b],
        arg_names: vec!["a".into(), "b".into()],
        ..layer
    }
}

fn tensor(name: &str, shape: Vec<u64>) -> TensorDecl {
    TensorDecl {
        name: name.to_string(),
        elem: ScalarTy::F32,
        shape,
        span: span(0),
    }
}

/// A multilayer perceptron: `dense` layers of the given widths (`widths[0]` inputs), each but
/// the last followed by a `relu` when `relus` is set.
pub fn mlp(widths: &[u64], batch: u64, relus: bool) -> LayerGraph {
    let mut graph = LayerGraph {
        model: "mlp".into(),
        batch,
        inputs: vec![tensor(
            "x",
            vec![batch, widths.first().copied().unwrap_or(1)],
        )],
        params: Vec::new(),
        layers: Vec::new(),
        output: TensorRef::Input(0),
    };
    let mut current = TensorRef::Input(0);
    for (i, pair) in widths.windows(2).enumerate() {
        let (n, m) = (pair[0], pair[1]);
        let w = graph.params.len();
        graph.params.push(ParamDecl {
            tensor: tensor(&format!("w{}", i + 1), vec![n, m]),
            path: PathBuf::from(format!("w{}.npy", i + 1)),
            columns: None,
        });
        graph.params.push(ParamDecl {
            tensor: tensor(&format!("b{}", i + 1), vec![m]),
            path: PathBuf::from(format!("b{}.npy", i + 1)),
            columns: None,
        });
        let d = graph.layers.len();
        graph.layers.push(dense(
            i + 1,
            current,
            TensorRef::Param(w),
            TensorRef::Param(w + 1),
            n,
            m,
            batch,
        ));
        current = TensorRef::Layer(d);
        if relus && i + 2 < widths.len() {
            let r = graph.layers.len();
            graph.layers.push(relu(i + 1, current, m, batch));
            current = TensorRef::Layer(r);
        }
    }
    graph.output = current;
    graph
}

/// The fused twin of a [`dense`] (or a [`straight`] one) and the [`relu`] that alone reads
/// it, as std.nn's `dense_relu` and `dense_straight_relu` (`crate::fusion`): the dense's
/// pipelined implementation with `act = 1`, named by both layers; `None` for any other pair.
pub fn fused_twin(graph: &LayerGraph, producer: usize, reader: usize) -> Option<LayerInstance> {
    let (p, r) = (graph.layers.get(producer)?, graph.layers.get(reader)?);
    if !matches!(p.layer.as_str(), "dense" | "dense_straight") || r.layer != "relu" {
        return None;
    }
    let mut twin = p.clone();
    twin.name = crate::fusion::fused_name(&p.name, &r.name);
    twin.layer = format!("{}_relu", p.layer);
    twin.cost.flops += r.cost.flops;
    twin.impls.retain(|i| i.modes.contains(&Mode::Pipelined));
    for imp in &mut twin.impls {
        imp.kernel_args.push(("act".to_string(), CExpr::Int(1)));
    }
    Some(twin)
}

/// The backward of [`dense`] in pipelined training (`std.nn`'s `dense_train_back`) on
/// `R × C`: `dy` multicast up the columns from the south edge, partial `dx` sums passed west
/// along the rows, `dx` out of the west edge — the forward's streams turned around, so that
/// on the forward layer's region (same orientation) it takes `dy` where `y` left and gives
/// `dx` where `x` came in.
pub fn dense_back(index: usize, dy: TensorRef, w: TensorRef, n: u64, m: u64) -> LayerInstance {
    let batch = 1;
    let mut layer = dense(index, dy, w, w, n, m, batch);
    layer.name = format!("dense_train_back#{index}");
    layer.layer = "dense_train_back".into();
    layer.args = vec![dy, w];
    layer.arg_names = vec!["dy".into(), "w".into()];
    layer.output_name = "dx".into();
    let mut imp = dense_tile();
    imp.kernel.name = "dense_train_back_tile".into();
    imp.ports = vec![
        port("dys", PortDirection::In, Side::South, true),
        port("dpart", PortDirection::In, Side::East, false),
        port("dxs", PortDirection::Out, Side::West, false),
    ];
    imp.binds = vec![
        bind(
            "w",
            BindTarget::Array,
            "w",
            &[SplitAxis::Rows, SplitAxis::Cols],
        ),
        bind("dy", BindTarget::Port, "dys", &[SplitAxis::Cols]),
        bind("dx", BindTarget::Port, "dxs", &[SplitAxis::Rows]),
    ];
    layer.impls = vec![imp];
    layer
}

/// The backward chain of [`mlp`] (without relus) in pipelined training: `dy` of the last
/// layer's result in, then [`dense_back`] for every layer from the last to the first; the
/// result is the first layer's `dx`. Layer `k` is the backward of `mlp`'s layer
/// `widths.len() - 2 - k`.
pub fn mlp_backward(widths: &[u64], batch: u64) -> LayerGraph {
    let mut graph = mlp(widths, batch, false);
    let last = widths.last().copied().unwrap_or(1);
    graph.inputs = vec![tensor("dy", vec![batch, last])];
    graph.layers.clear();
    let mut current = TensorRef::Input(0);
    for (i, pair) in widths.windows(2).enumerate().rev() {
        let mut layer = dense_back(i + 1, current, TensorRef::Param(2 * i), pair[0], pair[1]);
        layer.dims.insert("B".into(), batch);
        layer.output_shape = vec![batch, pair[0]];
        current = TensorRef::Layer(graph.layers.len());
        graph.layers.push(layer);
    }
    graph.output = current;
    graph
}
