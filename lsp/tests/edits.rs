//! Property test: random sequences of edits (inserts of code fragments and garbage,
//! deletions, ranges past the end) sent to the server. The server never stops, publishes
//! diagnostics for every version, and the last ones equal what the front end reports for
//! the same text; requests in between are answered.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Value, json};
use tower_lsp::lsp_types::{Position, Range};
use wsel_lsp::testing::TestClient;

const SEED: &str = include_str!("../../examples/digits/main.wse");
const URI: &str = "file:///tmp/wsel-lsp-prop/main.wse";

const FRAGMENTS: &[&str] = &[
    "kernel",
    "layer",
    "model",
    "{",
    "}",
    "(",
    ")",
    ";",
    "let x = ",
    "@#$",
    "λ𝄞",
    "\n",
    "/*",
    "*/",
    "\"",
    "//",
    "import std.nn.{dense};",
    "return x;",
    "f32[B, 64]",
    "model m(x: f32[B, 4]) -> f32[B, 4] { return x; }",
    "kernel k(n: u32) { var a: [f32; n]; task main() { a[0..n] = 0.0; } }",
    "dense(x, w1, b1)",
    "param w: f32[4, 4];",
    "0x",
    "1e",
    "99999999999999999999999",
];

#[derive(Debug, Clone)]
enum Action {
    Edit { range: [u32; 4], text: String },
    Hover { line: u32, character: u32 },
    Complete { line: u32, character: u32 },
}

fn action() -> impl Strategy<Value = Action> {
    let position = (0u32..40, 0u32..90);
    let text = prop_oneof![
        3 => proptest::sample::select(FRAGMENTS).prop_map(str::to_string),
        2 => "[a-z0-9{}();:=\\[\\] \n.,<>+*/-]{0,16}",
        1 => any::<String>().prop_map(|s| s.chars().take(8).collect()),
        2 => Just(String::new()),
    ];
    prop_oneof![
        6 => (position.clone(), 0u32..3, 0u32..40, text).prop_map(|((l, c), dl, dc, text)| {
            Action::Edit { range: [l, c, l + dl, if dl == 0 { c + dc } else { dc }], text }
        }),
        1 => position.clone().prop_map(|(line, character)| Action::Hover { line, character }),
        1 => position.prop_map(|(line, character)| Action::Complete { line, character }),
    ]
}

async fn run(actions: Vec<Action>) {
    let mut client = TestClient::start().await;
    client.open(URI, SEED).await;
    client.diagnostics(URI, Some(1)).await;
    let mut text = SEED.to_string();
    let mut version = 1;
    for action in actions {
        match action {
            Action::Edit { range, text: new } => {
                version += 1;
                client.change(URI, version, range, &new).await;
                let [l0, c0, l1, c1] = range;
                wsel_lsp::line_index::apply_change(
                    &mut text,
                    Some(Range::new(Position::new(l0, c0), Position::new(l1, c1))),
                    &new,
                );
                let published = client.diagnostics(URI, Some(version)).await;
                assert!(published["diagnostics"].is_array(), "{published}");
            }
            Action::Hover { line, character } | Action::Complete { line, character } => {
                let method = match action {
                    Action::Hover { .. } => "textDocument/hover",
                    _ => "textDocument/completion",
                };
                let answer = client
                    .request(
                        method,
                        json!({ "textDocument": { "uri": URI }, "position": { "line": line, "character": character } }),
                    )
                    .await;
                let ok = answer.get("result").is_some() || answer["error"]["code"] == json!(-32801);
                assert!(ok, "{method}: {answer}");
            }
        }
    }
    // The server's text is the client's: the last diagnostics are the front end's for it.
    version += 1;
    client.change(URI, version, [0, 0, 0, 0], "").await;
    let published = client.diagnostics(URI, Some(version)).await;
    let codes: Vec<Value> = published["diagnostics"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|d| d["code"].clone())
        .collect();
    let mut db = wsel_sema::Database::default();
    let path = Path::new("/tmp/wsel-lsp-prop/main.wse");
    let expected: Vec<Value> =
        match wsel_sema::load_program(&mut db, path, &mut |_| Ok(text.clone())) {
            Ok(file) => wsel_lsp::diagnostics::document_diagnostics(&db, file)
                .iter()
                .map(|d| json!(d.code))
                .collect(),
            Err(_) => Vec::new(),
        };
    assert_eq!(codes, expected, "text:\n{text}");
    // And it still answers.
    let answer = client
        .request(
            "textDocument/documentSymbol",
            json!({ "textDocument": { "uri": URI } }),
        )
        .await;
    assert!(answer.get("result").is_some(), "{answer}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn random_edit_sequences_keep_the_server_running(actions in proptest::collection::vec(action(), 1..14)) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build();
        prop_assert!(runtime.is_ok());
        if let Ok(runtime) = runtime {
            runtime.block_on(run(actions));
        }
    }
}
