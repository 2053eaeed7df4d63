//! Lowered kernels compute what the source says: small kernels are lowered, compiled with
//! every code generator (the reference interpreter and the Cranelift JIT), run against a fake
//! runtime, and their SRAM and runtime calls compared with values computed independently here
//! (in `f64`, as NumPy would).

mod common;

use std::ffi::c_void;

use wsel_abi::{RuntimeCalls, STATUS_OK, STATUS_OUT_OF_BOUNDS, TaskCtx};
use wsel_codegen::{Backend, compile};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{KernelIr, TaskId};

/// A runtime call a task made.
#[derive(Debug, Clone, PartialEq)]
enum Event {
    Send {
        port: u32,
        data: Vec<u32>,
        then: u32,
    },
    SendScalar {
        port: u32,
        value: u32,
    },
    Recv {
        port: u32,
        n: u32,
        offset: u32,
        then: u32,
    },
    Activate(u32),
    OutOfBounds {
        array: u32,
        index: u64,
    },
}

/// This PE's place: column, row, region columns, region rows.
#[derive(Debug, Clone, Copy)]
struct Pe {
    col: u32,
    row: u32,
    cols: u32,
    rows: u32,
}

/// A kernel instance's SRAM, addressed by array name.
struct Sram<'k> {
    kernel: &'k KernelIr,
    words: Vec<u32>,
}

impl<'k> Sram<'k> {
    fn new(kernel: &'k KernelIr) -> Self {
        let mut words = vec![0u32; kernel.sram_words() as usize];
        for array in &kernel.arrays {
            let start = array.offset_words as usize;
            words[start..start + array.len as usize].fill(array.init.bits);
        }
        Sram { kernel, words }
    }

    fn range(&self, name: &str) -> std::ops::Range<usize> {
        let array = self
            .kernel
            .arrays
            .iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("no array {name}"));
        let start = array.offset_words as usize;
        start..start + array.len as usize
    }

    fn set_f32(&mut self, name: &str, values: &[f32]) {
        let range = self.range(name);
        assert_eq!(range.len(), values.len(), "{name}");
        for (word, v) in self.words[range].iter_mut().zip(values) {
            *word = v.to_bits();
        }
    }

    fn set_u32(&mut self, name: &str, value: u32) {
        let range = self.range(name);
        self.words[range].fill(value);
    }

    fn f32s(&self, name: &str) -> Vec<f32> {
        self.words[self.range(name)]
            .iter()
            .map(|w| f32::from_bits(*w))
            .collect()
    }
}

/// Runs `task` once with every backend on a copy of `sram`; asserts the backends agree on
/// the status, SRAM and runtime calls, and gives the interpreter's SRAM and calls.
fn run(sram: &Sram<'_>, task: &str, pe: Pe) -> (Vec<u32>, Vec<Event>) {
    let kernel = sram.kernel;
    let task = TaskId(
        kernel
            .tasks
            .iter()
            .position(|t| t.name == task)
            .expect("task") as u32,
    );
    let mut first: Option<(Vec<u32>, Vec<Event>)> = None;
    for &backend in Backend::ALL {
        let compiled = compile(kernel, backend, &CostModel::WSE2_LIKE).expect("compiles");
        let mut words = sram.words.clone();
        let mut fake = Fake { events: Vec::new() };
        let mut ctx = TaskCtx {
            sram: words.as_mut_ptr().cast(),
            sram_len: (words.len() * 4) as u32,
            task: task.0,
            x: pe.col,
            y: pe.row,
            width: pe.cols,
            height: pe.rows,
            args: std::ptr::null(),
            n_args: 0,
            reserved: 0,
            cycles: 0,
            runtime: (&mut fake as *mut Fake).cast::<c_void>(),
            calls: &CALLS,
            cycle_limit: wsel_abi::NO_CYCLE_LIMIT,
            clock: 0,
        };
        // SAFETY: the context points at live SRAM of `sram_len` bytes, the call table and the
        // fake runtime, all outliving the call.
        let status = unsafe { compiled.run(task, &mut ctx) };
        assert_eq!(status, STATUS_OK, "{backend}: {:?}", fake.events);
        let outcome = (words, fake.events);
        match &first {
            None => first = Some(outcome),
            Some(expected) => assert_eq!(expected, &outcome, "{backend} differs"),
        }
    }
    first.expect("a backend")
}

struct Fake {
    events: Vec<Event>,
}

const CALLS: RuntimeCalls = RuntimeCalls {
    send,
    send_scalar,
    recv,
    activate,
    out_of_bounds,
};

/// # Safety
/// `ctx` must be a context built by `run`.
unsafe fn fake<'a>(ctx: *mut TaskCtx) -> (&'a mut Fake, &'a TaskCtx) {
    // SAFETY: `run` points `runtime` at a live `Fake` not otherwise borrowed during the call.
    unsafe { (&mut *(*ctx).runtime.cast::<Fake>(), &*ctx) }
}

unsafe extern "C" fn send(ctx: *mut TaskCtx, port: u32, offset: u32, n: u32, then: u32) -> u32 {
    // SAFETY: called by compiled code with the context `run` built.
    let (fake, ctx) = unsafe { fake(ctx) };
    assert!(u64::from(offset) + 4 * u64::from(n) <= u64::from(ctx.sram_len));
    let data = (0..n as usize)
        // SAFETY: inside SRAM (asserted above) and word-aligned.
        .map(|i| unsafe { ctx.sram.add(offset as usize).cast::<u32>().add(i).read() })
        .collect();
    fake.events.push(Event::Send { port, data, then });
    STATUS_OK
}

unsafe extern "C" fn send_scalar(ctx: *mut TaskCtx, port: u32, value: u32, _then: u32) -> u32 {
    // SAFETY: called by compiled code with the context `run` built.
    let (fake, _) = unsafe { fake(ctx) };
    fake.events.push(Event::SendScalar { port, value });
    STATUS_OK
}

unsafe extern "C" fn recv(ctx: *mut TaskCtx, port: u32, n: u32, offset: u32, then: u32) -> u32 {
    // SAFETY: called by compiled code with the context `run` built.
    let (fake, _) = unsafe { fake(ctx) };
    fake.events.push(Event::Recv {
        port,
        n,
        offset,
        then,
    });
    STATUS_OK
}

unsafe extern "C" fn activate(ctx: *mut TaskCtx, task: u32) -> u32 {
    // SAFETY: called by compiled code with the context `run` built.
    let (fake, _) = unsafe { fake(ctx) };
    fake.events.push(Event::Activate(task));
    STATUS_OK
}

unsafe extern "C" fn out_of_bounds(ctx: *mut TaskCtx, array: u32, index: u64, _bound: u64) -> u32 {
    // SAFETY: called by compiled code with the context `run` built.
    let (fake, _) = unsafe { fake(ctx) };
    fake.events.push(Event::OutOfBounds { array, index });
    STATUS_OUT_OF_BOUNDS
}

fn close(found: &[f32], expected: &[f64]) {
    assert_eq!(found.len(), expected.len());
    for (f, e) in found.iter().zip(expected) {
        assert!(
            (f64::from(*f) - e).abs() <= 1e-6 * e.abs().max(1.0),
            "found {found:?}, expected {expected:?}"
        );
    }
}

const DOT_SOFTMAX: &str = r"
kernel k(n: u32) {
    var x: [f32; n];
    var w: [f32; n];
    var prod: [f32; n];
    var dot: f32;
    var e: [f32; n];
    var p: [f32; n];
    out ys: stream<f32> to south;
    task main() {
        prod[0..n] = x[0..n] * w[0..n];
        dot = sum(prod[0..n]);
        let mx = max(x[0..n]);
        e[0..n] = exp(x[0..n] - mx);
        let s = sum(e[0..n]);
        p[0..n] = e[0..n] / s;
        send(ys, p[0..n]);
        send(ys, dot * 2.0);
    }
}
";

#[test]
fn dot_product_and_softmax_match_numpy() {
    let (db, file) = common::load_one(DOT_SOFTMAX);
    let kernel = common::lower(&db, file, "k", &[("n", 4)]);
    let mut sram = Sram::new(&kernel);
    let x = [0.5f32, -1.0, 2.0, 0.25];
    let w = [1.0f32, 2.0, -0.5, 4.0];
    sram.set_f32("x", &x);
    sram.set_f32("w", &w);
    let pe = Pe {
        col: 0,
        row: 0,
        cols: 1,
        rows: 1,
    };
    let (words, events) = run(&sram, "main", pe);
    let after = Sram {
        kernel: &kernel,
        words,
    };
    // NumPy: x @ w; e = np.exp(x - x.max()); e / e.sum()
    let dot: f64 = x
        .iter()
        .zip(&w)
        .map(|(a, b)| f64::from(*a) * f64::from(*b))
        .sum();
    let max = x.iter().copied().fold(f32::MIN, f32::max);
    let e: Vec<f64> = x
        .iter()
        .map(|v| (f64::from(*v) - f64::from(max)).exp())
        .collect();
    let total: f64 = e.iter().sum();
    let p: Vec<f64> = e.iter().map(|v| v / total).collect();
    close(&after.f32s("dot"), &[dot]);
    close(&after.f32s("e"), &e);
    close(&after.f32s("p"), &p);
    let [
        Event::Send {
            port: 0,
            data,
            then,
        },
        Event::SendScalar { port: 0, value },
    ] = events.as_slice()
    else {
        panic!("unexpected runtime calls {events:?}");
    };
    assert_eq!(*then, wsel_abi::NO_TASK);
    let sent: Vec<f32> = data.iter().map(|w| f32::from_bits(*w)).collect();
    close(&sent, &p);
    close(&[f32::from_bits(*value)], &[2.0 * dot]);
}

const STDLIB_DENSE: &str = "import std.nn.{dense_tile};";

#[test]
fn the_stdlib_dense_tile_multiplies_and_adds_its_bias() {
    let (db, file) = common::load_one(STDLIB_DENSE);
    let kernel = common::lower(
        &db,
        file,
        "dense_tile",
        &[
            ("n", 3),
            ("m", 2),
            ("samples", 2),
            ("n_total", 3),
            ("m_total", 2),
            ("act", 0),
        ],
    );
    let mut sram = Sram::new(&kernel);
    // W is 3 x 2, row-major; x has 3 elements; b has 2.
    let w = [1.0f32, -2.0, 0.5, 3.0, -1.5, 0.25];
    let x = [2.0f32, 1.0, -4.0];
    let b = [0.125f32, -0.5];
    sram.set_f32("w", &w);
    sram.set_f32("x", &x);
    sram.set_f32("bias", &b);
    // What `main` computes on a PE of a 1 x 1 region: the whole 3 x 2 tile.
    sram.set_u32("rn", 3);
    sram.set_u32("cm", 2);
    // One row of PEs: row 0 is also the last row, so `have_x` activates `emit` at once.
    let pe = Pe {
        col: 0,
        row: 0,
        cols: 1,
        rows: 1,
    };
    let (words, events) = run(&sram, "have_x", pe);
    let task_id = |name: &str| {
        kernel
            .tasks
            .iter()
            .position(|t| t.name == name)
            .expect("task") as u32
    };
    assert_eq!(events, vec![Event::Activate(task_id("emit"))]);
    let after = Sram {
        kernel: &kernel,
        words,
    };
    let xw: Vec<f64> = (0..2)
        .map(|j| {
            (0..3)
                .map(|i| f64::from(x[i]) * f64::from(w[i * 2 + j]))
                .sum()
        })
        .collect();
    close(&after.f32s("acc"), &xw);

    // `emit` adds the bias on the last row, sends y, counts the sample and re-arms the receive.
    let (words, events) = run(&after, "emit", pe);
    let y: Vec<f64> = xw.iter().zip(&b).map(|(a, b)| a + f64::from(*b)).collect();
    let emitted = Sram {
        kernel: &kernel,
        words,
    };
    close(&emitted.f32s("acc"), &y);
    let x_offset = kernel
        .arrays
        .iter()
        .find(|a| a.name == "x")
        .expect("x")
        .offset_words
        * 4;
    match events.as_slice() {
        [
            Event::Send { port, data, .. },
            Event::Recv {
                port: recv_port,
                n: 3,
                offset,
                then,
            },
        ] => {
            assert_eq!(kernel.ports[*port as usize].name, "ysum");
            assert_eq!(kernel.ports[*recv_port as usize].name, "xs");
            assert_eq!(*offset, x_offset);
            assert_eq!(*then, task_id("have_x"));
            let sent: Vec<f32> = data.iter().map(|w| f32::from_bits(*w)).collect();
            close(&sent, &y);
        }
        other => panic!("unexpected runtime calls {other:?}"),
    }

    // On row 1 of 2 rows, `have_x` waits for the partial sums from above instead.
    let below = Pe {
        col: 0,
        row: 1,
        cols: 1,
        rows: 2,
    };
    let (_, events) = run(&sram, "have_x", below);
    assert!(
        matches!(events.as_slice(), [Event::Recv { n: 2, .. }]),
        "{events:?}"
    );
}

const PARTS: &str = r"
kernel k(total: u32) {
    var len: [u32; 8];
    var start: [u32; 8];
    var largest: [u32; part_len(total, 3, 0)];
    task main() {
        for i in 0..region.cols {
            len[i] = part_len(total, region.cols, i);
            start[i] = part_start(total, region.cols, i);
        }
    }
}
";

#[test]
fn part_len_and_part_start_follow_the_uneven_split_rule() {
    let (db, file) = common::load_one(PARTS);
    let kernel = common::lower(&db, file, "k", &[("total", 17)]);
    // 17 over 3: the largest part has 6 elements.
    let largest = kernel.arrays.iter().find(|a| a.name == "largest");
    assert_eq!(largest.map(|a| a.len), Some(6));
    let sram = Sram::new(&kernel);
    let pe = Pe {
        col: 0,
        row: 0,
        cols: 5,
        rows: 1,
    };
    let (words, _) = run(&sram, "main", pe);
    let after = Sram {
        kernel: &kernel,
        words,
    };
    // 17 over 5 parts: 17 / 5 = 3 each, one more for the first 17 % 5 = 2.
    assert_eq!(&after.words[after.range("len")][..5], &[4, 4, 3, 3, 3]);
    assert_eq!(&after.words[after.range("start")][..5], &[0, 4, 8, 11, 14]);
}

const LIFE_RULE: &str = r"
kernel k(n: u32) {
    var alive: [f32; n];
    var neighbours: [f32; n];
    var born: [bool; n];
    var next: [f32; n];
    var clipped: f32;
    task main() {
        born[0..n] = neighbours[0..n] == 3.0;
        next[0..n] = select(born[0..n] || (alive[0..n] > 0.5 && neighbours[0..n] == 2.0), 1.0, 0.0);
        clipped = select(sum(next[0..n]) > 2.0, 2.0, sum(next[0..n]));
    }
}
";

#[test]
fn masks_and_select_apply_the_game_of_life_rule() {
    let (db, file) = common::load_one(LIFE_RULE);
    let kernel = common::lower(&db, file, "k", &[("n", 6)]);
    let mut sram = Sram::new(&kernel);
    let alive = [1.0f32, 1.0, 0.0, 0.0, 1.0, 0.0];
    let neighbours = [2.0f32, 3.0, 3.0, 2.0, 4.0, 1.0];
    sram.set_f32("alive", &alive);
    sram.set_f32("neighbours", &neighbours);
    let pe = Pe {
        col: 0,
        row: 0,
        cols: 1,
        rows: 1,
    };
    let (words, _) = run(&sram, "main", pe);
    let after = Sram {
        kernel: &kernel,
        words,
    };
    // NumPy: born = nb == 3; next = np.where(born | ((alive > 0.5) & (nb == 2)), 1.0, 0.0)
    let next: Vec<f64> = alive
        .iter()
        .zip(&neighbours)
        .map(|(a, n)| f64::from(u8::from(*n == 3.0 || (*a > 0.5 && *n == 2.0))))
        .collect();
    close(&after.f32s("next"), &next);
    let born: Vec<u32> = neighbours.iter().map(|n| u32::from(*n == 3.0)).collect();
    assert_eq!(&after.words[after.range("born")], born.as_slice());
    // Three cells live next (0, 1, 2): select(3 > 2, 2.0, 3.0) = 2.0.
    close(&after.f32s("clipped"), &[2.0]);
}
