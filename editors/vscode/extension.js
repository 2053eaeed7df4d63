// The wsel extension: starts `wsel lsp` for .wse files through the generic LSP client.
// Everything else (diagnostics, hover, definition, references, completion, symbols, semantic
// tokens, inlay hints, formatting) comes from the server.
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration('wsel').get('path') || 'wsel';
  const serverOptions = { command, args: ['lsp'] };
  const clientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'wse' },
      { scheme: 'untitled', language: 'wse' },
    ],
  };
  client = new LanguageClient('wsel', 'wsel language server', serverOptions, clientOptions);
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
