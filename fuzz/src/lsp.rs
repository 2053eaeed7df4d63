//! The language server's edit stream: a session opens a seed source, then each input is one
//! random incremental edit (a range of the current text replaced by words of the language or
//! a piece of another seed) followed by a request at a random position (hover, completion,
//! definition, semantic tokens, inlay hints, formatting). Every request must be answered;
//! the server runs in process, as in the protocol tests. A failure's reproducer is the
//! session's edits so far, as JSON lines.

use std::cell::RefCell;

use serde_json::{Value, json};
use wsel_lsp::testing::TestClient;

use crate::harness::{Tally, run};
use crate::mutate::Rng;

/// Edits per session before a fresh server starts.
const SESSION: usize = 200;

pub fn lsp(rng: &mut Rng, seconds: f64) -> Tally {
    let seeds = crate::corpus::sources();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => panic!("no tokio runtime: {e}"),
    };
    let session: RefCell<Option<Session>> = RefCell::new(None);
    // Each input is the session so far, one JSON step per line, ending with the new step, so
    // that a failure's reproducer replays the whole session; `check` applies the last line.
    let mut next = || {
        let current = session.borrow();
        let step = edit(rng, &seeds, current.as_ref().map(|s| s.text.as_slice()));
        let mut lines = match current.as_ref() {
            Some(s) if !step.starts_with(b"{\"open\"") => s.log.join("\n").into_bytes(),
            _ => Vec::new(),
        };
        if !lines.is_empty() {
            lines.push(b'\n');
        }
        lines.extend(step);
        lines
    };
    let mut check = |input: &[u8]| {
        let last = input.rsplit(|b| *b == b'\n').next().unwrap_or_default();
        let step: Value = serde_json::from_slice(last).unwrap_or(Value::Null);
        runtime.block_on(apply(&mut session.borrow_mut(), &step));
    };
    run("lsp", "jsonl", seconds, &mut next, &mut check)
}

struct Session {
    client: TestClient,
    text: Vec<char>,
    version: i32,
    log: Vec<String>,
}

const URI: &str = "file:///fuzz/main.wse";

/// One input: a whole new document (`open`), or an edit of the current one and a request.
fn edit(rng: &mut Rng, seeds: &[Vec<u8>], text: Option<&[char]>) -> Vec<u8> {
    let step = match text {
        Some(text) if rng.below(SESSION) != 0 => {
            let (a, b) = (rng.below(text.len() + 1), rng.below(text.len() + 1));
            let (start, end) = (a.min(b), a.max(b).min(a.min(b) + 40));
            let insert = if rng.below(2) == 0 {
                rng.pick(crate::corpus::WSE_WORDS).to_string()
            } else {
                let seed = String::from_utf8_lossy(rng.pick(seeds).as_slice())
                    .chars()
                    .collect::<Vec<_>>();
                let from = rng.below(seed.len());
                seed[from..(from + rng.below(30)).min(seed.len())]
                    .iter()
                    .collect()
            };
            let method = *rng.pick(&[
                "textDocument/hover",
                "textDocument/completion",
                "textDocument/definition",
                "textDocument/semanticTokens/full",
                "textDocument/inlayHint",
                "textDocument/formatting",
            ]);
            json!({ "start": start, "end": end, "insert": insert, "method": method, "at": rng.below(text.len() + 1) })
        }
        _ => json!({ "open": String::from_utf8_lossy(rng.pick(seeds).as_slice()) }),
    };
    serde_json::to_vec(&step).unwrap_or_default()
}

async fn apply(session: &mut Option<Session>, step: &Value) {
    if let Some(text) = step.get("open").and_then(Value::as_str) {
        let mut client = TestClient::start().await;
        client.open(URI, text).await;
        *session = Some(Session {
            client,
            text: text.chars().collect(),
            version: 1,
            log: vec![step.to_string()],
        });
        return;
    }
    let Some(s) = session.as_mut() else {
        return;
    };
    s.log.push(step.to_string());
    let number = |key: &str| step.get(key).and_then(Value::as_u64).unwrap_or(0) as usize;
    let (start, end) = (
        number("start").min(s.text.len()),
        number("end").min(s.text.len()),
    );
    let insert: Vec<char> = step["insert"].as_str().unwrap_or("").chars().collect();
    let range = [position(&s.text, start), position(&s.text, end)];
    s.version += 1;
    s.client
        .change(
            URI,
            s.version,
            [range[0].0, range[0].1, range[1].0, range[1].1],
            &insert.iter().collect::<String>(),
        )
        .await;
    s.text.splice(start..end, insert);
    let (line, character) = position(&s.text, number("at").min(s.text.len()));
    let method = step["method"].as_str().unwrap_or("textDocument/hover");
    let params = json!({
        "textDocument": { "uri": URI },
        "position": { "line": line, "character": character },
        "range": { "start": { "line": 0, "character": 0 }, "end": { "line": line, "character": character } },
        "options": { "tabSize": 4, "insertSpaces": true },
    });
    let response = s.client.request(method, params).await;
    assert!(
        response.get("result").is_some() || response.get("error").is_some(),
        "no answer"
    );
    assert!(
        response.pointer("/error/code") != Some(&json!(-32603)),
        "internal error: {response}"
    );
}

/// The LSP position (line, UTF-16 column) of char `index` in `text`.
fn position(text: &[char], index: usize) -> (u32, u32) {
    let before = &text[..index];
    let line = before.iter().filter(|c| **c == '\n').count();
    let column: usize = before
        .iter()
        .rev()
        .take_while(|c| **c != '\n')
        .map(|c| c.len_utf16())
        .sum();
    (line as u32, column as u32)
}
