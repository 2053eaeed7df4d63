//! `wsel import`: an ONNX model as a `.wse` program over std.nn's layers, with its weights as
//! `.npy` files beside it (`crate::onnx_import`).

use crate::cli::ImportArgs;
use crate::pipeline::report_build_failure;
use crate::status::Status;

pub fn run(args: &ImportArgs) -> Status {
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.model.with_extension("wse"));
    match crate::onnx_import::import_file(&args.model, &output) {
        Ok(written) => {
            println!(
                "wrote {} and {} weight files in {}",
                written.program.display(),
                written.weights,
                written.weights_dir.display()
            );
            Status::Success
        }
        Err(error) => {
            // The program's sources play no part: every error is a coded line.
            report_build_failure(Some(&crate::render::SourceTexts::new()), error, false)
        }
    }
}
