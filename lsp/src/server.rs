//! The tower-lsp `LanguageServer`: document sync into the database, diagnostics publishing,
//! and every request answered on a database snapshot in a blocking thread. It only converts
//! between LSP and the plain-data analyses.
//!
//! Concurrency: an edit sets inputs on the one database (under the workspace mutex, applied
//! in message order); salsa then cancels every snapshot still computing, whose request
//! answers `ContentModified`. Snapshots are created under the mutex but never held while
//! taking it, so setting an input can always finish.

use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};

use tower_lsp::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp::lsp_types::*;
use tower_lsp::{Client, LanguageServer};
use wsel_sema::{Database, db::lookup_file};

use crate::context::FileCtx;
use crate::line_index::{LineIndex, apply_change};
use crate::workspace::{Converter, Document, PathMap, Workspace};
use crate::{completion, definition, formatting, hover, inlay_hints, semantic_tokens, symbols};

/// The language server.
pub struct Backend {
    client: Client,
    state: Arc<Mutex<Workspace>>,
    /// Held while checking that diagnostics are current and publishing them, so an older
    /// result is never sent after a newer one.
    publish: Arc<tokio::sync::Mutex<()>>,
}

impl Backend {
    pub fn new(client: Client) -> Self {
        Backend::with_stdlib_dir(client, PathMap::default_stdlib_dir())
    }

    /// A server that materialises the stdlib below `dir`.
    pub fn with_stdlib_dir(client: Client, dir: std::path::PathBuf) -> Self {
        Backend {
            client,
            state: Arc::new(Mutex::new(Workspace::new(PathMap::new(dir)))),
            publish: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Workspace> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on a snapshot of the database for the document `uri`, in a blocking thread.
    /// `Ok(None)` when the document is unknown; `ContentModified` when an edit cancelled it.
    async fn analyze<R, F>(&self, uri: &Url, f: F) -> Result<Option<R>>
    where
        R: Send + 'static,
        F: FnOnce(&FileCtx<'_>, &Converter) -> R + Send + 'static,
    {
        let (db, path, converter) = {
            let state = self.lock();
            let path = match state.docs.get(uri) {
                Some(doc) => doc.path.clone(),
                None => state.paths.uri_to_path(uri),
            };
            (state.db.clone(), path, state.converter())
        };
        run_on_snapshot(db, move |db| {
            let file = lookup_file(db, &path)?;
            let ctx = FileCtx::new(db, file);
            Some(f(&ctx, &converter))
        })
        .await
    }

    /// Computes the diagnostics of every open document on a snapshot and publishes them,
    /// unless another edit came in meanwhile (its own refresh publishes instead).
    async fn refresh_diagnostics(&self, edited: Option<Url>) {
        let (db, revision, docs, converter) = {
            let state = self.lock();
            let docs: Vec<(Url, Document)> = state
                .docs
                .iter()
                .map(|(u, d)| (u.clone(), d.clone()))
                .collect();
            (state.db.clone(), state.revision, docs, state.converter())
        };
        let computed = run_on_snapshot(db, move |db| {
            let mut out = Vec::new();
            for (uri, doc) in docs {
                let Some(file) = lookup_file(db, &doc.path) else {
                    continue;
                };
                let text = file.text(db);
                let index = LineIndex::new(text);
                let diagnostics: Vec<Diagnostic> =
                    crate::diagnostics::document_diagnostics(db, file)
                        .iter()
                        .map(|d| converter.diagnostic(db, &index, d))
                        .collect();
                out.push((uri, doc.version, diagnostics));
            }
            out
        })
        .await;
        let Ok(computed) = computed else {
            return;
        };
        let _publishing = self.publish.lock().await;
        let to_send: Vec<(Url, i32, Vec<Diagnostic>)> = {
            let mut state = self.lock();
            if state.revision != revision {
                return;
            }
            let mut to_send = Vec::new();
            for (uri, version, diagnostics) in computed {
                let same = state.published.get(&uri) == Some(&diagnostics);
                if !same || edited.as_ref() == Some(&uri) {
                    state.published.insert(uri.clone(), diagnostics.clone());
                    to_send.push((uri, version, diagnostics));
                }
            }
            to_send
        };
        for (uri, version, diagnostics) in to_send {
            self.client
                .publish_diagnostics(uri, diagnostics, Some(version))
                .await;
        }
    }
}

/// Runs `f` on `db` in a blocking thread. A salsa cancellation (an edit came in) becomes
/// `ContentModified`, any other panic `InternalError`; the snapshot is dropped either way.
async fn run_on_snapshot<R, F>(db: Database, f: F) -> Result<R>
where
    R: Send + 'static,
    F: FnOnce(&Database) -> R + Send + 'static,
{
    let joined = tokio::task::spawn_blocking(move || {
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
            salsa::Cancelled::catch(AssertUnwindSafe(|| f(&db)))
        }));
        drop(db);
        result
    })
    .await;
    match joined {
        Ok(Ok(Ok(value))) => Ok(value),
        Ok(Ok(Err(_cancelled))) => Err(Error {
            code: ErrorCode::ContentModified,
            message: "the document changed; the request was cancelled".into(),
            data: None,
        }),
        Ok(Err(_)) | Err(_) => Err(Error {
            code: ErrorCode::InternalError,
            message: "the language server failed on this request (a bug in wsel)".into(),
            data: None,
        }),
    }
}

/// The capabilities this server offers.
pub fn capabilities() -> ServerCapabilities {
    ServerCapabilities {
        text_document_sync: Some(TextDocumentSyncCapability::Options(
            TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                ..TextDocumentSyncOptions::default()
            },
        )),
        hover_provider: Some(HoverProviderCapability::Simple(true)),
        definition_provider: Some(OneOf::Left(true)),
        references_provider: Some(OneOf::Left(true)),
        completion_provider: Some(CompletionOptions {
            trigger_characters: Some(vec![".".into(), "{".into(), "(".into(), ",".into()]),
            ..CompletionOptions::default()
        }),
        document_symbol_provider: Some(OneOf::Left(true)),
        semantic_tokens_provider: Some(SemanticTokensServerCapabilities::SemanticTokensOptions(
            SemanticTokensOptions {
                legend: SemanticTokensLegend {
                    token_types: semantic_tokens::TOKEN_TYPES.to_vec(),
                    token_modifiers: semantic_tokens::TOKEN_MODIFIERS.to_vec(),
                },
                full: Some(SemanticTokensFullOptions::Bool(true)),
                range: None,
                ..SemanticTokensOptions::default()
            },
        )),
        inlay_hint_provider: Some(OneOf::Left(true)),
        document_formatting_provider: Some(OneOf::Left(true)),
        ..ServerCapabilities::default()
    }
}

#[tower_lsp::async_trait]
impl LanguageServer for Backend {
    async fn initialize(&self, _: InitializeParams) -> Result<InitializeResult> {
        Ok(InitializeResult {
            capabilities: capabilities(),
            server_info: Some(ServerInfo {
                name: "wsel".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        })
    }

    async fn initialized(&self, _: InitializedParams) {
        self.client
            .log_message(MessageType::INFO, "wsel language server ready")
            .await;
    }

    async fn shutdown(&self) -> Result<()> {
        Ok(())
    }

    async fn did_open(&self, params: DidOpenTextDocumentParams) {
        let uri = params.text_document.uri;
        {
            let mut state = self.lock();
            let path = state.paths.uri_to_path(&uri);
            state.docs.insert(
                uri.clone(),
                Document {
                    path,
                    text: params.text_document.text,
                    version: params.text_document.version,
                },
            );
            state.load(&uri);
        }
        self.refresh_diagnostics(Some(uri)).await;
    }

    async fn did_change(&self, params: DidChangeTextDocumentParams) {
        let uri = params.text_document.uri;
        {
            let mut state = self.lock();
            let Some(doc) = state.docs.get_mut(&uri) else {
                return;
            };
            for change in params.content_changes {
                apply_change(&mut doc.text, change.range, &change.text);
            }
            doc.version = params.text_document.version;
            state.load(&uri);
        }
        self.refresh_diagnostics(Some(uri)).await;
    }

    async fn did_save(&self, params: DidSaveTextDocumentParams) {
        let uri = params.text_document.uri;
        self.lock().load(&uri);
        self.refresh_diagnostics(Some(uri)).await;
    }

    async fn did_close(&self, params: DidCloseTextDocumentParams) {
        let uri = params.text_document.uri;
        {
            let mut state = self.lock();
            state.docs.remove(&uri);
            state.published.remove(&uri);
        }
        self.client.publish_diagnostics(uri, Vec::new(), None).await;
    }

    async fn hover(&self, params: HoverParams) -> Result<Option<Hover>> {
        let uri = params.text_document_position_params.text_document.uri;
        let position = params.text_document_position_params.position;
        let answer = self
            .analyze(&uri, move |ctx, _| {
                let index = LineIndex::new(ctx.text);
                let info = hover::hover(ctx, index.offset(position))?;
                Some(Hover {
                    contents: HoverContents::Markup(MarkupContent {
                        kind: MarkupKind::Markdown,
                        value: info.markdown,
                    }),
                    range: Some(index.range(&info.span)),
                })
            })
            .await?;
        Ok(answer.flatten())
    }

    async fn goto_definition(
        &self,
        params: GotoDefinitionParams,
    ) -> Result<Option<GotoDefinitionResponse>> {
        let uri = params.text_document_position_params.text_document.uri;
        let position = params.text_document_position_params.position;
        let answer = self
            .analyze(&uri, move |ctx, converter| {
                let offset = LineIndex::new(ctx.text).offset(position);
                let target = definition::definition(ctx, offset)?;
                let location = converter.location(ctx.db, &target)?;
                Some(GotoDefinitionResponse::Scalar(location))
            })
            .await?;
        Ok(answer.flatten())
    }

    async fn references(&self, params: ReferenceParams) -> Result<Option<Vec<Location>>> {
        let uri = params.text_document_position.text_document.uri;
        let position = params.text_document_position.position;
        let include = params.context.include_declaration;
        let answer = self
            .analyze(&uri, move |ctx, converter| {
                let offset = LineIndex::new(ctx.text).offset(position);
                definition::references(ctx, offset, include)
                    .iter()
                    .filter_map(|l| converter.location(ctx.db, l))
                    .collect::<Vec<_>>()
            })
            .await?;
        Ok(answer)
    }

    async fn completion(&self, params: CompletionParams) -> Result<Option<CompletionResponse>> {
        let uri = params.text_document_position.text_document.uri;
        let position = params.text_document_position.position;
        let answer = self
            .analyze(&uri, move |ctx, _| {
                let offset = LineIndex::new(ctx.text).offset(position);
                let items: Vec<CompletionItem> = completion::completions(ctx, offset)
                    .into_iter()
                    .map(|c| CompletionItem {
                        label: c.label,
                        kind: Some(completion_kind(c.kind)),
                        detail: c.detail,
                        ..CompletionItem::default()
                    })
                    .collect();
                CompletionResponse::Array(items)
            })
            .await?;
        Ok(answer)
    }

    async fn document_symbol(
        &self,
        params: DocumentSymbolParams,
    ) -> Result<Option<DocumentSymbolResponse>> {
        let answer = self
            .analyze(&params.text_document.uri, |ctx, _| {
                let index = LineIndex::new(ctx.text);
                let symbols = symbols::document_symbols(ctx.text, &ctx.defs);
                DocumentSymbolResponse::Nested(
                    symbols.iter().map(|s| to_symbol(&index, s)).collect(),
                )
            })
            .await?;
        Ok(answer)
    }

    async fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Result<Option<SemanticTokensResult>> {
        let answer = self
            .analyze(&params.text_document.uri, |ctx, _| {
                let index = LineIndex::new(ctx.text);
                let tokens = semantic_tokens::classify(ctx);
                SemanticTokensResult::Tokens(SemanticTokens {
                    result_id: None,
                    data: semantic_tokens::encode(&tokens, &index, ctx.text),
                })
            })
            .await?;
        Ok(answer)
    }

    async fn inlay_hint(&self, params: InlayHintParams) -> Result<Option<Vec<InlayHint>>> {
        let range = params.range;
        let answer = self
            .analyze(&params.text_document.uri, move |ctx, _| {
                let index = LineIndex::new(ctx.text);
                let span = index.offset(range.start)..index.offset(range.end);
                inlay_hints::inlay_hints(ctx, span)
                    .into_iter()
                    .map(|h| InlayHint {
                        position: index.position(h.offset),
                        label: InlayHintLabel::String(h.label),
                        kind: Some(InlayHintKind::TYPE),
                        text_edits: None,
                        tooltip: None,
                        padding_left: None,
                        padding_right: None,
                        data: None,
                    })
                    .collect::<Vec<_>>()
            })
            .await?;
        Ok(answer)
    }

    async fn formatting(&self, params: DocumentFormattingParams) -> Result<Option<Vec<TextEdit>>> {
        let text = {
            let state = self.lock();
            match state.docs.get(&params.text_document.uri) {
                Some(doc) => doc.text.clone(),
                None => return Ok(None),
            }
        };
        match formatting::format_document(&text) {
            Ok(None) => Ok(Some(Vec::new())),
            Ok(Some(formatted)) => {
                let index = LineIndex::new(&text);
                Ok(Some(vec![TextEdit {
                    range: index.range(&(0..text.len())),
                    new_text: formatted,
                }]))
            }
            Err(error) => {
                self.client.log_message(MessageType::WARNING, error).await;
                Ok(None)
            }
        }
    }
}

fn completion_kind(kind: completion::CompletionKind) -> CompletionItemKind {
    use completion::CompletionKind as K;
    match kind {
        K::Keyword => CompletionItemKind::KEYWORD,
        K::Module => CompletionItemKind::MODULE,
        K::Kernel | K::Layer | K::Model | K::Function => CompletionItemKind::FUNCTION,
        K::Constant => CompletionItemKind::CONSTANT,
        K::Variable => CompletionItemKind::VARIABLE,
        K::Port | K::Field => CompletionItemKind::FIELD,
        K::Task => CompletionItemKind::METHOD,
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must still be given.
fn to_symbol(index: &LineIndex<'_>, s: &symbols::Symbol) -> DocumentSymbol {
    use crate::defs::DefKind as D;
    let kind = match s.kind {
        D::Kernel | D::Layer | D::Model | D::Run => SymbolKind::FUNCTION,
        D::Task => SymbolKind::METHOD,
        D::Const | D::LocalConst => SymbolKind::CONSTANT,
        D::InPort | D::OutPort => SymbolKind::FIELD,
        D::DimVar | D::RegionSize => SymbolKind::TYPE_PARAMETER,
        D::KernelParam => SymbolKind::VARIABLE,
        _ => SymbolKind::VARIABLE,
    };
    DocumentSymbol {
        name: s.name.clone(),
        detail: s.detail.clone(),
        kind,
        tags: None,
        deprecated: None,
        range: index.range(&s.span),
        selection_range: index.range(&s.selection),
        children: (!s.children.is_empty())
            .then(|| s.children.iter().map(|c| to_symbol(index, c)).collect()),
    }
}
