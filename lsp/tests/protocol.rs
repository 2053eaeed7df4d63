//! Protocol-level tests: a JSON-RPC client drives the server in process (the same
//! `LspService` that `wsel lsp` serves on stdio) through every feature.

use std::path::PathBuf;

use serde_json::{Value, json};
use wsel_lsp::testing::{TestClient, file_uri};

fn example(name: &str) -> (String, String) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(name)
        .join("main.wse");
    let path = path.canonicalize().unwrap_or(path);
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    (file_uri(&path), text)
}

/// The LSP position of the `nth` occurrence of `needle` in `text` (plus `shift` characters).
fn pos(text: &str, needle: &str, nth: usize, shift: usize) -> Value {
    let offset = text
        .match_indices(needle)
        .nth(nth)
        .map(|(i, _)| i + shift)
        .unwrap_or_else(|| panic!("`{needle}` #{nth} not in the text"));
    let before = &text[..offset];
    let line = before.matches('\n').count();
    let character = before
        .rsplit('\n')
        .next()
        .map_or(0, |l| l.encode_utf16().count());
    json!({ "line": line, "character": character })
}

fn at(uri: &str, position: Value) -> Value {
    json!({ "textDocument": { "uri": uri }, "position": position })
}

async fn open_example(name: &str) -> (TestClient, String, String) {
    let mut client = TestClient::start().await;
    let (uri, text) = example(name);
    client.open(&uri, &text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    assert_eq!(
        published["diagnostics"],
        json!([]),
        "{name} has diagnostics"
    );
    (client, uri, text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn diagnostics_appear_as_you_type_and_go_away() {
    let (mut client, uri, text) = open_example("digits").await;
    // `relu(dense(h1` -> `relu(dnse(h1`: an unresolved layer, E0105 as in `wsel check`.
    let p = pos(&text, "dense(h1", 0, 1);
    let (l, c) = (
        p["line"].as_u64().unwrap_or(0) as u32,
        p["character"].as_u64().unwrap_or(0) as u32,
    );
    client.change(&uri, 2, [l, c, l, c + 1], "").await;
    let published = client.diagnostics(&uri, Some(2)).await;
    let diagnostics = published["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(diagnostics.len(), 1, "{published}");
    let d = &diagnostics[0];
    assert_eq!(d["code"], "E0105");
    assert_eq!(d["source"], "wsel");
    assert_eq!(d["severity"], 1);
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("cannot find layer `dnse`")),
        "{d}"
    );
    assert_eq!(
        d["range"]["start"],
        json!({ "line": l, "character": c - 1 })
    );
    // The same code and message as `wsel check` (the sema diagnostics).
    let edited = text.replacen("dense(h1", "dnse(h1", 1);
    let mut db = wsel_sema::Database::default();
    let file = wsel_sema::set_file(&mut db, std::path::Path::new("digits.wse"), edited);
    let _ = wsel_sema::load_program(&mut db, std::path::Path::new("digits.wse"), &mut |_| {
        Ok(text.replacen("dense(h1", "dnse(h1", 1))
    });
    let cli = wsel_sema::diagnostics(&db, file);
    assert_eq!(cli.len(), 1);
    assert_eq!(d["code"], cli[0].code);
    assert!(
        d["message"]
            .as_str()
            .is_some_and(|m| m.lines().next() == Some(cli[0].message.as_str()))
    );
    // Typing the letter back clears them.
    client.change(&uri, 3, [l, c - 1, l, c - 1], "de").await;
    client.change(&uri, 4, [l, c + 1, l, c + 2], "").await;
    let published = client.diagnostics(&uri, Some(4)).await;
    assert_eq!(published["diagnostics"], json!([]), "{published}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_shows_types_and_layer_call_shapes_and_costs() {
    let (mut client, uri, text) = open_example("digits").await;
    let hover = client
        .request(
            "textDocument/hover",
            at(&uri, pos(&text, "dense(x, w1", 0, 2)),
        )
        .await;
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        value.contains(
            "layer dense(x: f32[B, N], param w: f32[N, M], param b: f32[M]) -> y: f32[B, M]"
        ),
        "{value}"
    );
    assert!(value.contains("`N = 64`, `M = 32`"), "{value}");
    assert!(value.contains("`f32[B, 32]`"), "{value}");
    assert!(value.contains("flops: 4,128 per sample"), "{value}");
    assert!(value.contains("weights: 8,320 bytes"), "{value}");
    assert!(
        value.contains("activations: 384 bytes per sample"),
        "{value}"
    );
    // A tensor name: its type.
    let hover = client
        .request("textDocument/hover", at(&uri, pos(&text, "w1, b1", 0, 0)))
        .await;
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(value.contains("param w1: f32[64, 32]"), "{value}");
    assert!(
        value.contains("model parameter of model `digits`"),
        "{value}"
    );
    // A let: its inferred shape.
    let hover = client
        .request("textDocument/hover", at(&uri, pos(&text, "h1, w2", 0, 1)))
        .await;
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(value.contains("let h1: f32[B, 32]"), "{value}");
    // Whitespace: nothing.
    let hover = client
        .request(
            "textDocument/hover",
            at(&uri, json!({ "line": 0, "character": 0 })),
        )
        .await;
    assert_eq!(hover["result"], Value::Null);
}

/// `n` with thousands separated by commas, as hovers print counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_on_a_layer_call_shows_its_mapping_on_dev() {
    let (mut client, uri, text) = open_example("digits").await;
    let hover = client
        .request(
            "textDocument/hover",
            at(&uri, pos(&text, "dense(x, w1, b1)", 0, 2)),
        )
        .await;
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    // The same figures, recomputed here as `wsel map --target dev` computes them (the driver's
    // `map_graph` in auto mode, default copies): the file's layer graph (digits' `run` item
    // sets no batch: 1) mapped on `dev` with the kernels' work measured by dry runs, pipelined
    // first, with its fused stages (`dense#1+relu#1`, `wsel_map::fusion`).
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/digits/main.wse");
    let path = path.canonicalize().unwrap_or(path);
    let mut db = wsel_sema::Database::default();
    let file = wsel_sema::load_program(&mut db, &path, &mut |p| std::fs::read_to_string(p))
        .expect("digits loads");
    let model = wsel_lower::find_model(&db, file, "digits").expect("the model `digits`");
    let (graph, lowering) = wsel_lower::layer_graph(&db, model, 1);
    assert!(lowering.is_empty(), "{lowering:#?}");
    let target = wsel_target::Target::preset("dev").expect("the dev preset");
    let fused = |g: &wsel_ir::graph::LayerGraph| wsel_lsp::layer_call::fused_graph(&db, g);
    let work = wsel_estimate::KernelDryRuns::new(&db, model, &target).shaped(&|g| Some(fused(g)));
    let options = wsel_map::MapOptions {
        work: Some(&work),
        ..wsel_map::MapOptions::default()
    };
    let map = |mode| {
        let per_copy = &mut |b| wsel_estimate::lower_for_batch(&db, model, b).map(|g| fused(&g));
        let copies = wsel_map::Copies::Auto;
        wsel_map::map_batch(&fused(&graph), per_copy, &target, mode, &options, copies).result
    };
    let (placement, mode) = match map(wsel_ir::graph::Mode::Pipelined).placement {
        Some(p) => (p, "pipelined"),
        None => (
            map(wsel_ir::graph::Mode::Streaming)
                .placement
                .expect("digits maps on dev"),
            "streaming",
        ),
    };
    assert_eq!(placement.copies, 1, "one copy, as the hover maps");
    let call = text.find("dense(x, w1, b1)").expect("the first dense call");
    let instance = graph
        .layers
        .iter()
        .find(|l| l.call.span.start == call && l.call.file == path)
        .expect("the call's layer instance");
    assert_eq!(instance.name, "dense#1");
    let placed = placement
        .layers
        .iter()
        .find(|l| l.name == "dense#1+relu#1")
        .expect("the instance is placed, fused with its relu");

    assert!(
        value.contains("**Mapping on `dev`** (`dense#1+relu#1`, batch 1)"),
        "{value}"
    );
    assert!(value.contains(&format!("- mode: {mode} (auto")), "{value}");
    assert!(
        value.contains(&format!(
            "region: {} × {} at fabric ({}, {})",
            placed.rows, placed.cols, placed.rect.x, placed.rect.y
        )),
        "{value}"
    );
    assert!(
        value.contains(&format!(
            "PEs: {}",
            grouped(u64::from(placed.rows) * u64::from(placed.cols))
        )),
        "{value}"
    );
    assert!(
        value.contains(&format!(
            "SRAM per PE: {} / {} bytes",
            grouped(placed.sram_bytes),
            grouped(u64::from(placement.sram_bytes_available))
        )),
        "{value}"
    );
    assert!(
        value.contains(&format!(
            "estimated cycles: {} per sample",
            grouped(placed.estimate.cycles)
        )),
        "{value}"
    );
    // Still the shapes and cost above it.
    assert!(value.contains("flops: 4,128 per sample"), "{value}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hover_in_a_kernel_shows_declarations_and_types() {
    let (mut client, uri, text) = open_example("gemv").await;
    let hover = client
        .request(
            "textDocument/hover",
            at(&uri, pos(&text, "prod[0..n] = a", 0, 14)),
        )
        .await;
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(value.contains("var a: [f32; m * n]"), "{value}");
    assert!(
        value.contains("SRAM variable of kernel `gemv_tile`"),
        "{value}"
    );
    let hover = client
        .request("textDocument/hover", at(&uri, pos(&text, "recv(xs", 0, 5)))
        .await;
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        value.contains("in xs: stream<f32> from north multicast"),
        "{value}"
    );
    let hover = client
        .request(
            "textDocument/hover",
            at(&uri, pos(&text, "run gemv_tile", 0, 5)),
        )
        .await;
    let value = hover["result"]["contents"]["value"]
        .as_str()
        .unwrap_or_default();
    assert!(
        value.contains("kernel gemv_tile(m: u32, n: u32, samples: u32)"),
        "{value}"
    );
    assert!(
        value.contains("**Ports:**") && value.contains("`fromw` (in from west)"),
        "{value}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn definition_goes_into_the_stdlib_and_within_the_file() {
    let (mut client, uri, text) = open_example("digits").await;
    let answer = client
        .request(
            "textDocument/definition",
            at(&uri, pos(&text, "dense(x", 0, 1)),
        )
        .await;
    let target = &answer["result"];
    let target_uri = target["uri"].as_str().unwrap_or_default();
    assert!(target_uri.ends_with("/nn.wse"), "{answer}");
    let path = tower_lsp::lsp_types::Url::parse(target_uri)
        .ok()
        .and_then(|u| u.to_file_path().ok())
        .unwrap_or_default();
    let stdlib = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(stdlib, include_str!("../../stdlib/nn.wse"));
    assert!(std::fs::metadata(&path).is_ok_and(|m| m.permissions().readonly()));
    let line = target["range"]["start"]["line"].as_u64().unwrap_or(0) as usize;
    assert!(
        stdlib
            .lines()
            .nth(line)
            .is_some_and(|l| l.starts_with("layer dense(")),
        "{answer}"
    );
    // The import list names the same definition.
    let answer = client
        .request(
            "textDocument/definition",
            at(&uri, pos(&text, "dense,", 0, 0)),
        )
        .await;
    assert_eq!(&answer["result"], target);
    // A tensor: its `let`.
    let answer = client
        .request(
            "textDocument/definition",
            at(&uri, pos(&text, "h1, w2", 0, 0)),
        )
        .await;
    assert_eq!(answer["result"]["uri"], json!(uri));
    assert_eq!(answer["result"]["range"]["start"], pos(&text, "h1 =", 0, 0));
    // Inside the opened stdlib file, definitions keep working.
    client.open(target_uri, &stdlib).await;
    let answer = client
        .request(
            "textDocument/definition",
            at(target_uri, pos(&stdlib, "run dense_tile", 0, 5)),
        )
        .await;
    assert_eq!(answer["result"]["uri"], json!(target_uri));
    assert_eq!(
        answer["result"]["range"]["start"],
        pos(&stdlib, "dense_tile(n: u32", 0, 0)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn references_cover_uses_imports_and_the_declaration() {
    let (mut client, uri, text) = open_example("digits").await;
    let refs = |answer: &Value| -> Vec<(String, Value)> {
        answer["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|l| {
                (
                    l["uri"].as_str().unwrap_or_default().to_string(),
                    l["range"]["start"].clone(),
                )
            })
            .collect()
    };
    let answer = client
        .request(
            "textDocument/references",
            json!({ "textDocument": { "uri": uri }, "position": pos(&text, "h1 =", 0, 0), "context": { "includeDeclaration": true } }),
        )
        .await;
    assert_eq!(
        refs(&answer),
        vec![
            (uri.clone(), pos(&text, "h1 =", 0, 0)),
            (uri.clone(), pos(&text, "h1, w2", 0, 0))
        ]
    );
    let answer = client
        .request(
            "textDocument/references",
            json!({ "textDocument": { "uri": uri }, "position": pos(&text, "dense(h2", 0, 0), "context": { "includeDeclaration": false } }),
        )
        .await;
    let found = refs(&answer);
    let in_file: Vec<&Value> = found
        .iter()
        .filter(|(u, _)| u == &uri)
        .map(|(_, p)| p)
        .collect();
    assert_eq!(in_file.len(), 4, "the import and three calls: {answer}");
    assert!(
        found.iter().all(|(u, _)| u == &uri),
        "no declaration asked for: {answer}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completion_knows_the_context() {
    let (mut client, uri, text) = open_example("residual").await;
    let labels = |answer: &Value| -> Vec<String> {
        answer["result"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|c| c["label"].as_str().map(str::to_string))
            .collect()
    };
    // `bind a to port |a_in` inside residual_add: the ports of add_row.
    let answer = client
        .request(
            "textDocument/completion",
            at(&uri, pos(&text, "a_in split", 0, 0)),
        )
        .await;
    assert_eq!(labels(&answer), vec!["a_in", "b_in", "ys"]);
    // `bind g to array |gain`: the arrays of layernorm_row.
    let answer = client
        .request(
            "textDocument/completion",
            at(&uri, pos(&text, "gain split", 0, 0)),
        )
        .await;
    assert_eq!(
        labels(&answer),
        vec!["v", "t", "gain", "shift", "mine", "glob"]
    );
    // `run add_row(|n = ...`: the kernel's parameters.
    let answer = client
        .request(
            "textDocument/completion",
            at(&uri, pos(&text, "run add_row(n", 0, 12)),
        )
        .await;
    assert_eq!(labels(&answer), vec!["n", "samples"]);
    // `import std.nn.{|dense`: the module's items.
    let answer = client
        .request(
            "textDocument/completion",
            at(&uri, pos(&text, "{dense, relu}", 0, 1)),
        )
        .await;
    let items = labels(&answer);
    assert!(
        ["dense", "relu", "softmax", "dense_tile"]
            .iter()
            .all(|n| items.contains(&n.to_string())),
        "{items:?}"
    );
    // In a model: names in scope, stdlib items, keywords.
    let answer = client
        .request(
            "textDocument/completion",
            at(&uri, pos(&text, "let h = relu", 0, 8)),
        )
        .await;
    let items = labels(&answer);
    for wanted in [
        "dense",
        "residual_add",
        "layernorm",
        "x",
        "w1",
        "softmax",
        "return",
        "LN_EPS",
    ] {
        assert!(
            items.contains(&wanted.to_string()),
            "{wanted} missing from {items:?}"
        );
    }
    // `pe.`: the fields.
    let answer = client
        .request(
            "textDocument/completion",
            at(&uri, pos(&text, "pe.col == 0", 0, 3)),
        )
        .await;
    assert_eq!(labels(&answer), vec!["row", "col"]);
    // In a comment: nothing.
    let answer = client
        .request(
            "textDocument/completion",
            at(&uri, pos(&text, "A residual MLP", 0, 3)),
        )
        .await;
    assert_eq!(labels(&answer), Vec::<String>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn document_symbols_outline_the_file() {
    let (mut client, uri, _) = open_example("residual").await;
    let answer = client
        .request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": uri } }),
        )
        .await;
    let symbols = answer["result"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = symbols.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(
        names,
        vec![
            "LN_EPS",
            "add_row",
            "residual_add",
            "add_resident",
            "layernorm_row",
            "layernorm",
            "layernorm_resident",
            "block",
            "run block"
        ]
    );
    let add_row: Vec<&str> = symbols[1]["children"]
        .as_array()
        .map(|c| c.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(
        add_row,
        vec![
            "n", "samples", "a", "b", "done", "a_in", "b_in", "ys", "main", "have_a", "add"
        ]
    );
    assert_eq!(symbols[1]["kind"], 12, "a kernel is a function");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn semantic_tokens_classify_names_by_what_they_are() {
    let (mut client, uri, text) = open_example("digits").await;
    let answer = client
        .request(
            "textDocument/semanticTokens/full",
            json!({ "textDocument": { "uri": uri } }),
        )
        .await;
    let data: Vec<u64> = answer["result"]["data"]
        .as_array()
        .map(|d| d.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default();
    assert!(!data.is_empty() && data.len().is_multiple_of(5));
    // Decode to absolute (line, start, length, type, modifiers).
    let mut tokens = Vec::new();
    let (mut line, mut start) = (0, 0);
    for t in data.chunks(5) {
        if t[0] > 0 {
            line += t[0];
            start = t[1];
        } else {
            start += t[1];
        }
        tokens.push((line, start, t[2], t[3], t[4]));
    }
    let find = |needle: &str, shift: usize| {
        let p = pos(&text, needle, 0, shift);
        let (l, c) = (
            p["line"].as_u64().unwrap_or(0),
            p["character"].as_u64().unwrap_or(0),
        );
        tokens.iter().find(|t| t.0 == l && t.1 == c).copied()
    };
    // `dense` in a call: a function (2) from the stdlib (defaultLibrary = 4).
    assert_eq!(find("dense(x", 0).map(|t| (t.2, t.3, t.4)), Some((5, 2, 4)));
    // `model`: a keyword (0); `f32`: a type (1); `w1` at its declaration: variable (4) + declaration (1).
    assert_eq!(find("model digits", 0).map(|t| t.3), Some(0));
    assert_eq!(find("f32[B, 64]", 0).map(|t| t.3), Some(1));
    assert_eq!(find("w1: f32", 0).map(|t| (t.3, t.4)), Some((4, 1)));
    // A doc comment: comment (8) + documentation (8).
    assert_eq!(find("/// Class", 0).map(|t| (t.3, t.4)), Some((8, 8)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inlay_hints_show_inferred_shapes() {
    let (mut client, uri, text) = open_example("digits").await;
    let answer = client
        .request(
            "textDocument/inlayHint",
            json!({ "textDocument": { "uri": uri }, "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 999, "character": 0 } } }),
        )
        .await;
    let hints: Vec<(Value, String)> = answer["result"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|h| {
            (
                h["position"].clone(),
                h["label"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert!(
        hints.contains(&(pos(&text, "h1 =", 0, 2), ": f32[B, 32]".to_string())),
        "{hints:?}"
    );
    assert!(
        hints.contains(&(pos(&text, "h2 =", 0, 2), ": f32[B, 16]".to_string())),
        "{hints:?}"
    );
    // The nested dense calls show their result shape.
    assert!(
        hints.contains(&(
            pos(&text, "dense(x, w1, b1)", 0, 16),
            ": f32[B, 32]".to_string()
        )),
        "{hints:?}"
    );
    assert!(
        hints.contains(&(
            pos(&text, "dense(h2, w3, b3)", 0, 17),
            ": f32[B, 10]".to_string()
        )),
        "{hints:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formatting_uses_the_formatter_and_refuses_broken_files() {
    let mut client = TestClient::start().await;
    let uri = "file:///tmp/wsel-lsp-test/fmt.wse";
    let text = "const  A:u32=1+2;\nkernel k(n:u32){var x:[f32;n];task main(){x[0..n]=0.0;}}\n";
    client.open(uri, text).await;
    let answer = client
        .request("textDocument/formatting", json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }))
        .await;
    let edits = answer["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(edits.len(), 1, "{answer}");
    assert_eq!(
        edits[0]["newText"].as_str(),
        wsel_fmt::format(text).ok().as_deref()
    );
    assert_eq!(
        edits[0]["range"]["end"],
        json!({ "line": 2, "character": 0 })
    );
    client.change(uri, 2, [0, 0, 0, 0], "@@ ").await;
    let answer = client
        .request("textDocument/formatting", json!({ "textDocument": { "uri": uri }, "options": { "tabSize": 4, "insertSpaces": true } }))
        .await;
    assert_eq!(answer["result"], Value::Null, "{answer}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_on_odd_input_are_answered() {
    let mut client = TestClient::start().await;
    let uri = "file:///tmp/wsel-lsp-test/odd.wse";
    client.open(uri, "kernel λ(  \u{1F600} /* open").await;
    let published = client.diagnostics(uri, Some(1)).await;
    assert!(
        published["diagnostics"]
            .as_array()
            .is_some_and(|d| !d.is_empty())
    );
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ] {
        let answer = client
            .request(method, at(uri, json!({ "line": 99, "character": 99 })))
            .await;
        assert!(answer.get("result").is_some(), "{method}: {answer}");
    }
    // An unknown document: empty answers, not errors.
    let answer = client
        .request(
            "textDocument/hover",
            at(
                "file:///nowhere/x.wse",
                json!({ "line": 0, "character": 0 }),
            ),
        )
        .await;
    assert_eq!(answer["result"], Value::Null);
    // An edit whose range lies past the end is clamped.
    client
        .change(uri, 2, [40, 3, 50, 0], "kernel k() { task main() {} }")
        .await;
    let published = client.diagnostics(uri, Some(2)).await;
    assert!(published["diagnostics"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_edits_cancel_running_requests() {
    let mut client = TestClient::start().await;
    let uri = "file:///tmp/wsel-lsp-test/big.wse";
    let text = wsel_lsp::testing::large_program(200);
    client.open(uri, &text).await;
    client.diagnostics(uri, Some(1)).await;
    // Requests in flight while edits arrive: each is answered, with a result or with
    // ContentModified; the diagnostics of the last edit are published.
    let mut ids = Vec::new();
    for version in 2..8 {
        ids.push(
            client
                .request_later(
                    "textDocument/semanticTokens/full",
                    json!({ "textDocument": { "uri": uri } }),
                )
                .await,
        );
        client.change(uri, version, [0, 0, 0, 0], "\n").await;
    }
    let mut cancelled = 0;
    for id in ids {
        let answer = client.response(id).await;
        let ok = answer.get("result").is_some() || answer["error"]["code"] == json!(-32801);
        assert!(ok, "{answer}");
        cancelled += usize::from(answer.get("error").is_some());
    }
    // Each request's snapshot is taken before the edit that follows it, and classifying an
    // 8,000-line file takes far longer than reaching that edit: the edit cancels it.
    assert!(cancelled > 0, "no request was cancelled by a newer edit");
    let published = client.diagnostics(uri, Some(7)).await;
    assert_eq!(published["diagnostics"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_param_file_is_reported_at_its_param_line() {
    let dir = std::env::temp_dir().join(format!("wsel-lsp-param-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("data")).expect("temp dir");
    // Only the name matters for the hint; the file itself is never read.
    std::fs::write(dir.join("data/w3.npy"), b"").expect("near file");
    let path = dir.join("model.wse");
    let text = "import std.nn.{relu, dense};\n\
                model m(x: f32[B, 4]) -> f32[B, 2] {\n    \
                    param w: f32[4, 2] from \"data/w4.npy\";\n    \
                    param b: f32[2] from \"data/w3.npy\";\n    \
                    return relu(dense(x, w, b));\n}\n";
    let uri = file_uri(&path);
    let mut client = TestClient::start().await;
    client.open(&uri, text).await;
    let published = client.diagnostics(&uri, Some(1)).await;
    let diagnostics = published["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let codes: Vec<&str> = diagnostics
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    // `w4.npy` is missing (E0801, with the near name); `w3.npy` is empty, not NumPy (E0801).
    assert_eq!(codes, ["E0801", "E0801"], "{published}");
    let missing = &diagnostics[0];
    assert_eq!(missing["range"]["start"]["line"], 2, "{missing}");
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("cannot read `") && m.contains("data/w4.npy")),
        "{missing}"
    );
    assert!(
        missing["message"]
            .as_str()
            .is_some_and(|m| m.contains("did you mean `data/w3.npy`?")),
        "{missing}"
    );
    assert_eq!(diagnostics[1]["range"]["start"]["line"], 3, "{published}");
    let _ = std::fs::remove_dir_all(&dir);
}
