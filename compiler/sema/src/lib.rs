//! Semantic analysis of .wse programs: the salsa database, name resolution, type checking and
//! diagnostics.

pub mod diagnostic;
