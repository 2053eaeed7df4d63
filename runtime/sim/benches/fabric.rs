//! Simulator throughput and memory: wavelet-hops per second and peak RSS for (a) a 64×64
//! halo exchange repeated many rounds, on 1 and 2 threads, and (b) one halo-exchange round on
//! the full WSE-2 fabric (750 × 994 PEs).
//!
//! Also (c): long uncontended streams (one per row of a 64 × 64 region, west edge to east
//! edge, repeated), with and without express streams (one event per stream).
//!
//! And (d) the balance of the partitions (`PartitionLoad`) when the activity moves down the
//! fabric band by band (`workloads::phased_rows`: 4 weight phases of 64 rows, 256 PEs wide, on
//! wse2), for 1 to 16 threads.
//!
//! And (e) weight rows scattered along every row of wse2 by ramp filters, in closed form.
//!
//! And (f) determinism on the full fabric: one halo-exchange round on all of wse2 with 1, 2,
//! 3 and 8 threads, each outcome hashed (cycles, host outputs, the JSON report with every
//! PE's and link's figures, every PE's final SRAM): the hashes must be equal.
//!
//! Run with `cargo bench -p wsel-sim --bench fabric`. Optional arguments: `small`, `full`,
//! `streams`, `balance`, `scatter` or `determinism` to run one part only, `small1` for the 1-thread part alone; `SIDE=n` changes the
//! side of the small halo exchange (rounds scale so the wavelet count stays about the same),
//! `ROUNDS=n` its number of rounds, `RUNS=n` the number of runs of `small1` (for instruction
//! counts under callgrind: `RUNS=1 ROUNDS=5`), `BOUNDARIES=0` runs it without wse2's die
//! boundaries. On one thread the halo's rates are also given per second of the thread's CPU
//! time, the figure to compare on a shared machine.

mod common;

use common::{env_or, median};
use std::time::Instant;

/// The allocator the `wsel` binary uses, so that these figures are what `wsel run` gets.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use wsel_sim::workloads::{halo_exchange, phased_rows, scatter_rows};
use wsel_sim::{Outcome, Program, SimOptions, TaskContext, simulate, task};
use wsel_target::{Coord, Port, PortSet, Target, shortest_path};

/// Simulate `program`, panicking with `what` on an error; the outcome and the seconds taken.
fn timed(target: &Target, program: &Program, opts: &SimOptions, what: &str) -> (Outcome, f64) {
    let start = Instant::now();
    let out = simulate(target, program, opts).expect(what);
    (out, start.elapsed().as_secs_f64())
}

/// The CPU time the calling thread has used, in seconds (Linux's schedstat; 0 elsewhere). On
/// one thread the simulation runs in the calling thread, so this is its CPU time even when
/// other jobs share the cores.
fn thread_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns = stat
        .split_whitespace()
        .next()
        .and_then(|v| v.parse::<u64>().ok());
    ns.map_or(0.0, |ns| ns as f64 / 1e9)
}

/// Peak resident set size of this process so far, in bytes (Linux; 0 elsewhere).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

fn small(threads: usize, runs: usize) {
    let side: u32 = env_or("SIDE", 64);
    let mut target = Target::wse2();
    // BOUNDARIES=0: without wse2's die boundaries (the halo crosses the one before column 47).
    if env_or("BOUNDARIES", 1u32) == 0 {
        target.boundary = Default::default();
    }
    let rounds = env_or("ROUNDS", 20 * 4096 / (side * side));
    let n = 32;
    let program = halo_exchange(Coord::new(0, 0), side, side, n, rounds);
    let opts = SimOptions {
        threads,
        exact_threads: true,
        ..SimOptions::default()
    };
    let mut rates = Vec::new();
    let mut cpu_rates = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let cpu = thread_cpu();
        let (out, secs) = timed(&target, &program, &opts, "halo exchange runs");
        let hops = out.report.wavelet_hops as f64;
        rates.push(hops / secs);
        cpu_rates.push(hops / (thread_cpu() - cpu));
        last = Some((out.report.wavelet_hops, out.cycles, secs));
    }
    let (hops, cycles, secs) = last.expect("at least one run");
    println!(
        "(a) halo {side}x{side}, n={n}, {rounds} rounds, {threads} thread(s): {hops} wavelet-hops, {cycles} cycles, \
         last run {secs:.3} s; median {:.1} M wavelet-hops/s over {runs} runs ({:.1} M/s per thread); peak RSS {:.0} MiB",
        median(rates.clone()) / 1e6,
        median(rates) / 1e6 / threads as f64,
        peak_rss() as f64 / (1 << 20) as f64
    );
    if threads == 1 {
        let cpu: Vec<String> = cpu_rates
            .iter()
            .map(|r| format!("{:.1}", r / 1e6))
            .collect();
        println!(
            "    per second of this thread's CPU time: {} M wavelet-hops/s (median {:.1})",
            cpu.join(", "),
            median(cpu_rates) / 1e6
        );
    }
}

fn full(threads: usize) {
    let target = Target::wse2();
    let n = 16;
    let build = Instant::now();
    let program = halo_exchange(Coord::new(0, 0), target.width, target.height, n, 1);
    let built = build.elapsed().as_secs_f64();
    let opts = SimOptions {
        threads,
        exact_threads: true,
        ..SimOptions::default()
    };
    let (out, secs) = timed(&target, &program, &opts, "full-fabric round runs");
    println!(
        "(b) halo {}x{} (full wse2), n={n}, 1 round, {threads} thread(s): {} wavelet-hops, {} cycles; \
         program built in {built:.2} s, simulated (incl. layout) in {secs:.2} s = {:.1} M wavelet-hops/s; peak RSS {:.2} GiB",
        target.width,
        target.height,
        out.report.wavelet_hops,
        out.cycles,
        out.report.wavelet_hops as f64 / secs / 1e6,
        peak_rss() as f64 / (1u64 << 30) as f64
    );
}

/// Each row's west PE sends `n` words to its east PE `rounds` times (the receiver answers
/// with one word back on another color before the next round).
fn row_streams(side: u32, n: u32, rounds: u32) -> Program {
    let mut p = Program::new();
    let send = task(move |ctx: &mut TaskContext<'_>| {
        let round = ctx.read_u32(4 * n)?;
        if round < rounds {
            ctx.write_u32(4 * n, round + 1)?;
            ctx.recv(1, 1, 4 * n + 4, 0)?;
            ctx.send(0, 0, n, None)?;
        }
        Ok(())
    });
    let recv = task(move |ctx: &mut TaskContext<'_>| {
        let round = ctx.read_u32(4 * n)?;
        if round > 0 {
            ctx.send_scalar(1, round, None)?;
        }
        if round < rounds {
            ctx.write_u32(4 * n, round + 1)?;
            ctx.recv(0, n, 0, 0)?;
        }
        Ok(())
    });
    let ks = p.add_kernel("send", vec![("main", send)]);
    let kr = p.add_kernel("recv", vec![("main", recv)]);
    let target = Target::wse2();
    for y in 0..side {
        let (a, b) = (Coord::new(0, y), Coord::new(side - 1, y));
        p.add_pe(a, ks, 4 * n + 8, &[0, 1], &[0]);
        p.add_pe(b, kr, 4 * n + 8, &[0, 1], &[0]);
        let there = shortest_path(&target, a, b).expect("routable");
        p.add_route_entries(0, &there.entries(Port::Ramp, PortSet::only(Port::Ramp)));
        let back = shortest_path(&target, b, a).expect("routable");
        p.add_route_entries(1, &back.entries(Port::Ramp, PortSet::only(Port::Ramp)));
    }
    p
}

fn streams() {
    let target = Target::wse2();
    let (side, n, rounds) = (64, 1024, 20);
    let program = row_streams(side, n, rounds);
    for express_streams in [false, true] {
        let opts = SimOptions {
            express_streams,
            ..SimOptions::default()
        };
        let mut rates = Vec::new();
        let mut last = None;
        for _ in 0..3 {
            let (out, secs) = timed(&target, &program, &opts, "streams run");
            rates.push(out.report.wavelet_hops as f64 / secs);
            last = Some((out.report.wavelet_hops, out.cycles, out.express, secs));
        }
        let (hops, cycles, express, secs) = last.expect("at least one run");
        println!(
            "(c) {side} row streams of {n} words over {} hops, {rounds} rounds, 1 thread, express streams {}: \
             {hops} wavelet-hops, {cycles} cycles, last run {secs:.3} s; median {:.1} M wavelet-hops/s ({express:?})",
            side - 1,
            if express_streams { "on" } else { "off" },
            median(rates) / 1e6,
        );
    }
}

fn balance() {
    let target = Target::wse2();
    let program = phased_rows(4, 64, 256, 512, 2);
    for threads in [1, 2, 4, 8, 16] {
        let opts = SimOptions {
            threads,
            exact_threads: true,
            ..SimOptions::default()
        };
        let (out, secs) = timed(&target, &program, &opts, "phased rows run");
        let steps: Vec<u64> = out
            .loads
            .iter()
            .map(|l| l.router_steps + l.pe_wakes)
            .collect();
        let busy: Vec<f64> = out.loads.iter().map(|l| l.busy.as_secs_f64()).collect();
        let ratio = |v: &[f64]| {
            let mean = v.iter().sum::<f64>() / v.len() as f64;
            v.iter().copied().fold(0.0, f64::max) / mean
        };
        let steps_f: Vec<f64> = steps.iter().map(|&s| s as f64).collect();
        println!(
            "(d) phased rows (4 x 64 rows x 256 PEs, wse2), {threads} thread(s): {} wavelet-hops, {} cycles, {secs:.2} s; \
             {} partitions, work (router steps + PE wakes) max/mean {:.2}, busy time max/mean {:.2}; work per partition {steps:?}",
            out.report.wavelet_hops,
            out.cycles,
            out.loads.len(),
            ratio(&steps_f),
            ratio(&busy),
        );
    }
}

/// (e) Weight rows scattered along every row of wse2 by ramp filters (a weight-streaming
/// layer's delivery): with express streams on and, on a smaller share, off.
fn scatter() {
    let target = Target::wse2();
    for (rows, express_streams) in [(994, true), (16, false), (16, true)] {
        let (width, chunk, repeats) = (750, 16, 4);
        let program = scatter_rows(rows, width, chunk, repeats);
        let opts = SimOptions {
            express_streams,
            ..SimOptions::default()
        };
        let (out, secs) = timed(&target, &program, &opts, "scatter runs");
        println!(
            "(e) scatter {rows} rows x {width} PEs x {chunk} words x {repeats} weight rows (wse2), express {}: \
             {} wavelet-hops, {} delivered, {} cycles, {secs:.2} s (layout included) = {:.1} M wavelet-hops/s; {:?}; peak RSS {:.2} GiB",
            if express_streams { "on" } else { "off" },
            out.report.wavelet_hops,
            out.report.wavelets_delivered,
            out.cycles,
            out.report.wavelet_hops as f64 / secs / 1e6,
            out.express,
            peak_rss() as f64 / (1u64 << 30) as f64
        );
    }
}

/// (f) One full-wse2 halo round on 1, 2, 3 and 8 threads: the same outcome, by hash.
fn determinism() {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let target = Target::wse2();
    let program = halo_exchange(Coord::new(0, 0), target.width, target.height, 16, 1);
    for threads in [1, 2, 3, 8] {
        let opts = SimOptions {
            threads,
            exact_threads: true,
            ..SimOptions::default()
        };
        let (out, secs) = timed(&target, &program, &opts, "full-fabric round runs");
        let mut h = DefaultHasher::new();
        (out.cycles, &out.outputs, out.report.to_json()).hash(&mut h);
        for pe in &program.pes {
            out.sram(pe.at).hash(&mut h);
        }
        println!(
            "(f) halo full wse2, n=16, 1 round, {threads} thread(s): {} wavelet-hops, {} cycles, {secs:.2} s; outcome hash {:016x}",
            out.report.wavelet_hops,
            out.cycles,
            h.finish()
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let want = |name: &str| args.iter().any(|a| a == name) || (args.is_empty() && name != "small1");
    if want("small") {
        small(1, 5);
        small(2, 5);
    }
    if want("small1") {
        let runs = env_or("RUNS", 3).max(1);
        small(1, runs);
    }
    if want("streams") {
        streams();
    }
    if want("full") {
        full(2);
    }
    if want("balance") {
        balance();
    }
    if want("scatter") {
        scatter();
    }
    if want("determinism") {
        determinism();
    }
}
