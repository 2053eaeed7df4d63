//! Language-server latency benchmark (filled in by the next commit).

fn main() {}
