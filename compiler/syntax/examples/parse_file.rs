//! Parses the `.wse` files given on the command line and prints their syntax errors.

fn main() {
    for path in std::env::args().skip(1) {
        let src = match std::fs::read_to_string(&path) {
            Ok(src) => src,
            Err(e) => {
                eprintln!("{path}: {e}");
                continue;
            }
        };
        let parsed = wsel_syntax::parse(&src);
        println!(
            "{path}: {} items, {} errors",
            parsed.module.items.len(),
            parsed.errors.len()
        );
        for e in &parsed.errors {
            println!("  {} {:?}: {} ({})", e.code, e.span, e.message, e.label);
        }
    }
}
