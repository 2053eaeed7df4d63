//! The imported model as `.wse` text — one `param` per weight, one `let` per layer, each with
//! a comment naming its ONNX node — and the weight tensors for the `.npy` files.

use std::fmt::Write;

use wsel_data::Tensor;
use wsel_ir::kernel::ScalarTy;

use crate::Names;
use crate::proto::GraphProto;
use crate::translate::{Layers, Op};
use crate::weights::Constant;

/// An imported model: its program, and every weight with the file name (in the weights
/// folder) its `param` reads.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    pub program: String,
    pub weights: Vec<(String, Tensor)>,
}

/// Writes the program for `layers` and collects the weights.
pub fn write(graph: &GraphProto, layers: &Layers, names: &Names<'_>) -> Imported {
    let model = identifier(graph.name(), names.model);
    let input = match identifier(&layers.input, "x") {
        // Not a layer result's name (`h1`, ...).
        name if name.starts_with('h') && name[1..].chars().all(|c| c.is_ascii_digit()) => {
            format!("{name}_in")
        }
        name => name,
    };
    let mut params = String::new();
    let mut body = String::new();
    let mut weights = Vec::new();
    let mut dense = 0;
    let mut used = [false; 3];
    for (i, layer) in layers.layers.iter().enumerate() {
        let arg = layer
            .input
            .map_or_else(|| input.clone(), |l| format!("h{}", l + 1));
        let call = match &layer.op {
            Op::Dense { w, b } => {
                dense += 1;
                used[0] = true;
                for (name, constant) in [(format!("w{dense}"), w), (format!("b{dense}"), b)] {
                    let _ = writeln!(
                        params,
                        "    param {name}: f32{:?} from \"{}/{name}.npy\";",
                        constant.shape, names.weights_dir
                    );
                    weights.push((format!("{name}.npy"), tensor(constant)));
                }
                format!("dense({arg}, w{dense}, b{dense})")
            }
            Op::Relu => {
                used[1] = true;
                format!("relu({arg})")
            }
            Op::Softmax => {
                used[2] = true;
                format!("softmax({arg})")
            }
        };
        let _ = writeln!(body, "    let h{} = {call}; // {}", i + 1, layer.nodes);
    }
    let width = layers.layers.last().map_or(layers.input_width, |l| l.width);
    let imports: Vec<&str> = ["dense", "relu", "softmax"]
        .into_iter()
        .zip(used)
        .filter_map(|(name, used)| used.then_some(name))
        .collect();
    let program = format!(
        "// Imported from ONNX by `wsel import`: one std.nn layer call per node (a `MatMul`\n\
         // and the `Add` of its bias are one `dense`). The weights are in `{dir}/`.\n\n\
         import std.nn.{{{imports}}};\n\n\
         model {model}({input}: f32[B, {in_width}]) -> f32[B, {width}] {{\n\
         {params}{body}    return h{last};\n}}\n",
        dir = names.weights_dir,
        imports = imports.join(", "),
        in_width = layers.input_width,
        last = layers.layers.len(),
    );
    Imported { program, weights }
}

fn tensor(constant: &Constant) -> Tensor {
    Tensor {
        elem: ScalarTy::F32,
        shape: constant.shape.clone(),
        words: constant.values.iter().map(|v| v.to_bits()).collect(),
    }
}

/// `name` as a `.wse` identifier (letters, digits and `_`, not starting with a digit, not a
/// keyword), or `fallback` when nothing of it is left.
fn identifier(name: &str, fallback: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let cleaned = cleaned.trim_matches('_');
    match cleaned.chars().next() {
        None => identifier(fallback, "model"),
        Some(c) if c.is_ascii_digit() => format!("m_{cleaned}"),
        Some(_) if wsel_syntax::KEYWORDS.contains(&cleaned) => format!("{cleaned}_"),
        Some(_) => cleaned.to_string(),
    }
}
