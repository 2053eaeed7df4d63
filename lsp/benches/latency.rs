//! Language-server latency on a 2,000-line file, through the protocol (in process, JSON-RPC
//! framing included): the time from sending a `didChange` to receiving the published
//! diagnostics of that version, and the time to answer a hover (a layer call's includes its
//! mapping on `dev` with the kernels dry-run: cached, mapped with the dry runs kept, or both
//! computed; also on the 6-layer digits example). Prints medians and 90th percentiles of 41
//! runs each. Run:
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

    // Hover on a layer call (shapes, cost, mapping on `dev`) with the model's mapping cached,
    // with the mapping forgotten but the kernels' dry runs kept (as after an edit that changes
    // no kernel), with both forgotten, and on a kernel array.
    let (mut hover_call, mut hover_call_mapping, mut hover_call_cold) =
        hover_call_runs(&mut client, URI, (call_line, call_character + 2)).await;
    let mut hover_var = Vec::new();
    let (var_line, var_character) = position_of(&text, "send(ys, x[0..n])", 40, 9);
    for _ in 0..RUNS {
        hover_var.push(hover(&mut client, URI, (var_line, var_character), None, false).await);
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
        "hover on a layer call (shapes, cost, mapping the model on dev, dry runs kept)",
        &mut hover_call_mapping,
    );
    report(
        "hover on a layer call (shapes, cost, mapping the model on dev, dry runs too)",
        &mut hover_call_cold,
    );
    report("hover on a kernel array", &mut hover_var);

    // The same on the 6-layer digits example.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/digits/main.wse");
    let path = std::path::Path::new(path)
        .canonicalize()
        .expect("the digits example");
    let text = std::fs::read_to_string(&path).expect("the digits example");
    let uri = wsel_lsp::testing::file_uri(&path);
    client.open(&uri, &text).await;
    client.diagnostics(&uri, Some(1)).await;
    let at = position_of(&text, "dense(x, w1, b1)", 0, 2);
    let (mut cached, mut mapping, mut cold) = hover_call_runs(&mut client, &uri, at).await;
    report("digits: hover on dense#1 (mapping cached)", &mut cached);
    report(
        "digits: hover on dense#1 (mapping the 6-layer model on dev, dry runs kept)",
        &mut mapping,
    );
    report(
        "digits: hover on dense#1 (mapping the 6-layer model on dev, dry runs too)",
        &mut cold,
    );
}

/// `RUNS` hovers on the layer call at `at` of each kind: with the mapping cached, with the
/// mapping cache emptied first, and with the kept dry runs emptied too.
async fn hover_call_runs(
    client: &mut TestClient,
    uri: &str,
    at: (u32, u32),
) -> (Vec<Duration>, Vec<Duration>, Vec<Duration>) {
    let mut runs = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        runs.0.push(hover(client, uri, at, None, true).await);
        runs.1.push(hover(client, uri, at, Some(false), true).await);
        runs.2.push(hover(client, uri, at, Some(true), true).await);
    }
    runs
}

/// The time to answer a hover at `(line, character)`: after emptying the mapping cache when
/// `clear` is given (and the kept dry runs too when it is `Some(true)`). A layer call's hover
/// (`call`) must show an estimate.
async fn hover(
    client: &mut TestClient,
    uri: &str,
    (line, character): (u32, u32),
    clear: Option<bool>,
    call: bool,
) -> Duration {
    if let Some(measurements) = clear {
        wsel_lsp::layer_call::clear_mapping_cache(measurements);
    }
    let start = Instant::now();
    let answer = client
        .request(
            "textDocument/hover",
            json!({ "textDocument": { "uri": uri }, "position": { "line": line, "character": character } }),
        )
        .await;
    let elapsed = start.elapsed();
    let value = answer["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(!value.is_empty(), "{answer}");
    if call {
        assert!(value.contains("- estimated cycles: "), "{value}");
    }
    elapsed
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
