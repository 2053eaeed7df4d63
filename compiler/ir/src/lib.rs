//! The backend-neutral intermediate representation of wsel: the layer graph (a model as
//! layer instances for the mapper), kernel IR (what per-PE code does)
//! and the cost rules every backend charges. Plain data, no salsa; backends are tested with
//! hand-built IR.

pub mod cost;
pub mod graph;
pub mod kernel;
pub mod print;
pub mod print_graph;
