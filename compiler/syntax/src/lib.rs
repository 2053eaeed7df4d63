//! The .wse syntax: lexer, grammar and AST. No salsa, no IO.
pub mod ast;
pub mod lexer;
