//! The `wsel` command line.
fn main() {}
