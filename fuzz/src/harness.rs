//! Running one target for a fixed time: each input under `catch_unwind`, a watchdog that
//! stops the process when one input runs too long, and every failing input saved as a
//! reproducer under `fuzz/reproducers/` (with `WSEL_FUZZ_KEEP_INPUT` set, every input is
//! written there before it runs, for failures that abort the process).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// How long one input may run before it counts as a hang.
pub const HANG: Duration = Duration::from_secs(20);

/// What one target's run found.
pub struct Tally {
    pub target: &'static str,
    pub inputs: u64,
    pub failures: Vec<PathBuf>,
}

/// Where reproducers go: `fuzz/reproducers/<target>-<n>.<ext>`.
pub fn reproducer_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("reproducers")
}

/// Runs `check` on inputs from `next` until `seconds` are up. `check` panics (or hangs) on
/// a failure; the input is saved first, with extension `ext`.
pub fn run(
    target: &'static str,
    ext: &str,
    seconds: f64,
    next: &mut dyn FnMut() -> Vec<u8>,
    check: &mut dyn FnMut(&[u8]),
) -> Tally {
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    // Every input on disk before it runs, so that an abort (a stack overflow) leaves it behind.
    let keep = std::env::var_os("WSEL_FUZZ_KEEP_INPUT").is_some();
    let started = Arc::new(AtomicU64::new(u64::MAX));
    let current = Arc::new(std::sync::Mutex::new(Vec::new()));
    let clock = Instant::now();
    watchdog(
        target,
        ext,
        clock,
        Arc::clone(&started),
        Arc::clone(&current),
    );
    let mut tally = Tally {
        target,
        inputs: 0,
        failures: Vec::new(),
    };
    // Panics are counted and saved here; the default hook's report would drown the summary.
    std::panic::set_hook(Box::new(|_| {}));
    while Instant::now() < deadline {
        let input = next();
        if let Ok(mut slot) = current.lock() {
            slot.clone_from(&input);
        }
        if keep {
            let _ = std::fs::create_dir_all(reproducer_dir());
            let _ = std::fs::write(
                reproducer_dir().join(format!("{target}-current.{ext}")),
                &input,
            );
        }
        started.store(clock.elapsed().as_millis() as u64, Ordering::Release);
        let outcome = catch_unwind(AssertUnwindSafe(|| check(&input)));
        started.store(u64::MAX, Ordering::Release);
        tally.inputs += 1;
        if outcome.is_err() {
            tally.failures.push(save(target, ext, &input));
        }
    }
    let _ = std::panic::take_hook();
    tally
}

/// Stops the process (after saving the input) when one input has run longer than [`HANG`].
fn watchdog(
    target: &'static str,
    ext: &str,
    clock: Instant,
    started: Arc<AtomicU64>,
    current: Arc<std::sync::Mutex<Vec<u8>>>,
) {
    let ext = ext.to_string();
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(250));
            let since = started.load(Ordering::Acquire);
            if since != u64::MAX
                && clock.elapsed().as_millis() as u64 > since + HANG.as_millis() as u64
            {
                let input = current.lock().map(|i| i.clone()).unwrap_or_default();
                let path = save(target, &ext, &input);
                eprintln!(
                    "{target}: an input ran over {HANG:?}; saved {}",
                    path.display()
                );
                std::process::exit(2);
            }
        }
    });
}

fn save(target: &str, ext: &str, input: &[u8]) -> PathBuf {
    let dir = reproducer_dir();
    let _ = std::fs::create_dir_all(&dir);
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = dir.join(format!("{target}-{hash:016x}.{ext}"));
    let _ = std::fs::write(&path, input);
    path
}
