//! The graph's nodes as std.nn layer calls, in the graph's order (ONNX nodes are sorted
//! topologically): `Gemm`, `MatMul` with the bias `Add` after it, `Relu`, `Softmax`, `Gelu`
//! (the tanh approximation), `LayerNormalization` over the features and the residual `Add`
//! of two values.

use std::collections::HashMap;

use crate::errors::{E1002, E1003, ImportError};
use crate::proto::{AttributeProto, GraphProto, NodeProto};
use crate::weights::{Constant, constants};

/// One layer call of the imported model.
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    /// The ONNX node (or nodes, for `MatMul` + `Add`) it comes from, for a comment.
    pub nodes: String,
    pub op: Op,
    /// Its arguments, in order: `None` is the model input, `Some(i)` the result of layer `i`.
    pub inputs: Vec<Option<usize>>,
    /// Features of its result.
    pub width: u64,
}

/// What a layer does.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// `dense(x, w, b)` with `w: [in, out]`, `b: [out]`.
    Dense {
        w: Constant,
        b: Constant,
    },
    Relu,
    Softmax,
    /// `gelu(x)`, the tanh approximation.
    Gelu,
    /// `layernorm(x, g, b, eps)` over the features.
    LayerNorm {
        g: Constant,
        b: Constant,
        eps: f32,
    },
    /// `add(a, b)` of two values of the same width.
    Add,
}

/// The model: its input's name and width, and its layers (the last gives the result).
#[derive(Debug, Clone, PartialEq)]
pub struct Layers {
    pub input: String,
    pub input_width: u64,
    pub layers: Vec<Layer>,
}

/// Translates the graph's nodes into layers.
pub fn translate(graph: &GraphProto) -> Result<Layers, ImportError> {
    let constants = constants(&graph.initializer)?;
    let (input, input_width) = model_input(graph, &constants)?;
    let mut t = Translator {
        graph,
        constants,
        values: HashMap::from([(input.clone(), (None, input_width))]),
        layers: Vec::new(),
        fused: vec![false; graph.node.len()],
    };
    for (i, node) in graph.node.iter().enumerate() {
        if !t.fused[i] {
            t.node(node)?;
        }
    }
    let [output] = graph.output.as_slice() else {
        return Err(shape_error(format!(
            "the graph has {} outputs; wsel models have one",
            graph.output.len()
        )));
    };
    match t.values.get(output.name()) {
        Some((Some(last), _)) if *last + 1 == t.layers.len() => Ok(Layers {
            input,
            input_width,
            layers: t.layers,
        }),
        _ => Err(shape_error(format!(
            "the graph's output `{}` is not the result of its last node",
            output.name()
        ))),
    }
}

struct Translator<'g> {
    graph: &'g GraphProto,
    constants: HashMap<String, Constant>,
    /// Every value computed so far: the layer giving it (`None`: the model input) and its
    /// features.
    values: HashMap<String, (Option<usize>, u64)>,
    layers: Vec<Layer>,
    /// Nodes already translated with an earlier one (the `Add` after a `MatMul`).
    fused: Vec<bool>,
}

impl Translator<'_> {
    fn node(&mut self, node: &NodeProto) -> Result<(), ImportError> {
        match node.op_type() {
            "Gemm" => self.gemm(node),
            "MatMul" => self.matmul(node),
            "Relu" => self.activation(node, Op::Relu),
            "Softmax" => {
                let axis = attribute(node, "axis").map_or(-1, |a| a.i());
                if axis != -1 && axis != 1 {
                    return Err(shape_error(format!(
                        "node {} takes the softmax over axis {axis}; std.nn's softmax is over the features (axis -1)",
                        node_name(node)
                    )));
                }
                self.activation(node, Op::Softmax)
            }
            "Gelu" => self.gelu(node),
            "LayerNormalization" => self.layernorm(node),
            "Add" if node.input.iter().all(|i| self.values.contains_key(i)) => self.add(node),
            "Add" => Err(unsupported(
                node,
                "adds a constant that follows no `MatMul`",
            )),
            op => Err(unsupported(node, &format!("is a `{op}`"))),
        }
    }

    fn gemm(&mut self, node: &NodeProto) -> Result<(), ImportError> {
        if attribute(node, "transA").is_some_and(|a| a.i() != 0) {
            return Err(shape_error(format!(
                "node {} transposes its input (`transA = 1`); std.nn's dense takes [batch, features]",
                node_name(node)
            )));
        }
        let (input, width) = self.value(node, 0)?;
        let mut w = self.constant(node, 1, 2)?;
        if attribute(node, "transB").is_some_and(|a| a.i() != 0) {
            w = w.transposed();
        }
        let w = w.scaled(attribute(node, "alpha").map_or(1.0, |a| a.f()));
        let out = self.check_rows(node, &w, width)?;
        let b = match node.input.get(2).filter(|n| !n.is_empty()) {
            Some(_) => self.bias(node, 2, out)?,
            None => zeros(out),
        };
        let b = b.scaled(attribute(node, "beta").map_or(1.0, |a| a.f()));
        self.push(
            node_name(node),
            Op::Dense { w, b },
            input,
            out,
            output(node)?,
        )
    }

    fn matmul(&mut self, node: &NodeProto) -> Result<(), ImportError> {
        let (input, width) = self.value(node, 0)?;
        let w = self.constant(node, 1, 2)?;
        let out = self.check_rows(node, &w, width)?;
        let result = output(node)?;
        if let Some((add, slot)) = self.bias_add(result) {
            let graph = self.graph;
            let bias_node = &graph.node[add];
            let b = self.bias(bias_node, slot, out)?;
            self.fused[add] = true;
            let names = format!("{} + {}", node_name(node), node_name(bias_node));
            return self.push(names, Op::Dense { w, b }, input, out, output(bias_node)?);
        }
        self.push(
            node_name(node),
            Op::Dense { w, b: zeros(out) },
            input,
            out,
            result,
        )
    }

    /// The `Add` of a constant right after a `MatMul` giving `result`, when it is the
    /// result's only use: the node's index and the constant's input slot.
    fn bias_add(&self, result: &str) -> Option<(usize, usize)> {
        let mut uses = (0..self.graph.node.len())
            .filter(|&j| self.graph.node[j].input.iter().any(|i| i == result));
        let (add, None) = (uses.next()?, uses.next()) else {
            return None;
        };
        let node = &self.graph.node[add];
        let slot = node.input.iter().position(|i| i != result)?;
        (node.op_type() == "Add" && self.constants.contains_key(&node.input[slot]))
            .then_some((add, slot))
    }

    fn activation(&mut self, node: &NodeProto, op: Op) -> Result<(), ImportError> {
        let (input, width) = self.value(node, 0)?;
        self.push(node_name(node), op, input, width, output(node)?)
    }

    /// ONNX's `Gelu` is the exact (erf) form unless `approximate = "tanh"`; std.nn's is the
    /// tanh approximation, so only that one is imported: the two differ by up to 5e-4.
    fn gelu(&mut self, node: &NodeProto) -> Result<(), ImportError> {
        let approximate = attribute(node, "approximate").map_or(&b"none"[..], |a| a.s());
        if approximate != b"tanh" {
            return Err(ImportError::new(
                E1002,
                format!(
                    "node {} is the exact (erf) `Gelu`, and std.nn's gelu is the tanh \
                     approximation (they differ by up to 5e-4): export the model with \
                     `approximate='tanh'`",
                    node_name(node)
                ),
            ));
        }
        self.activation(node, Op::Gelu)
    }

    fn layernorm(&mut self, node: &NodeProto) -> Result<(), ImportError> {
        let axis = attribute(node, "axis").map_or(-1, |a| a.i());
        if axis != -1 && axis != 1 {
            return Err(shape_error(format!(
                "node {} normalises over axis {axis}; std.nn's layernorm is over the features (axis -1)",
                node_name(node)
            )));
        }
        let (input, width) = self.value(node, 0)?;
        let g = self.bias(node, 1, width)?;
        let b = match node.input.get(2).filter(|n| !n.is_empty()) {
            Some(_) => self.bias(node, 2, width)?,
            None => zeros(width),
        };
        let eps = attribute(node, "epsilon").map_or(1e-5, |a| a.f());
        let op = Op::LayerNorm { g, b, eps };
        self.push(node_name(node), op, input, width, output(node)?)
    }

    /// The residual `Add` of two values computed before it, of the same width.
    fn add(&mut self, node: &NodeProto) -> Result<(), ImportError> {
        let [(a, width), (b, other)] = [self.value(node, 0)?, self.value(node, 1)?];
        if width != other || node.input.len() != 2 {
            return Err(shape_error(format!(
                "node {} adds {width} features to {other}; std.nn's add takes two values of one width",
                node_name(node)
            )));
        }
        self.layers.push(Layer {
            nodes: node_name(node),
            op: Op::Add,
            inputs: vec![a, b],
            width,
        });
        self.record(output(node)?, width);
        Ok(())
    }

    fn push(
        &mut self,
        nodes: String,
        op: Op,
        input: Option<usize>,
        width: u64,
        result: &str,
    ) -> Result<(), ImportError> {
        self.layers.push(Layer {
            nodes,
            op,
            inputs: vec![input],
            width,
        });
        self.record(result, width);
        Ok(())
    }

    /// `result` is the value of the last layer pushed.
    fn record(&mut self, result: &str, width: u64) {
        self.values
            .insert(result.to_string(), (Some(self.layers.len() - 1), width));
    }

    /// Input `slot` of `node`: a value computed before it.
    fn value(&self, node: &NodeProto, slot: usize) -> Result<(Option<usize>, u64), ImportError> {
        let name = node.input.get(slot).map_or("", String::as_str);
        self.values.get(name).copied().ok_or_else(|| {
            shape_error(format!(
                "input `{name}` of node {} is neither the model's input nor a result of an earlier node",
                node_name(node)
            ))
        })
    }

    /// Input `slot` of `node`: a constant of `rank` dimensions.
    fn constant(
        &self,
        node: &NodeProto,
        slot: usize,
        rank: usize,
    ) -> Result<Constant, ImportError> {
        let name = node.input.get(slot).map_or("", String::as_str);
        match self.constants.get(name) {
            Some(c) if c.shape.len() == rank => Ok(c.clone()),
            Some(c) => Err(shape_error(format!(
                "the weight `{name}` of node {} has shape {:?}; {rank} dimensions are needed",
                node_name(node),
                c.shape
            ))),
            None => Err(shape_error(format!(
                "input `{name}` of node {} is not a constant of the model; std.nn's dense needs its weights as constants",
                node_name(node)
            ))),
        }
    }

    /// Input `slot` of `node` as a vector of `width` features (`[width]` or `[1, width]`): a
    /// bias, or a layer normalisation's scale or shift.
    fn bias(&self, node: &NodeProto, slot: usize, width: u64) -> Result<Constant, ImportError> {
        let name = node.input.get(slot).map_or("", String::as_str);
        match self.constants.get(name) {
            Some(c) if c.shape == [width] || c.shape == [1, width] => Ok(Constant {
                shape: vec![width],
                values: c.values.clone(),
            }),
            _ => Err(shape_error(format!(
                "input `{name}` of node {} is not a constant of {width} values",
                node_name(node)
            ))),
        }
    }

    /// The weight's rows must be the input's features; gives its columns.
    fn check_rows(&self, node: &NodeProto, w: &Constant, width: u64) -> Result<u64, ImportError> {
        if w.shape[0] != width {
            return Err(shape_error(format!(
                "node {} multiplies {width} features by a weight of shape {:?}",
                node_name(node),
                w.shape
            )));
        }
        Ok(w.shape[1])
    }
}

/// The graph's one input that is not a constant: its name and features.
fn model_input(
    graph: &GraphProto,
    constants: &HashMap<String, Constant>,
) -> Result<(String, u64), ImportError> {
    let inputs: Vec<_> = graph
        .input
        .iter()
        .filter(|i| !constants.contains_key(i.name()))
        .collect();
    let [input] = inputs.as_slice() else {
        return Err(shape_error(format!(
            "the graph has {} inputs; wsel imports models with one",
            inputs.len()
        )));
    };
    let tensor = input.r#type.as_ref().and_then(|t| match &t.value {
        Some(crate::proto::type_proto::Value::TensorType(tensor)) => Some(tensor),
        _ => None,
    });
    let dims: Vec<i64> = tensor
        .and_then(|t| t.shape.as_ref())
        .map(|s| s.dim.iter().map(dim_value).collect())
        .unwrap_or_default();
    let float = tensor.is_some_and(|t| t.elem_type() == 1);
    match dims.as_slice() {
        [_, features] if float && *features > 0 => Ok((input.name().to_string(), *features as u64)),
        _ => Err(shape_error(format!(
            "the input `{}` must be float32 of shape [batch, features] with a known number of features",
            input.name()
        ))),
    }
}

/// A dimension's size, or -1 when it is symbolic (`"batch"`) or missing.
fn dim_value(dim: &crate::proto::tensor_shape_proto::Dimension) -> i64 {
    use crate::proto::tensor_shape_proto::dimension::Value;
    match dim.value {
        Some(Value::DimValue(size)) => size,
        _ => -1,
    }
}

fn attribute<'n>(node: &'n NodeProto, name: &str) -> Option<&'n AttributeProto> {
    node.attribute.iter().find(|a| a.name() == name)
}

fn output(node: &NodeProto) -> Result<&str, ImportError> {
    node.output
        .first()
        .map(String::as_str)
        .ok_or_else(|| shape_error(format!("node {} has no output", node_name(node))))
}

/// How a message names a node: `` `fc1` ``, or by its output when it has no name.
fn node_name(node: &NodeProto) -> String {
    match (node.name(), node.output.first()) {
        ("", Some(out)) => format!("with output `{out}`"),
        (name, _) => format!("`{name}`"),
    }
}

fn zeros(width: u64) -> Constant {
    Constant {
        shape: vec![width],
        values: vec![0.0; width as usize],
    }
}

fn unsupported(node: &NodeProto, what: &str) -> ImportError {
    ImportError::new(
        E1002,
        format!(
            "node {} {what}, and std.nn has no layer for it yet (it has dense, relu, softmax, \
             gelu, layernorm and add)",
            node_name(node)
        ),
    )
}

fn shape_error(message: String) -> ImportError {
    ImportError::new(E1003, message)
}
