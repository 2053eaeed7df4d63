//! The `exit` notification. tower-lsp 0.20 marks itself exited on `exit` but keeps reading
//! its input until the client closes it (ebkalderon/tower-lsp#399), and editors that keep the
//! pipe open then wait on a server that never ends. So the server reads its input through
//! [`forward`]: every message passes on unchanged, and the stream to tower-lsp ends at `exit`,
//! which ends its `serve`. The LSP specification asks for exit code 0 when `shutdown` came
//! first and 1 otherwise; [`Ending`] says which.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// How the client ended the session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The `exit` notification, after a `shutdown` request or not.
    Exit { after_shutdown: bool },
    /// The input ended without `exit`.
    InputClosed,
}

impl Ending {
    /// The process exit code the LSP specification asks for: 1 for `exit` without
    /// `shutdown`, else 0.
    pub fn code(self) -> u8 {
        match self {
            Ending::Exit {
                after_shutdown: false,
            } => 1,
            _ => 0,
        }
    }
}

/// Bodies larger than this are passed on without being read for their method: `shutdown` and
/// `exit` are a few dozen bytes, and a client's claimed length must not size an allocation.
const INSPECTED_BODY: usize = 64 * 1024;

/// Copies LSP messages from `input` to `output` until `exit` (not passed on) or the end of
/// the input, then drops `output` so that its reader sees the end.
pub async fn forward<R, W>(input: R, mut output: W) -> std::io::Result<Ending>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    let mut shutdown = false;
    let mut header = Vec::new();
    loop {
        header.clear();
        let length = match read_header(&mut input, &mut header).await? {
            Header::End => break,
            Header::Length(length) => length,
            // Not a frame this module understands: tower-lsp reports and resynchronises.
            Header::Other => {
                output.write_all(&header).await?;
                continue;
            }
        };
        if length > INSPECTED_BODY {
            output.write_all(&header).await?;
            let copied =
                tokio::io::copy(&mut (&mut input).take(length as u64), &mut output).await?;
            if copied < length as u64 {
                break;
            }
            continue;
        }
        let mut body = Vec::with_capacity(length);
        (&mut input)
            .take(length as u64)
            .read_to_end(&mut body)
            .await?;
        if body.len() < length {
            output.write_all(&header).await?;
            output.write_all(&body).await?;
            break;
        }
        match method_of(&body).as_deref() {
            Some("exit") => {
                return Ok(Ending::Exit {
                    after_shutdown: shutdown,
                });
            }
            Some("shutdown") => shutdown = true,
            _ => {}
        }
        output.write_all(&header).await?;
        output.write_all(&body).await?;
    }
    output.shutdown().await?;
    Ok(Ending::InputClosed)
}

/// The `method` of a JSON-RPC message, if it is one.
fn method_of(body: &[u8]) -> Option<String> {
    let message: serde_json::Value = serde_json::from_slice(body).ok()?;
    message.get("method")?.as_str().map(str::to_string)
}

/// What a message's header said.
enum Header {
    /// The body's length in bytes.
    Length(usize),
    /// A header without a usable `Content-Length`.
    Other,
    /// The input ended.
    End,
}

/// Reads header lines up to and including the empty line into `raw`.
async fn read_header<R: AsyncBufReadExt + Unpin>(
    input: &mut R,
    raw: &mut Vec<u8>,
) -> std::io::Result<Header> {
    let mut length = None;
    loop {
        let start = raw.len();
        if input.read_until(b'\n', raw).await? == 0 {
            return Ok(if raw.is_empty() {
                Header::End
            } else {
                Header::Other
            });
        }
        let line = String::from_utf8_lossy(&raw[start..]);
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            return Ok(length.map_or(Header::Other, Header::Length));
        }
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    async fn run(input: String) -> (Ending, String) {
        let (mut writer, reader) = tokio::io::duplex(1 << 20);
        let ending = forward(input.as_bytes(), &mut writer)
            .await
            .expect("forward");
        drop(writer);
        let mut passed = String::new();
        let mut reader = reader;
        reader
            .read_to_string(&mut passed)
            .await
            .expect("read passed");
        (ending, passed)
    }

    #[tokio::test]
    async fn exit_after_shutdown_ends_the_stream_with_code_0() {
        let shutdown = frame(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#);
        let exit = frame(r#"{"jsonrpc":"2.0","method":"exit"}"#);
        let after = frame(r#"{"jsonrpc":"2.0","id":2,"method":"hover"}"#);
        let (ending, passed) = run(format!("{shutdown}{exit}{after}")).await;
        assert_eq!(
            ending,
            Ending::Exit {
                after_shutdown: true
            }
        );
        assert_eq!(ending.code(), 0);
        assert_eq!(
            passed, shutdown,
            "everything before `exit` passes, nothing after"
        );
    }

    #[tokio::test]
    async fn exit_without_shutdown_has_code_1() {
        let (ending, _) = run(frame(r#"{"jsonrpc":"2.0","method":"exit"}"#)).await;
        assert_eq!(ending.code(), 1);
    }

    #[tokio::test]
    async fn other_input_passes_unchanged() {
        let big = frame(&format!(
            r#"{{"method":"x","pad":"{}"}}"#,
            "a".repeat(70_000)
        ));
        let input = format!(
            "{}garbage without a header\r\n\r\n{big}Content-Length: 99\r\n\r\n{{}}",
            frame("{}")
        );
        let (ending, passed) = run(input.clone()).await;
        assert_eq!(ending, Ending::InputClosed);
        assert_eq!(passed, input);
    }
}
