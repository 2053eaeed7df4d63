//! The fuzz targets, each a seed list, a dictionary and a check that panics on a failure:
//!
//! - `source`: `.wse` text through the front end as `wsel check` runs it (lexer, parser, name
//!   resolution, type and kernel checks), and the formatter, which must keep every
//!   non-whitespace character and be idempotent;
//! - `toml`: target descriptions; a loaded target must validate and round-trip;
//! - `npy`: data files read as a model input and as labels;
//! - `artifact`: build artifacts damaged as a disk or a copy damages them: bytes of the
//!   header or the payload changed, inserted, removed (the payload's checksum catches what the
//!   header does not; see FUZZING.md for a crafted payload with a matching checksum).
//!
//! The language server's edit stream is in `lsp.rs`.

use std::path::Path;

use crate::harness::{Tally, run};
use crate::mutate::{Rng, mutate};

/// A generator of mutants of `seeds`.
fn mutants<'a>(
    rng: &'a mut Rng,
    seeds: &'a [Vec<u8>],
    words: &'a [&'a str],
) -> impl FnMut() -> Vec<u8> + 'a {
    move || {
        let a = rng.below(seeds.len());
        let b = rng.below(seeds.len());
        mutate(rng, &seeds[a], &seeds[b], words)
    }
}

pub fn source(rng: &mut Rng, seconds: f64) -> Tally {
    let seeds = crate::corpus::sources();
    let mut next = mutants(rng, &seeds, crate::corpus::WSE_WORDS);
    run("source", "wse", seconds, &mut next, &mut |bytes| {
        check_source(&String::from_utf8_lossy(bytes));
    })
}

/// The front end and the formatter on `text`.
pub fn check_source(text: &str) {
    let root = Path::new("/fuzz/main.wse");
    let mut db = wsel_sema::Database::default();
    let mut read = |p: &Path| {
        if p == root {
            Ok(text.to_string())
        } else {
            Err(std::io::Error::other("not in the fuzz input"))
        }
    };
    if let Ok(file) = wsel_sema::load_program(&mut db, root, &mut read) {
        let _ = wsel_sema::diagnostics(&db, file);
    }
    if let Ok(formatted) = wsel_fmt::format(text) {
        let visible = |s: &str| s.chars().filter(|c| !c.is_whitespace()).collect::<String>();
        assert!(
            visible(text) == visible(&formatted),
            "the formatter changed a token"
        );
        let again = wsel_fmt::format(&formatted).ok();
        assert!(
            again.as_deref() == Some(formatted.as_str()),
            "the formatter is not idempotent"
        );
    }
}

pub fn toml(rng: &mut Rng, seconds: f64) -> Tally {
    let seeds = crate::corpus::targets();
    let mut next = mutants(rng, &seeds, crate::corpus::TOML_WORDS);
    run("toml", "toml", seconds, &mut next, &mut |bytes| {
        let text = String::from_utf8_lossy(bytes);
        if let Ok(target) = wsel_target::Target::from_toml_str(&text) {
            assert!(
                target.validate().is_ok(),
                "a loaded target does not validate"
            );
            let again = wsel_target::Target::from_toml_str(&target.to_toml_string());
            assert!(
                again.as_ref() == Ok(&target),
                "a target does not round-trip"
            );
        }
    })
}

pub fn npy(rng: &mut Rng, seconds: f64) -> Tally {
    let seeds = crate::corpus::npys();
    let path = std::env::temp_dir().join(format!("wsel-fuzz-{}.npy", std::process::id()));
    let mut next = mutants(rng, &seeds, crate::corpus::NPY_WORDS);
    let tally = run("npy", "npy", seconds, &mut next, &mut |bytes| {
        if std::fs::write(&path, bytes).is_ok() {
            let shape = [None, Some(4)];
            let _ = wsel::tensor::read_npy(&path, wsel_ir::kernel::ScalarTy::F32, &shape);
            let _ = wsel::tensor::read_npy(&path, wsel_ir::kernel::ScalarTy::I32, &[Some(3)]);
            let _ = wsel::tensor::read_labels(&path, 2);
        }
    });
    let _ = std::fs::remove_file(&path);
    tally
}

pub fn artifact(rng: &mut Rng, seconds: f64) -> Tally {
    let seeds = match built_artifact() {
        Ok(bytes) => vec![bytes],
        Err(why) => panic!("cannot build the seed artifact: {why}"),
    };
    let mut next = mutants(rng, &seeds, &[]);
    run("artifact", "wselb", seconds, &mut next, &mut |bytes| {
        let _ = wsel::cache::fuzzing::decode(bytes);
    })
}

/// The artifact `wsel build` writes for examples/axpy (interpreter backend: no machine code).
fn built_artifact() -> Result<Vec<u8>, String> {
    let file = crate::corpus::repo_root().join("examples/axpy/main.wse");
    let model = wsel::cli::ModelArgs {
        file: file.clone(),
        target: None,
        mode: None,
        batch: None,
        copies: wsel_map::Copies::Auto,
        micro_order: None,
        one_region: false,
        no_fuse: false,
    };
    let request = wsel::built::BuildRequest::new(&model, wsel::cli::BackendArg::Interp);
    let built = wsel::built::fresh(&request).map_err(|_| "the build failed".to_string())?;
    let path = std::env::temp_dir().join(format!("wsel-fuzz-{}.wselb", std::process::id()));
    wsel::cache::store(&path, &built, &file)?;
    let bytes = std::fs::read(&path).map_err(|e| e.to_string());
    let _ = std::fs::remove_file(&path);
    bytes
}
