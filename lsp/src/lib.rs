//! The wsel language server (`wsel lsp`): tower-lsp over the same salsa database as the CLI.
//!
//! The analyses are plain data — byte offsets in, spans and strings out — one module per
//! feature ([`hover`], [`definition`], [`completion`], [`symbols`], [`semantic_tokens`],
//! [`inlay_hints`], [`formatting`], [`diagnostics`]) over [`context::FileCtx`]. [`server`] is the only module
//! that speaks LSP; [`line_index`] converts positions (UTF-16) and [`workspace`] holds the
//! database, the open documents and the URI ↔ path mapping.

pub mod completion;
pub mod context;
pub mod definition;
pub mod defs;
pub mod diagnostics;
pub mod exit;
pub mod formatting;
pub mod hover;
pub mod inlay_hints;
pub mod layer_call;
pub mod line_index;
pub mod semantic_tokens;
pub mod server;
pub mod symbols;
#[doc(hidden)]
pub mod testing;
#[cfg(test)]
mod tests;
pub mod workspace;

pub use server::Backend;

/// Serves the Language Server Protocol on standard input and output until the client sends
/// `exit` or closes the input, and says which ([`exit::Ending`]).
pub fn run_stdio() -> std::io::Result<exit::Ending> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let ending = runtime.block_on(async {
        let (to_server, from_client) = tokio::io::duplex(64 * 1024);
        let (service, socket) = tower_lsp::LspService::new(Backend::new);
        let server = tower_lsp::Server::new(from_client, tokio::io::stdout(), socket)
            .concurrency_level(8)
            .serve(service);
        let (ending, ()) = tokio::join!(exit::forward(tokio::io::stdin(), to_server), server);
        ending
    });
    // The blocking read of standard input may still be waiting for bytes that never come.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    ending
}
