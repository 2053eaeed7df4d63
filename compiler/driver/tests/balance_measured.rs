//! Balance under the measured estimate (`docs/mapping.md` §5): a chain of two std.nn `dense`
//! layers whose multiply-adds differ tenfold (16 → 16, then 16 → 160), mapped by `wsel map` on
//! WSE-2, where there are PEs enough for both. Each layer's estimate is the busy cycles a dry
//! run of its kernel measures, so balance here means the kernels' real work per sample is
//! balanced, not a formula's: the heavy layer gets about ten times the PEs and the bottleneck
//! stage's estimate is within 25% of the mean stage's.

use std::path::PathBuf;
use std::process::Command;

const CHAIN: &str = r#"import std.nn.{dense};

model chain(x: f32[B, 16]) -> f32[B, 160] {
    param w1: f32[16, 16] from "w1.npy";
    param b1: f32[16] from "b1.npy";
    param w2: f32[16, 160] from "w2.npy";
    param b2: f32[160] from "b2.npy";
    return dense(dense(x, w1, b1), w2, b2);
}
"#;

fn temp_file() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsel-balance-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("chain.wse");
    std::fs::write(&path, CHAIN).expect("write the model");
    path
}

#[test]
fn a_tenfold_heavier_dense_layer_gets_the_pes_to_keep_up() {
    let file = temp_file();
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .arg("map")
        .arg(&file)
        .args(["--target", "wse2", "--mode", "pipelined", "--batch", "8"])
        .args(["--copies", "1", "--format", "json"])
        .output()
        .expect("wsel runs");
    assert!(
        output.status.success(),
        "wsel map failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let layers = json["layers"].as_array().expect("layers");
    assert_eq!(layers.len(), 2);
    let figure = |l: &serde_json::Value, key: &str| l[key].as_u64().expect(key);
    let pes: Vec<u64> = layers
        .iter()
        .map(|l| figure(l, "rows") * figure(l, "cols"))
        .collect();
    let cycles: Vec<u64> = layers
        .iter()
        .map(|l| figure(&l["estimate"], "cycles"))
        .collect();
    // The work term decides; the stage adds the inputs' wavelets and the reduction chain's
    // wait, a few cycles here.
    for l in layers {
        let (cycles, compute) = (
            figure(&l["estimate"], "cycles"),
            figure(&l["estimate"], "compute"),
        );
        assert!(
            4 * compute >= 3 * cycles,
            "{cycles} cycles, {compute} of them work"
        );
    }
    let mean = cycles.iter().sum::<u64>() as f64 / cycles.len() as f64;
    let bottleneck = *cycles.iter().max().expect("two layers") as f64;
    assert!(
        bottleneck <= 1.25 * mean,
        "bottleneck {bottleneck} cycles per sample against a mean stage of {mean} ({cycles:?})"
    );
    assert!(
        pes[1] >= 5 * pes[0],
        "the tenfold heavier layer should get several times the PEs: {pes:?}"
    );
    let _ = std::fs::remove_dir_all(file.parent().expect("temp dir"));
}
