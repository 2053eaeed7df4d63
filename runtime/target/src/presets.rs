//! The built-in targets `dev`, `wse2` and `wse3`, each with the source of every figure.
//!
//! Figures marked **public** come from Cerebras's public material (the WSE-2 / WSE-3
//! announcements and the Cerebras SDK / CSL documentation). Figures marked **default** are not
//! public: they are documented defaults chosen by the wsel project, kept as target fields so
//! that a target file can change them. Figures marked **fitted** are not public either: wsel
//! fitted them to published measurements, cited beside them. [`sources`] returns the same
//! notes as data, so front ends can print them beside the numbers.

use crate::boundary::Boundary;
use crate::defects::DefectMap;
use crate::swarm::Swarm;
use crate::switched::Switched;
use crate::target::{HostIo, Launch, Ramp, Target, TargetError, Throughput, WeightStore};

/// Names of the built-in presets.
/// The store's inbound bandwidth for gradients and its optimizer throughput: not public for
/// any machine; defaults chosen by wsel (as the outbound 64 B/cycle of `dev`, and 16
/// parameter updates per cycle), the same for every preset.
const GRAD_BW: u32 = 64;
const UPDATE_RATE: u32 = 16;

pub const PRESET_NAMES: [&str; 3] = ["dev", "wse2", "wse3"];

impl Target {
    /// The preset called `name` (`dev`, `wse2` or `wse3`).
    pub fn preset(name: &str) -> Result<Target, TargetError> {
        match name {
            "dev" => Ok(Target::dev()),
            "wse2" => Ok(Target::wse2()),
            "wse3" => Ok(Target::wse3()),
            _ => Err(TargetError::UnknownPreset(name.to_string())),
        }
    }

    /// A small fabric for fast tests: 16 × 16 PEs with only 4 KiB of SRAM each (so tests can
    /// overflow it) and a hop latency of 2 (so timing tests notice latency mistakes). Every
    /// figure is a default chosen by wsel.
    pub fn dev() -> Target {
        Target {
            name: "dev".to_string(),
            width: 16,
            height: 16,
            sram_bytes: 4 * 1024,
            sram_banks: 2,
            colors: 24,
            queue_depth: 4,
            hop_latency: 2,
            link_bytes_per_cycle: 4,
            task_switch_cycles: 2,
            reconfigure_cycles: 100,
            clock_hz: 850_000_000,
            fp32: Throughput {
                add: 2,
                mul: 1,
                fma: 1,
            },
            fp16: Throughput {
                add: 4,
                mul: 4,
                fma: 4,
            },
            weight_store: WeightStore {
                capacity_bytes: 1 << 30,
                bandwidth_bytes_per_cycle: 64,
                latency_cycles: 100,
                gradient_bandwidth_bytes_per_cycle: GRAD_BW,
                update_elements_per_cycle: UPDATE_RATE,
            },
            host_io: HostIo {
                bandwidth_bytes_per_cycle: 64,
            },
            launch: Launch::default(),
            boundary: Boundary::default(),
            ramp: Ramp::default(),
            switched: Switched::default(),
            swarm: Swarm::dev(),
            defects: DefectMap::new(),
        }
    }

    /// Cerebras WSE-2 (in the CS-2 system). See [`sources`] for every figure's origin.
    pub fn wse2() -> Target {
        Target {
            name: "wse2".to_string(),
            // Public (Cerebras SDK documentation): the fabric is 757 × 996 PEs, of which
            // 750 × 994 are usable by programs once host I/O is set aside.
            width: 750,
            height: 994,
            // Public (WSE-2 / SDK documentation): 48 KiB of SRAM per PE in 8 banks of 6 KiB.
            sram_bytes: 48 * 1024,
            sram_banks: 8,
            // Public (SDK documentation): 24 routable colors.
            colors: 24,
            // Default (wsel): router input queue depth is not public.
            queue_depth: 4,
            // Default (wsel): hop latency is not public; one cycle per hop.
            hop_latency: 1,
            // Public (SDK documentation): one 32-bit wavelet per cycle per link direction.
            link_bytes_per_cycle: 4,
            // Fitted (wsel, `examples/fidelity`): the task-switch cost is not public. The
            // sliding-window-rpc round trip measured on a CS-2 (n-io/sliding-window, commit
            // e770efa, `results/out_cs2.csv`) costs 35.2 cycles beyond its hops and elements
            // (least squares over W ≥ 103); wsel's port costs 25.4 at 4 cycles with three
            // task activations on the round trip, so 7 (34.4). A transfer issue cost adds to
            // the same intercept and cannot be told apart from it by this program, so it is
            // not a field: issuing a send or receive costs what its statement costs. Two
            // receives (or two sends) share a ramp round-robin, 4.00 cycles per element of the
            // round trip against the CS-2's 4.08; sends and receives together: `ramp` below.
            task_switch_cycles: 7,
            // Default (wsel): the time to load a layer's code and routes between two phases of
            // weight streaming is not public; 1,000 cycles.
            reconfigure_cycles: 1000,
            // Public (SDK documentation): 850 MHz, the clock the SDK uses to turn cycles into time.
            clock_hz: 850_000_000,
            // Public (SDK documentation): fp32 add/sub/mov 2 per cycle, fp32 fma 1 per cycle.
            // fp32 mul is not listed separately; wsel assumes the fma rate (1).
            fp32: Throughput {
                add: 2,
                mul: 1,
                fma: 1,
            },
            // Public (SDK documentation): fp16 add/mul/fma 4 per cycle.
            fp16: Throughput {
                add: 4,
                mul: 4,
                fma: 4,
            },
            weight_store: WeightStore {
                // Public (Cerebras MemoryX announcement for CS-2): up to 2.4 PB.
                capacity_bytes: 2_400_000_000_000_000,
                // Default (wsel): bandwidth into the fabric is not public; 128 bytes per cycle.
                bandwidth_bytes_per_cycle: 128,
                // Default (wsel): latency is not public; 1,000 cycles.
                latency_cycles: 1000,
                gradient_bandwidth_bytes_per_cycle: GRAD_BW,
                update_elements_per_cycle: UPDATE_RATE,
            },
            // Default (wsel): 176 bytes per cycle, our reading of the CS-2 system's published
            // 1.2 Tb/s of I/O at 850 MHz; how the edge shares it is our assumption.
            host_io: HostIo {
                bandwidth_bytes_per_cycle: 176,
            },
            // The SwarmX figures: see `Swarm::wse2` (public and default figures marked there).
            // Default (wsel): every program starts at cycle 0.
            launch: Launch::default(),
            // Fitted (wsel, `examples/fidelity`): the CS-2's sliding-window-rpc round trips
            // jump by +28 or +58 cycles at some widths (boundaries crossed there and back,
            // once or twice): per crossing 15 cycles more than a hop, every 66 columns, in
            // phase with those jumps for a row placed at column 0. Rows: not measured.
            boundary: Boundary {
                columns: 66,
                rows: 0,
                first_column: 47,
                first_row: 0,
                extra_cycles: 15,
            },
            // Default (wsel): how a PE's transfers share its ramp is not public; one wavelet
            // each way per cycle. The CS-2's synchronous-slide figures (n-io/sliding-window,
            // commit e770efa) charge the right half's chain more than the left's though the
            // program differs only in the queues each half uses; a ramp carrying one wavelet
            // per cycle in or out, the lower queue (color) first, tells them apart
            // (`examples/fidelity/cs2-ramp.toml`), but moves the port's medians against the
            // CS-2 only from 0.65 / 0.43 / 0.38 (left / middle / right) to 0.69 / 0.49 /
            // 0.44, so it is not the default.
            ramp: Ramp::default(),
            // Default (wsel): how fast a router forwards through a switched route is not
            // public; a wavelet per cycle each way, as a plain route. The CS-2's
            // synchronous-slide figures ask for a slower westward switched stream than
            // eastward (`examples/fidelity/cs2-slide.toml` fits both).
            switched: Switched::default(),
            swarm: Swarm::wse2(),
            defects: DefectMap::new(),
        }
    }

    /// Cerebras WSE-3 (in the CS-3 system). See [`sources`] for every figure's origin.
    pub fn wse3() -> Target {
        Target {
            name: "wse3".to_string(),
            // Public (WSE-3 figures as given in the wsel design brief): 762 × 1176 PEs.
            width: 762,
            height: 1176,
            // Public: 48 KiB per PE; banking assumed as on WSE-2 (8 × 6 KiB).
            sram_bytes: 48 * 1024,
            sram_banks: 8,
            // Public: 24 colors.
            colors: 24,
            // Default (wsel), as for WSE-2.
            queue_depth: 4,
            hop_latency: 1,
            link_bytes_per_cycle: 4,
            task_switch_cycles: 4,
            reconfigure_cycles: 1000,
            // Default (wsel): the SDK's WSE-3 clock is not stated in the sources we cite; we
            // keep WSE-2's 850 MHz.
            clock_hz: 850_000_000,
            // Public: SIMD width doubled relative to WSE-2 (fp16 8, fp32 4 per cycle); fp32
            // fma and mul doubled from WSE-2's 1 by the same reasoning (assumption).
            fp32: Throughput {
                add: 4,
                mul: 2,
                fma: 2,
            },
            fp16: Throughput {
                add: 8,
                mul: 8,
                fma: 8,
            },
            weight_store: WeightStore {
                // Public (Cerebras CS-3 announcement): external memory up to 1.2 PB.
                capacity_bytes: 1_200_000_000_000_000,
                // Default (wsel), as for WSE-2.
                bandwidth_bytes_per_cycle: 128,
                latency_cycles: 1000,
                gradient_bandwidth_bytes_per_cycle: GRAD_BW,
                update_elements_per_cycle: UPDATE_RATE,
            },
            // Default (wsel), as for WSE-2.
            host_io: HostIo {
                bandwidth_bytes_per_cycle: 176,
            },
            // The SwarmX figures: see `Swarm::wse2` (public and default figures marked there).
            // Default (wsel): every program starts at cycle 0.
            launch: Launch::default(),
            boundary: Boundary::default(),
            ramp: Ramp::default(),
            switched: Switched::default(),
            swarm: Swarm::wse2(),
            defects: DefectMap::new(),
        }
    }
}

/// Whether a figure is public, a wsel default or fitted by wsel to measurements.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Provenance {
    /// From Cerebras's public material.
    Public,
    /// Not public: a documented default chosen by wsel.
    Default,
    /// Not public: fitted by wsel to published measurements (the fit is cited in the note).
    Fitted,
}

/// One figure of a preset and where it comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Source {
    /// The target field.
    pub field: &'static str,
    /// Public or default.
    pub provenance: Provenance,
    /// The citation or the reasoning behind the default.
    pub note: &'static str,
}

const fn public(field: &'static str, note: &'static str) -> Source {
    Source {
        field,
        provenance: Provenance::Public,
        note,
    }
}

const fn default(field: &'static str, note: &'static str) -> Source {
    Source {
        field,
        provenance: Provenance::Default,
        note,
    }
}

const fn fitted(field: &'static str, note: &'static str) -> Source {
    Source {
        field,
        provenance: Provenance::Fitted,
        note,
    }
}

const WSE2_SOURCES: &[Source] = &[
    public(
        "width/height",
        "Cerebras SDK docs: 757×996 fabric, 750×994 usable by programs",
    ),
    public(
        "sram_bytes/sram_banks",
        "Cerebras WSE-2 / SDK docs: 48 KiB per PE, 8 banks of 6 KiB",
    ),
    public("colors", "Cerebras SDK docs: 24 routable colors"),
    public(
        "link_bytes_per_cycle",
        "Cerebras SDK docs: one 32-bit wavelet per cycle per link",
    ),
    public(
        "clock_hz",
        "Cerebras SDK docs: 850 MHz used to convert cycles to time",
    ),
    public("fp16", "Cerebras SDK docs: fp16 add/mul/fma 4 per cycle"),
    public(
        "fp32",
        "Cerebras SDK docs: fp32 add/sub/mov 2, fma 1 per cycle (mul assumed = fma)",
    ),
    public(
        "weight_store.capacity_bytes",
        "Cerebras MemoryX (CS-2): up to 2.4 PB",
    ),
    default("queue_depth", "not public; 4 wavelets"),
    default("hop_latency", "not public; 1 cycle per hop"),
    fitted(
        "task_switch_cycles",
        "not public; 7 cycles: the CS-2's sliding-window-rpc round trips (examples/fidelity)",
    ),
    fitted(
        "boundary",
        "not public; 15 extra cycles per crossing every 66 columns: the jumps of the CS-2's \
         sliding-window-rpc round trips (examples/fidelity); rows not measured (none)",
    ),
    default(
        "launch.cycles_per_column",
        "not public; 0: every program starts at cycle 0 (a CS-2 fit, 1.2: examples/fidelity)",
    ),
    default(
        "ramp.shared",
        "not public; one wavelet each way per cycle (a shared ramp fitted to the CS-2's \
         synchronous slide: examples/fidelity/cs2-ramp.toml)",
    ),
    default(
        "switched",
        "not public; a wavelet per cycle each way through a switched route (a CS-2 fit to the \
         synchronous slide, slower westward: examples/fidelity/cs2-slide.toml)",
    ),
    default(
        "reconfigure_cycles",
        "not public; 1,000 cycles between weight-streaming phases",
    ),
    default(
        "weight_store.bandwidth_bytes_per_cycle",
        "not public; 128 bytes/cycle",
    ),
    default("weight_store.latency_cycles", "not public; 1,000 cycles"),
    default(
        "weight_store.gradient_bandwidth_bytes_per_cycle",
        "not public; 64 bytes/cycle",
    ),
    default(
        "weight_store.update_elements_per_cycle",
        "not public; 16 parameters/cycle",
    ),
    default(
        "host_io.bandwidth_bytes_per_cycle",
        "not public; 176 B/cycle ≈ CS-2's 1.2 Tb/s at 850 MHz",
    ),
    public(
        "swarm",
        "Cerebras SwarmX: a broadcast/reduce tree from MemoryX to up to 192 CS-2 systems",
    ),
    default(
        "swarm.link_bytes_per_cycle",
        "our reading: a CS-2's 12 × 100 GbE (1.2 Tb/s) ≈ 176 B/cycle at 850 MHz",
    ),
    default(
        "swarm.fan_out/latencies/packet_bytes/reduce",
        "not public; fan-out 4, 850 cycles per link, 425 per switch, 4 KiB packets, sums at line rate",
    ),
];

const WSE3_SOURCES: &[Source] = &[
    public("width/height", "WSE-3 public figures: 762×1176 PEs"),
    public(
        "sram_bytes",
        "WSE-3 public figures: 48 KiB per PE (banking assumed as WSE-2)",
    ),
    public("colors", "WSE-3 public figures: 24 colors"),
    public(
        "link_bytes_per_cycle",
        "one 32-bit wavelet per cycle per link, as WSE-2",
    ),
    public(
        "fp16/fp32",
        "WSE-3 public figures: SIMD doubled (fp16 8, fp32 4 per cycle)",
    ),
    public(
        "weight_store.capacity_bytes",
        "Cerebras CS-3: external memory up to 1.2 PB",
    ),
    default("clock_hz", "not in the sources cited; 850 MHz as WSE-2"),
    default("queue_depth", "not public; 4 wavelets"),
    default("hop_latency", "not public; 1 cycle per hop"),
    default("task_switch_cycles", "not public; 4 cycles"),
    default(
        "boundary",
        "not public; none (wse2's is fitted to CS-2 measurements)",
    ),
    default(
        "launch.cycles_per_column",
        "not public; 0: every program starts at cycle 0 (a CS-2 fit, 1.2: examples/fidelity)",
    ),
    default(
        "ramp.shared",
        "not public; one wavelet each way per cycle (wse2's shared ramp is a CS-2 fit)",
    ),
    default(
        "switched",
        "not public; a wavelet per cycle each way through a switched route (as wse2)",
    ),
    default(
        "reconfigure_cycles",
        "not public; 1,000 cycles between weight-streaming phases",
    ),
    default(
        "weight_store.bandwidth_bytes_per_cycle",
        "not public; 128 bytes/cycle",
    ),
    default("weight_store.latency_cycles", "not public; 1,000 cycles"),
    default(
        "weight_store.gradient_bandwidth_bytes_per_cycle",
        "not public; 64 bytes/cycle",
    ),
    default(
        "weight_store.update_elements_per_cycle",
        "not public; 16 parameters/cycle",
    ),
    default(
        "host_io.bandwidth_bytes_per_cycle",
        "not public; 176 bytes/cycle as WSE-2",
    ),
    default("swarm", "not public for CS-3 clusters; the WSE-2 figures"),
];

const DEV_SOURCES: &[Source] = &[default(
    "all fields",
    "a small test fabric chosen by wsel: 16×16, 4 KiB SRAM, hop latency 2",
)];

/// Where each figure of preset `name` comes from (empty for unknown names).
pub fn sources(name: &str) -> &'static [Source] {
    match name {
        "dev" => DEV_SOURCES,
        "wse2" => WSE2_SOURCES,
        "wse3" => WSE3_SOURCES,
        _ => &[],
    }
}
