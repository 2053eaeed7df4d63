//! Benchmark of the code generators (filled in below).
fn main() {}
