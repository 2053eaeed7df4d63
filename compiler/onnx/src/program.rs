//! The imported model as `.wse` text — one `param` per weight, one `let` per layer, each with
//! a comment naming its ONNX node — and the weight tensors for the `.npy` files.

use std::collections::HashMap;
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
    let input_name = match identifier(&layers.input, "x") {
        // Not a layer result's name (`h1`, ...).
        name if name.starts_with('h') && name[1..].chars().all(|c| c.is_ascii_digit()) => {
            format!("{name}_in")
        }
        name => name,
    };
    let mut out = Writer {
        weights_dir: names.weights_dir,
        params: String::new(),
        weights: Vec::new(),
        used: Vec::new(),
        counts: HashMap::new(),
    };
    let mut body = String::new();
    for (i, layer) in layers.layers.iter().enumerate() {
        let args: Vec<String> = layer
            .inputs
            .iter()
            .map(|input| input.map_or_else(|| input_name.clone(), |l| format!("h{}", l + 1)))
            .collect();
        let call = out.call(&layer.op, &args);
        let _ = writeln!(body, "    let h{} = {call}; // {}", i + 1, layer.nodes);
    }
    let width = layers.layers.last().map_or(layers.input_width, |l| l.width);
    let program = format!(
        "// Imported from ONNX by `wsel import`: one std.nn layer call per node (a `MatMul`\n\
         // and the `Add` of its bias are one `dense`). The weights are in `{dir}/`.\n\n\
         import std.nn.{{{imports}}};\n\n\
         model {model}({input}: f32[B, {in_width}]) -> f32[B, {width}] {{\n\
         {params}{body}    return h{last};\n}}\n",
        dir = names.weights_dir,
        imports = out.used.join(", "),
        input = input_name,
        params = out.params,
        in_width = layers.input_width,
        last = layers.layers.len(),
    );
    Imported {
        program,
        weights: out.weights,
    }
}

/// What the layer calls written so far need: `param` lines, weight tensors, std.nn imports.
struct Writer<'a> {
    weights_dir: &'a str,
    params: String,
    weights: Vec<(String, Tensor)>,
    /// std.nn's layers called, in order of first use.
    used: Vec<&'static str>,
    /// Calls so far per layer with weights, for the weights' names (`w1`, `ln1_g`, ...).
    counts: HashMap<&'static str, usize>,
}

impl Writer<'_> {
    /// The call of `op` on `args`, declaring its weights.
    fn call(&mut self, op: &Op, args: &[String]) -> String {
        let args = args.join(", ");
        match op {
            Op::Dense { w, b } => {
                let n = self.count("dense");
                let [w, b] = [
                    self.param(format!("w{n}"), w),
                    self.param(format!("b{n}"), b),
                ];
                format!("dense({args}, {w}, {b})")
            }
            Op::Relu => self.simple("relu", &args),
            Op::Softmax => self.simple("softmax", &args),
            Op::Gelu => self.simple("gelu", &args),
            Op::Add => self.simple("add", &args),
            Op::LayerNorm { g, b, eps } => {
                let n = self.count("layernorm");
                let g = self.param(format!("ln{n}_g"), g);
                let b = self.param(format!("ln{n}_b"), b);
                format!("layernorm({args}, {g}, {b}, eps = {eps:?})")
            }
        }
    }

    fn simple(&mut self, layer: &'static str, args: &str) -> String {
        self.used(layer);
        format!("{layer}({args})")
    }

    /// Counts a call of `layer` (and notes its import); gives its number from 1.
    fn count(&mut self, layer: &'static str) -> usize {
        self.used(layer);
        let n = self.counts.entry(layer).or_default();
        *n += 1;
        *n
    }

    fn used(&mut self, layer: &'static str) {
        if !self.used.contains(&layer) {
            self.used.push(layer);
        }
    }

    /// Declares the weight `name` read from its `.npy` file; gives its name.
    fn param(&mut self, name: String, constant: &Constant) -> String {
        let _ = writeln!(
            self.params,
            "    param {name}: f32{:?} from \"{}/{name}.npy\";",
            constant.shape, self.weights_dir
        );
        self.weights.push((format!("{name}.npy"), tensor(constant)));
        name
    }
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
