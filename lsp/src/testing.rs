//! An in-process LSP client for the protocol tests and the latency benchmark: it runs the
//! server on an in-memory duplex stream and speaks JSON-RPC with `Content-Length` framing,
//! keeping the notifications it receives until a test asks for them.

use std::collections::VecDeque;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, DuplexStream};
use tower_lsp::{LspService, Server};

use crate::Backend;

/// How long a test waits for one message before giving up. A layer call's first hover maps
/// the model with its kernels dry-run (`wsel-estimate`), which in the tests' debug build —
/// tests running side by side on a shared machine — can take seconds.
pub const TIMEOUT: Duration = Duration::from_secs(60);

pub struct TestClient {
    writer: tokio::io::WriteHalf<DuplexStream>,
    reader: BufReader<tokio::io::ReadHalf<DuplexStream>>,
    next_id: i64,
    /// Notifications received while waiting for something else, oldest first.
    pub notifications: VecDeque<Value>,
}

impl TestClient {
    /// Starts a server and completes `initialize` / `initialized`.
    pub async fn start() -> Self {
        let (service, socket) = LspService::new(Backend::new);
        let (client_io, server_io) = tokio::io::duplex(1 << 20);
        let (server_read, server_write) = tokio::io::split(server_io);
        tokio::spawn(async move {
            Server::new(server_read, server_write, socket)
                .concurrency_level(8)
                .serve(service)
                .await;
        });
        let (read, writer) = tokio::io::split(client_io);
        let mut client = TestClient {
            writer,
            reader: BufReader::new(read),
            next_id: 1,
            notifications: VecDeque::new(),
        };
        let init = client
            .request("initialize", json!({ "capabilities": {} }))
            .await;
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        client.notify("initialized", json!({})).await;
        client
    }

    /// Sends a request and returns the whole response (`result` or `error`).
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        loop {
            let message = self.receive().await;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.notifications.push_back(message);
        }
    }

    /// Sends a request without waiting; returns its id (see [`TestClient::response`]).
    pub async fn request_later(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))
            .await;
        id
    }

    /// Waits for the response to request `id`.
    pub async fn response(&mut self, id: i64) -> Value {
        if let Some(i) = self
            .notifications
            .iter()
            .position(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
        {
            return self.notifications.remove(i).unwrap_or(Value::Null);
        }
        loop {
            let message = self.receive().await;
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.notifications.push_back(message);
        }
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({ "jsonrpc": "2.0", "method": method, "params": params }))
            .await;
    }

    pub async fn open(&mut self, uri: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "wse", "version": 1, "text": text } }),
        )
        .await;
    }

    /// Sends one incremental change (`range` as `[line, character, line, character]`).
    pub async fn change(&mut self, uri: &str, version: i32, range: [u32; 4], text: &str) {
        let [l0, c0, l1, c1] = range;
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": { "uri": uri, "version": version },
                "contentChanges": [{
                    "range": { "start": { "line": l0, "character": c0 }, "end": { "line": l1, "character": c1 } },
                    "text": text,
                }],
            }),
        )
        .await;
    }

    /// The next `publishDiagnostics` for `uri` (with `version`, when given): its parameters.
    pub async fn diagnostics(&mut self, uri: &str, version: Option<i32>) -> Value {
        let wanted = |m: &Value| {
            m.get("method") == Some(&json!("textDocument/publishDiagnostics"))
                && m["params"]["uri"] == json!(uri)
                && version.is_none_or(|v| m["params"]["version"] == json!(v))
        };
        if let Some(i) = self.notifications.iter().position(wanted) {
            return self
                .notifications
                .remove(i)
                .map(|m| m["params"].clone())
                .unwrap_or(Value::Null);
        }
        loop {
            let message = self.receive().await;
            if wanted(&message) {
                return message["params"].clone();
            }
            self.notifications.push_back(message);
        }
    }

    async fn send(&mut self, message: Value) {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let written = self.writer.write_all(frame.as_bytes()).await;
        assert!(written.is_ok(), "the server closed its input");
    }

    /// The next message from the server; panics after [`TIMEOUT`].
    async fn receive(&mut self) -> Value {
        match tokio::time::timeout(TIMEOUT, self.read_message()).await {
            Ok(Some(message)) => message,
            Ok(None) => panic!("the server closed its output"),
            Err(_) => panic!("no message from the server within {TIMEOUT:?}"),
        }
    }

    async fn read_message(&mut self) -> Option<Value> {
        let mut length = None;
        loop {
            let mut line = String::new();
            if self.reader.read_line(&mut line).await.ok()? == 0 {
                return None;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some(n) = line.strip_prefix("Content-Length: ") {
                length = n.parse::<usize>().ok();
            }
        }
        let mut body = vec![0; length?];
        self.reader.read_exact(&mut body).await.ok()?;
        serde_json::from_slice(&body).ok()
    }
}

/// A `file://` URI for a path (which need not exist).
pub fn file_uri(path: &std::path::Path) -> String {
    tower_lsp::lsp_types::Url::from_file_path(path)
        .map(|u| u.to_string())
        .unwrap_or_default()
}

/// A generated program of `units` units (a kernel, a layer running it and a model calling
/// the layer twice; 40 lines each) with no diagnostics, for load tests and benchmarks.
pub fn large_program(units: usize) -> String {
    let mut out = String::new();
    for i in 0..units {
        out.push_str(&format!(
            "/// Unit {i}: scale a row.
kernel scale_{i}(n: u32, samples: u32) {{
    var x: [f32; n];
    var done: u32 = 0;
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;

    task main() {{
        if samples > 0 {{
            recv(xs, x[0..n]) then step;
        }}
    }}

    task step() {{
        x[0..n] = x[0..n] * 2.0 + 1.0;
        send(ys, x[0..n]);
        done += 1;
        if done < samples {{
            recv(xs, x[0..n]) then step;
        }}
    }}
}}

layer scaled_{i}(x: f32[B, N]) -> y: f32[B, N] {{
    cost {{
        flops = 2 * N;
        weights = 0;
        activations = 8 * N;
    }}
    pipelined on [1, C] where N % C == 0 {{
        run scale_{i}(n = N / C, samples = B);
        bind x to port xs split [cols];
        bind y to port ys split [cols];
    }}
}}

model m_{i}(x: f32[B, 64]) -> f32[B, 64] {{
    let h = scaled_{i}(x);
    return scaled_{i}(h);
}}
"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_large_program_is_clean() {
        let text = super::large_program(3);
        assert_eq!(text.lines().count(), 120);
        let mut db = wsel_sema::Database::default();
        let file = wsel_sema::set_file(&mut db, std::path::Path::new("big.wse"), text);
        let diagnostics = wsel_sema::diagnostics(&db, file);
        assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    }
}
