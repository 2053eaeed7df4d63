//! `wsel-fuzz`: runs the fuzz targets for a fixed time each and prints, per target, the
//! inputs tried and the failures found (their reproducers are saved under
//! `fuzz/reproducers/`). Exit status 1 when anything failed. See FUZZING.md.

mod corpus;
mod harness;
mod lsp;
mod mutate;
mod targets;

use std::process::ExitCode;

use clap::Parser;

/// Fuzz wsel's inputs: sources, target files, .npy files, build artifacts, the language
/// server's edit stream.
#[derive(Parser)]
#[command(name = "wsel-fuzz")]
struct Args {
    /// Seconds per target.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// The targets to run (all by default): source, toml, npy, artifact, lsp.
    #[arg(long = "target")]
    targets: Vec<String>,
    /// The random seed (the same seed and time give the same first inputs).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

const TARGETS: [&str; 5] = ["source", "toml", "npy", "artifact", "lsp"];

fn main() -> ExitCode {
    let args = Args::parse();
    let chosen: Vec<&str> = if args.targets.is_empty() {
        TARGETS.to_vec()
    } else {
        args.targets.iter().map(String::as_str).collect()
    };
    let mut failed = false;
    for name in chosen {
        let mut rng = mutate::Rng::new(args.seed);
        let tally = match name {
            "source" => targets::source(&mut rng, args.seconds),
            "toml" => targets::toml(&mut rng, args.seconds),
            "npy" => targets::npy(&mut rng, args.seconds),
            "artifact" => targets::artifact(&mut rng, args.seconds),
            "lsp" => lsp::lsp(&mut rng, args.seconds),
            other => {
                eprintln!(
                    "unknown target `{other}`: use one of {}",
                    TARGETS.join(", ")
                );
                return ExitCode::from(2);
            }
        };
        println!(
            "{:<9} {:>10} inputs in {:.0} s, {} failures",
            tally.target,
            tally.inputs,
            args.seconds,
            tally.failures.len()
        );
        for path in &tally.failures {
            println!("  reproducer: {}", path.display());
        }
        failed |= !tally.failures.is_empty();
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
