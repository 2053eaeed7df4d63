//! Benchmark placeholder; being written.
fn main() {}
