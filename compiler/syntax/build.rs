//! Generates the LALRPOP parser from `src/grammar.lalrpop` into `OUT_DIR`.

fn main() {
    lalrpop::Configuration::new()
        .set_in_dir("./src")
        .emit_rerun_directives(true)
        .process()
        .expect("the LALRPOP grammar has errors or conflicts");
}
