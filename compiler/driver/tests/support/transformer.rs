//! The tiny GPT of tests/reference/transformer_train.py and the check that `wsel train`
//! trains a model like that NumPy reference (losses and final weights within 1e-5), shared by
//! the training tests (`training`, `training_branches`).

use std::path::Path;
use std::process::Command;

use super::{repo_root, temp_dir};

/// Reads a .npy of float32 or float64 values as f64 (a minimal reader: little-endian, C order).
pub fn read_npy(path: &Path) -> Vec<f64> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = String::from_utf8_lossy(&bytes[10..10 + header_len]).to_string();
    let data = &bytes[10 + header_len..];
    if header.contains("<f8") {
        data.chunks_exact(8)
            .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect()
    } else {
        assert!(header.contains("<f4"), "{header}");
        data.chunks_exact(4)
            .map(|b| f64::from(f32::from_le_bytes(b.try_into().expect("4 bytes"))))
            .collect()
    }
}

pub fn losses_of_csv(path: &Path) -> Vec<f64> {
    std::fs::read_to_string(path)
        .expect("loss.csv")
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(1)
                .expect("loss column")
                .parse()
                .expect("a number")
        })
        .collect()
}

pub fn wsel_train_file(file: &Path, out: &Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .arg("train")
        .arg(file)
        .args(["--color", "never", "--quiet", "--out"])
        .arg(out)
        .args(args)
        .output()
        .expect("wsel runs")
}

/// Runs tests/reference/transformer_train.py on `model` with `args`: its data and initial
/// weights in `dir`, what it trained in `dir/reference`.
pub fn transformer_reference(model: &str, dir: &Path, args: &[&str]) {
    let status = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/reference/transformer_train.py")
        .arg(model)
        .arg(dir)
        .args(args)
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(status.success(), "the reference trainer failed");
}

/// A tiny GPT (tests/reference/transformer_train.py's `gpt`): token and position embeddings,
/// one pre-LN decoder block (causal attention with 2 heads over contexts of 8, an MLP with
/// gelu), a final layernorm and a softmax head, trained on 2 sequences a step. On wse2: a
/// column of the streamed region holds whole sequences, so the region is 1×2, and `dev`'s
/// 4 KiB of SRAM per PE is too little for 8 samples of the MLP's hidden layer.
pub const TINY_GPT: &str = r#"import std.nn.{dense, layernorm, gelu, add, embedding, attention, softmax};

model gpt(ids: f32[B, 1]) -> f32[B, 12] {
    param wte: f32[12, 16] from "wte.npy";
    param wpe: f32[8, 16] from "wpe.npy";
    param ln1_g1: f32[16] from "ln1_g1.npy";
    param ln1_b1: f32[16] from "ln1_b1.npy";
    param wq1: f32[16, 16] from "wq1.npy";
    param bq1: f32[16] from "bq1.npy";
    param wk1: f32[16, 16] from "wk1.npy";
    param bk1: f32[16] from "bk1.npy";
    param wv1: f32[16, 16] from "wv1.npy";
    param bv1: f32[16] from "bv1.npy";
    param wo1: f32[16, 16] from "wo1.npy";
    param bo1: f32[16] from "bo1.npy";
    param ln2_g1: f32[16] from "ln2_g1.npy";
    param ln2_b1: f32[16] from "ln2_b1.npy";
    param wfc11: f32[16, 32] from "wfc11.npy";
    param bfc11: f32[32] from "bfc11.npy";
    param wfc21: f32[32, 16] from "wfc21.npy";
    param bfc21: f32[16] from "bfc21.npy";
    param lnf_g: f32[16] from "lnf_g.npy";
    param lnf_b: f32[16] from "lnf_b.npy";
    param whead: f32[16, 12] from "whead.npy";
    param bhead: f32[12] from "bhead.npy";
    let h = embedding(ids, wte, wpe);
    let a = layernorm(h, ln1_g1, ln1_b1);
    let att = attention(dense(a, wq1, bq1), dense(a, wk1, bk1), dense(a, wv1, bv1),
        heads = 2, context = 8);
    let r = add(h, dense(att, wo1, bo1));
    let m = layernorm(r, ln2_g1, ln2_b1);
    let o = add(r, dense(gelu(dense(m, wfc11, bfc11)), wfc21, bfc21));
    return softmax(dense(layernorm(o, lnf_g, lnf_b), whead, bhead));
}

train gpt {
    input ids = "ids.npy";
    labels = "labels.npy";
    loss = "cross_entropy";
    optimizer = "sgd";
    momentum = 0.9;
    lr = 0.05;
    steps = 3;
    batch = 16;
    shuffle = false;
    target = "wse2";
}
"#;

/// Trains `source` (the model `model` of tests/reference/transformer_train.py) with wsel
/// (`flags` over its `train` item) and with the reference (`args`: the same settings), and
/// checks every loss and every final weight (`outputs_match`'s 1e-5). Each parameter must
/// also have moved by more than 1e-3 in the reference, so that a gradient missing or wrong
/// (the initial weight kept) fails the check.
///
/// Except attention's key biases (`bk1`, ...): their gradient is zero in exact arithmetic (it adds the
/// same q · bk to all of a query's scores, which the softmax ignores), so both trainers'
/// values are rounding noise (below 1e-8). SGD keeps bk where it was, on both sides; Adam
/// divides the noise by its own root mean square and moves bk by about lr a step in a
/// direction the noise's sign picks, which no two computations share: with Adam, the key
/// biases are not compared.
pub fn transformer_trains_like_numpy(
    model: &str,
    source: &str,
    flags: &[&str],
    args: &[&str],
) -> String {
    let adam = flags.contains(&"adam");
    // A folder per model text and flags: tests of one reference model run side by side.
    let mut text = std::hash::DefaultHasher::new();
    std::hash::Hash::hash(&(source, flags), &mut text);
    let dir = temp_dir(&format!(
        "tt-{model}-{:x}",
        std::hash::Hasher::finish(&text)
    ));
    transformer_reference(model, &dir, args);
    let file = dir.join(format!("{model}.wse"));
    std::fs::write(&file, source).expect("write the model");
    let out = dir.join("out");
    let run = wsel_train_file(&file, &out, flags);
    assert!(
        run.status.success(),
        "wsel train failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let theirs = dir.join("reference");
    let losses = losses_of_csv(&out.join("loss.csv"));
    let reference = read_npy(&theirs.join("losses.npy"));
    assert_eq!(losses.len(), reference.len());
    for (step, (a, b)) in losses.iter().zip(&reference).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs(),
            "{model}, step {}: loss {a} on the fabric, {b} in the reference",
            step + 1
        );
    }
    let mut names = 0;
    for entry in std::fs::read_dir(&theirs).expect("the reference's folder") {
        let path = entry.expect("an entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "losses.npy" {
            continue;
        }
        names += 1;
        let zero_gradient = name.starts_with("bk");
        if zero_gradient && adam {
            continue;
        }
        let trained = read_npy(&path);
        let ours = read_npy(&out.join(name));
        let initial = read_npy(&dir.join(name));
        let far = |a: &[f64], b: &[f64]| {
            assert_eq!(a.len(), b.len(), "{model}: {name}");
            a.iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max)
        };
        let worst = far(&ours, &trained);
        assert!(
            worst <= 1e-5,
            "{model}: {name} is {worst} from the reference"
        );
        let moved = far(&initial, &trained);
        assert!(
            zero_gradient || moved > 1e-3,
            "{model}: {name} moved only {moved}"
        );
    }
    assert!(names >= 4, "{model}: {names} trained parameters");
    String::from_utf8_lossy(&run.stdout).into_owned()
}

/// The reference trainer's settings for the tiny transformer with SGD: 3 steps of 16 tokens
/// (two sequences), momentum 0.9, as its `train` item.
pub const TINY_GPT_SGD: [&str; 8] = [
    "--steps",
    "3",
    "--batch",
    "16",
    "--lr",
    "0.05",
    "--momentum",
    "0.9",
];

/// [`TINY_GPT`] with its attention composed of `matmul_qk` (`heads` heads, `scale` = 1/√dh
/// as a literal), the grouped causal `softmax` and `matmul_pv`.
pub fn composed_tiny_gpt(heads: u32, scale: &str) -> String {
    let fused = "    let att = attention(dense(a, wq1, bq1), dense(a, wk1, bk1), dense(a, wv1, bv1),\n\
                 \x20       heads = 2, context = 8);\n";
    let composed = format!(
        "    let s = matmul_qk(dense(a, wq1, bq1), dense(a, wk1, bk1), heads = {heads}, \
         context = 8,\n        scale = {scale});\n    let att = matmul_pv(softmax(s, context = \
         8), dense(a, wv1, bv1), heads = {heads},\n        context = 8);\n"
    );
    assert!(TINY_GPT.contains(fused));
    TINY_GPT
        .replace(fused, &composed)
        .replace("attention, softmax}", "matmul_qk, matmul_pv, softmax}")
}

/// The NumPy reference's losses for `model` trained with `args`.
pub fn reference_losses(model: &str, args: &[&str]) -> Vec<f64> {
    let dir = temp_dir(&format!("ref-{model}"));
    transformer_reference(model, &dir, args);
    read_npy(&dir.join("reference/losses.npy"))
}

/// The pipelined tests' settings for the NumPy reference: 8 steps of 6 samples (two epochs of
/// the 24) with SGD-momentum.
pub const SMALL_SGD: [&str; 8] = [
    "--steps",
    "8",
    "--batch",
    "6",
    "--lr",
    "0.05",
    "--momentum",
    "0.9",
];

/// The `train` item of the pipelined tests' models, their input `input` read from
/// `input.npy`: `SMALL_SGD`'s settings but batches of `batch`, the labels class indices, on
/// `dev`.
pub fn small_train_item(model: &str, input: &str, batch: u64) -> String {
    format!(
        r#"
train {model} {{
    input {input} = "{input}.npy";
    labels = "labels.npy";
    loss = "cross_entropy";
    optimizer = "sgd";
    momentum = 0.9;
    lr = 0.05;
    steps = 8;
    batch = {batch};
    shuffle = false;
    target = "dev";
    mode = "pipelined";
}}
"#
    )
}
