//! End-to-end test of `wsel lsp` from a real editor: Neovim, headless, with the setup from
//! `editors/neovim`, opens a copy of `examples/digits/main.wse`, sees a diagnostic appear
//! after an error is typed (and go away after the fix), gets hover text, and jumps to the
//! definition of `dense` in the stdlib. The steps are in `editors/neovim/test/e2e.lua`.
//!
//! Neovim must be installed (`apt-get install neovim`; `.ci/run` does it): without it this
//! test fails rather than skips.

mod support;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::temp_dir;

const TIMEOUT: Duration = Duration::from_secs(120);

#[test]
fn neovim_sees_diagnostics_hover_and_stdlib_definition() {
    let nvim_found = Command::new("nvim")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        nvim_found,
        "`nvim` is not installed: this end-to-end test needs Neovim \
         (Debian: `apt-get install neovim`; `.ci/run` installs it)"
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = temp_dir("nvim-e2e");
    let file = dir.join("main.wse");
    std::fs::copy(root.join("examples/digits/main.wse"), &file).expect("the digits example");
    // With its weights: the server reports a missing `param` file (E0801).
    std::fs::create_dir_all(dir.join("data")).expect("a data folder");
    for entry in std::fs::read_dir(root.join("examples/digits/data")).expect("digits data") {
        let path = entry.expect("a data file").path();
        // Files only: `data/init/` holds the initial weights of `train.wse`.
        if let Some(name) = path.file_name().filter(|_| path.is_file()) {
            std::fs::copy(&path, dir.join("data").join(name)).expect("a weight file");
        }
    }
    let result = dir.join("result.txt");
    let script = root.join("editors/neovim/test/e2e.lua");
    let mut child = Command::new("nvim")
        .args(["--headless", "--clean", "-n", "-i", "NONE", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("WSEL_BIN", env!("CARGO_BIN_EXE_wsel"))
        .env("WSEL_FILE", &file)
        .env("WSEL_EDITORS", root.join("editors"))
        .env("WSEL_RESULT", &result)
        .env("XDG_STATE_HOME", &dir)
        .env("XDG_CACHE_HOME", &dir)
        .env("XDG_DATA_HOME", &dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nvim starts");
    let start = Instant::now();
    let status = loop {
        if let Ok(Some(status)) = child.try_wait() {
            break Some(status);
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let report = std::fs::read_to_string(&result).unwrap_or_default();
    let log = lsp_log(&dir);
    assert!(
        status.is_some(),
        "nvim did not finish within {TIMEOUT:?}; steps so far:\n{report}{log}"
    );
    assert!(
        report.lines().last() == Some("PASS") && status.is_some_and(|s| s.success()),
        "the Neovim session failed:\n{report}{log}"
    );
    for step in [
        "step: diagnostic E0105",
        "step: diagnostic cleared",
        "step: hover",
        "step: definition",
    ] {
        assert!(report.contains(step), "missing `{step}` in:\n{report}");
    }
}

/// Neovim's LSP log, if it wrote one (for failure messages).
fn lsp_log(dir: &Path) -> String {
    for candidate in ["nvim/lsp.log", "lsp.log"] {
        if let Ok(text) = std::fs::read_to_string(dir.join(candidate)) {
            return format!("\nlsp.log:\n{text}");
        }
    }
    String::new()
}
