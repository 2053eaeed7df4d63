//! A spinner on standard error while a long simulation runs, with a status line the work
//! updates (how far the simulation has got): shown only on a terminal and only once the run
//! has taken more than a second, so short runs and pipes stay quiet.

use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

/// Runs `work` on a scoped thread, showing `status()` (asked again at every tick) with the
/// elapsed time while it runs.
pub fn with_spinner<T: Send>(status: &dyn Fn() -> String, work: impl FnOnce() -> T + Send) -> T {
    if !std::io::stderr().is_terminal() {
        return work();
    }
    std::thread::scope(|scope| {
        let handle = scope.spawn(work);
        let started = Instant::now();
        let mut spinner: Option<ProgressBar> = None;
        while !handle.is_finished() {
            std::thread::sleep(Duration::from_millis(50));
            if spinner.is_none() && started.elapsed() > Duration::from_secs(1) {
                let bar = ProgressBar::new_spinner().with_elapsed(started.elapsed());
                if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} {elapsed}") {
                    bar.set_style(style);
                }
                bar.enable_steady_tick(Duration::from_millis(100));
                spinner = Some(bar);
            }
            if let Some(bar) = &spinner {
                bar.set_message(status());
            }
        }
        if let Some(bar) = spinner {
            bar.finish_and_clear();
        }
        match handle.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}
