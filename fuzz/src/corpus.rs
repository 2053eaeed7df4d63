//! The seeds every target mutates: the repository's own inputs (examples, the standard library,
//! the UI and hang tests, the presets), plus `fuzz/corpus/`, where inputs worth keeping
//! (reproducers of fixed failures) are added by hand.

use std::path::{Path, PathBuf};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files with extension `ext` directly in each of `dirs` (relative to the repository).
pub fn files(dirs: &[&str], ext: &str) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(repo_root().join(d)).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    paths.sort();
    paths.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// `.wse` sources.
pub fn sources() -> Vec<Vec<u8>> {
    let mut seeds = files(&["stdlib", "tests/ui", "tests/hang", "fuzz/corpus"], "wse");
    for dir in std::fs::read_dir(repo_root().join("examples"))
        .into_iter()
        .flatten()
        .flatten()
    {
        seeds.extend(files(
            &[&format!("examples/{}", dir.file_name().to_string_lossy())],
            "wse",
        ));
    }
    seeds
}

/// Words of the language, for insertions.
pub const WSE_WORDS: &[&str] = &[
    "kernel ",
    "layer ",
    "model ",
    "task ",
    "var ",
    "let ",
    "const ",
    "param ",
    "in ",
    "out ",
    "stream<f32>",
    "from north",
    "to south",
    "multicast",
    "recv(xs, a[0..n]) then t;",
    "send(ys, a[0..n]);",
    "activate main;",
    "for i in 0..4000000000 { }",
    "while true { }",
    "if a > b { } else { }",
    "return;",
    "pipelined on [R, C] where N % R == 0 ",
    "streaming ",
    "run k(n = N);",
    "bind x to port xs split [rows, cols];",
    "bind w to array a;",
    "cost { flops = N; weights = 0; activations = N; }",
    "import std.nn.{dense, relu};",
    "f32[B, N]",
    "[f32; n * n]",
    "pe.row",
    "region.cols",
    "as u32",
    "exp(",
    "sum(",
    "max(",
    "/*",
    "*/",
    "//",
    "\"",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "..",
    "+=",
    "= ",
    "\n",
    "größe",
    "\u{0}",
    "_",
    "0x",
    "1e",
    "1.5e40",
    "-",
    "!",
];

/// Target descriptions as TOML: the presets.
pub fn targets() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = wsel_target::PRESET_NAMES
        .iter()
        .filter_map(|n| wsel_target::Target::preset(n).ok())
        .map(|t| t.to_toml_string().into_bytes())
        .collect();
    seeds.extend(files(&["tests/ui/data", "fuzz/corpus"], "toml"));
    seeds
}

pub const TOML_WORDS: &[&str] = &[
    "width = ",
    "height = ",
    "hop_latency = ",
    "sram_bytes = ",
    "colors = ",
    "queue_depth = ",
    "[defects]\n",
    "dead_pes = [{ x = 0, y = 0 }]\n",
    "dead_links = [{ x = 0, y = 0, dir = \"east\" }]\n",
    "[weight_store]\n",
    "[fp32]\n",
    "= ",
    "\"",
    "[",
    "]",
    "{",
    "}",
    ",",
    "\n",
    "#",
    "1e9",
    "inf",
    "true",
    "4294967295",
    "18446744073709551615",
    "-0",
    "0x10",
];

/// `.npy` files: the test data, and a few headers made here.
pub fn npys() -> Vec<Vec<u8>> {
    let mut seeds = files(&["tests/ui/data", "fuzz/corpus"], "npy");
    for (descr, shape) in [
        ("<f4", "(2, 4)"),
        ("<i4", "(3,)"),
        ("<f2", "(1, 4)"),
        ("<i8", "(0,)"),
    ] {
        let header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
        let padded = format!("{header:<118}\n");
        bytes.extend_from_slice(&(padded.len() as u16).to_le_bytes());
        bytes.extend_from_slice(padded.as_bytes());
        bytes.extend_from_slice(&[0u8; 32]);
        seeds.push(bytes);
    }
    seeds
}

pub const NPY_WORDS: &[&str] = &[
    "'descr': ",
    "'<f4'",
    "'>f4'",
    "'<f8'",
    "'|b1'",
    "'<u4'",
    "'<i4'",
    "'<c8'",
    "'O'",
    "'fortran_order': True",
    "'shape': ",
    "(4294967296, 4294967296)",
    "(-1,)",
    "()",
    "(1, 2, 3, 4, 5)",
    "NUMPY\x02\x00",
    "NUMPY\x03\x00",
    "{",
    "}",
    ",",
    "'",
    "\n",
];
