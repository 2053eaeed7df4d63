//! Language-server latency on a 2,000-line file, through the protocol (in process, JSON-RPC
//! framing included): the time from sending a `didChange` to receiving the published
//! diagnostics of that version, and the time to answer a hover (a layer call's includes its
//! mapping on `dev` with the kernels dry-run, cached or computed; also on the 6-layer digits
//! example). Prints medians and 90th percentiles of 41 runs each. Run:
//! `cargo bench -p wsel-lsp --bench latency`.

use std::time::{Duration, Instant};

use serde_json::json;
use wsel_lsp::testing::{TestClient, large_program};

const RUNS: usize = 41;
const URI: &str = "file:///tmp/wsel-bench/large.wse";

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(bench());
}

async fn bench() {
    let text = large_program(50);
    let lines = text.lines().count();
    let mut client = TestClient::start().await;
    let opened = Instant::now();
    client.open(URI, &text).await;
    let first = client.diagnostics(URI, Some(1)).await;
    assert_eq!(first["diagnostics"], json!([]), "the program is clean");
    println!("file: {lines} lines, {} bytes", text.len());
    println!("open → first diagnostics: {:.1} ms", ms(opened.elapsed()));

    // Edit a statement in the middle of the file: `* 2.0` ↔ `* 3.0` in unit 25's kernel.
    let (line, character) = position_of(&text, "x[0..n] * 2.0", 25, 10);
    let mut version = 1;
    let mut change = Vec::new();
    for i in 0..RUNS {
        version += 1;
        let digit = if i % 2 == 0 { "3" } else { "2" };
        let start = Instant::now();
        client
            .change(URI, version, [line, character, line, character + 1], digit)
            .await;
        let published = client.diagnostics(URI, Some(version)).await;
        change.push(start.elapsed());
        assert_eq!(published["diagnostics"], json!([]));
    }

    // An edit that introduces an error, then one that removes it.
    let (call_line, call_character) = position_of(&text, "scaled_25(x)", 0, 0);
    let mut error_edit = Vec::new();
    // An even number of edits, so the file ends clean.
    for i in 0..RUNS + 1 {
        version += 1;
        let (range, new) = if i % 2 == 0 {
            (
                [call_line, call_character, call_line, call_character + 1],
                "t",
            )
        } else {
            (
                [call_line, call_character, call_line, call_character + 1],
                "s",
            )
        };
        let start = Instant::now();
        client.change(URI, version, range, new).await;
        let published = client.diagnostics(URI, Some(version)).await;
        error_edit.push(start.elapsed());
        let count = published["diagnostics"].as_array().map_or(0, Vec::len);
        assert_eq!(count, usize::from(i % 2 == 0), "{published}");
    }

    // Hover on a layer call (shapes, cost, mapping on `dev`) with the model's mapping cached
    // and with the cache emptied first (the hover maps the model), and on a kernel array.
    let mut hover_call = Vec::new();
    let mut hover_call_mapping = Vec::new();
    let mut hover_var = Vec::new();
    let (var_line, var_character) = position_of(&text, "send(ys, x[0..n])", 40, 9);
    for _ in 0..RUNS {
        for (samples, (l, c), uncached) in [
            (&mut hover_call, (call_line, call_character + 2), false),
            (
                &mut hover_call_mapping,
                (call_line, call_character + 2),
                true,
            ),
            (&mut hover_var, (var_line, var_character), false),
        ] {
            if uncached {
                wsel_lsp::layer_call::clear_mapping_cache();
            }
            let start = Instant::now();
            let answer = client
                .request(
                    "textDocument/hover",
                    json!({ "textDocument": { "uri": URI }, "position": { "line": l, "character": c } }),
                )
                .await;
            samples.push(start.elapsed());
            let value = answer["result"]["contents"]["value"]
                .as_str()
                .unwrap_or_default();
            assert!(!value.is_empty(), "{answer}");
            if l == call_line {
                assert!(value.contains("- estimated cycles: "), "{value}");
            }
        }
    }

    report(
        "didChange → publishDiagnostics (edit in a kernel body)",
        &mut change,
    );
    report(
        "didChange → publishDiagnostics (typing an error / fixing it)",
        &mut error_edit,
    );
    report(
        "hover on a layer call (shapes, cost, mapping cached)",
        &mut hover_call,
    );
    report(
        "hover on a layer call (shapes, cost, mapping the model on dev)",
        &mut hover_call_mapping,
    );
    report("hover on a kernel array", &mut hover_var);

    let (mut uncached, mut cached) = digits_hovers(&mut client).await;
    report(
        "digits: hover on dense#1 (mapping the 6-layer model on dev)",
        &mut uncached,
    );
    report("digits: hover on dense#1 (mapping cached)", &mut cached);
}

/// Hovers on digits' first `dense` call: with the mapping cache emptied first, and cached.
async fn digits_hovers(client: &mut TestClient) -> (Vec<Duration>, Vec<Duration>) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/digits/main.wse");
    let path = std::path::Path::new(path)
        .canonicalize()
        .expect("the digits example");
    let text = std::fs::read_to_string(&path).expect("the digits example");
    let uri = wsel_lsp::testing::file_uri(&path);
    client.open(&uri, &text).await;
    client.diagnostics(&uri, Some(1)).await;
    let (line, character) = position_of(&text, "dense(x, w1, b1)", 0, 2);
    let mut samples = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        for uncached in [true, false] {
            if uncached {
                wsel_lsp::layer_call::clear_mapping_cache();
            }
            let start = Instant::now();
            let answer = client
                .request(
                    "textDocument/hover",
                    json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
                )
                .await;
            let elapsed = start.elapsed();
            let value = answer["result"]["contents"]["value"].as_str();
            assert!(
                value.is_some_and(|v| v.contains("- estimated cycles: ")),
                "{answer}"
            );
            let into = if uncached {
                &mut samples.0
            } else {
                &mut samples.1
            };
            into.push(elapsed);
        }
    }
    samples
}

/// The line and UTF-16 column of the `nth` occurrence of `needle`, plus `shift`.
fn position_of(text: &str, needle: &str, nth: usize, shift: usize) -> (u32, u32) {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i + shift)
        .expect("the needle is in the generated program");
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let column = before.rsplit('\n').next().map_or(0, str::len);
    (line as u32, column as u32)
}

fn report(what: &str, samples: &mut [Duration]) {
    samples.sort();
    let median = samples[samples.len() / 2];
    let p90 = samples[samples.len() * 9 / 10];
    println!(
        "{what}: median {:.2} ms, p90 {:.2} ms ({} runs)",
        ms(median),
        ms(p90),
        samples.len()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
