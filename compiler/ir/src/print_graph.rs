//! A readable text form of the layer graph, for `--emit graph` and for snapshot tests: the
//! model's inputs and parameters, then every layer instance with its shapes, cost and
//! implementations, compile-time expressions printed as in the source (`N / R`).

use std::fmt::Write;

use crate::graph::{
    BindTarget, Bus, CBinOp, CExpr, CValue, LayerGraph, LayerImpl, Mode, RegionSide, Side,
    SplitAxis, TensorRef,
};
use crate::kernel::{PortDirection, ScalarTy};

/// Prints `graph` in the readable form.
pub fn print_graph(graph: &LayerGraph) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "model {} (batch {})", graph.model, graph.batch);
    for input in &graph.inputs {
        let _ = writeln!(
            out,
            "    input {}: {}",
            input.name,
            tensor_text(input.elem, &input.shape)
        );
    }
    for param in &graph.params {
        let _ = writeln!(
            out,
            "    param {}: {} from \"{}\"",
            param.tensor.name,
            tensor_text(param.tensor.elem, &param.tensor.shape),
            param.path.display()
        );
    }
    for layer in &graph.layers {
        let args: Vec<String> = layer
            .args
            .iter()
            .map(|a| tensor_name(graph, *a))
            .chain(
                layer
                    .scalars
                    .iter()
                    .map(|(name, value)| format!("{name} = {}", cvalue_text(*value))),
            )
            .collect();
        let _ = writeln!(
            out,
            "    {} = {}({}) -> {}: {}",
            layer.name,
            layer.layer,
            args.join(", "),
            layer.output_name,
            tensor_text(layer.output_elem, &layer.output_shape)
        );
        let dims: Vec<String> = layer
            .dims
            .iter()
            .map(|(name, value)| format!("{name} = {value}"))
            .collect();
        let _ = writeln!(out, "        dims {}", dims.join(", "));
        let _ = writeln!(
            out,
            "        cost flops {}, weights {} B, activations {} B",
            layer.cost.flops, layer.cost.weight_bytes, layer.cost.activation_bytes
        );
        for imp in &layer.impls {
            print_impl(imp, &mut out);
        }
    }
    let _ = writeln!(out, "    return {}", tensor_name(graph, graph.output));
    out
}

/// A compile-time expression as it would be written in the source, with the parentheses its
/// structure needs.
pub fn cexpr_text(expr: &CExpr) -> String {
    let mut out = String::new();
    write_cexpr(expr, 0, &mut out);
    out
}

fn print_impl(imp: &LayerImpl, out: &mut String) {
    let modes: Vec<&str> = imp
        .modes
        .iter()
        .map(|m| match m {
            Mode::Pipelined => "pipelined",
            Mode::Streaming => "streaming",
        })
        .collect();
    let mut head = format!(
        "        {} on [{}, {}]",
        modes.join(", "),
        side_text(&imp.rows),
        side_text(&imp.cols)
    );
    if !imp.conditions.is_empty() {
        let conditions: Vec<String> = imp.conditions.iter().map(cexpr_text).collect();
        let _ = write!(head, " where {}", conditions.join(", "));
    }
    let _ = writeln!(out, "{head}");
    let args: Vec<String> = imp
        .kernel_args
        .iter()
        .map(|(name, value)| format!("{name} = {}", cexpr_text(value)))
        .collect();
    let _ = writeln!(
        out,
        "            run {}({}) from \"{}\"",
        imp.kernel.name,
        args.join(", "),
        imp.kernel.file.display()
    );
    let _ = writeln!(
        out,
        "            sram words {}",
        cexpr_text(&imp.sram_words)
    );
    for port in &imp.ports {
        let (dir, prep) = match port.direction {
            PortDirection::In => ("in", "from"),
            PortDirection::Out => ("out", "to"),
        };
        let multicast = if port.multicast { " multicast" } else { "" };
        let side = port.bus.map_or(side_name(port.side), Bus::name);
        let _ = writeln!(
            out,
            "            {dir} {}: stream<{}> {prep} {side}{multicast}",
            port.name,
            port.elem.name(),
        );
    }
    for bind in &imp.binds {
        let target = match bind.target {
            BindTarget::Array => "array",
            BindTarget::Port => "port",
        };
        let mut line = format!(
            "            bind {} to {target} {}",
            bind.tensor, bind.target_name
        );
        if !bind.split.is_empty() {
            let axes: Vec<&str> = bind
                .split
                .iter()
                .map(|a| match a {
                    SplitAxis::Rows => "rows",
                    SplitAxis::Cols => "cols",
                    SplitAxis::Whole => "_",
                })
                .collect();
            let _ = write!(line, " split [{}]", axes.join(", "));
        }
        if !bind.tiles.is_empty() {
            let counts: Vec<String> = bind.tiles.iter().map(cexpr_text).collect();
            let _ = write!(line, " tiles [{}]", counts.join(", "));
        }
        let _ = writeln!(out, "{line}");
    }
}

fn tensor_name(graph: &LayerGraph, tensor: TensorRef) -> String {
    let name = match tensor {
        TensorRef::Input(i) => graph.inputs.get(i).map(|t| t.name.as_str()),
        TensorRef::Param(i) => graph.params.get(i).map(|p| p.tensor.name.as_str()),
        TensorRef::Layer(i) => graph.layers.get(i).map(|l| l.name.as_str()),
    };
    name.unwrap_or("?").to_string()
}

fn cvalue_text(value: CValue) -> String {
    match value {
        CValue::Int(v) => v.to_string(),
        CValue::Float(v) => format!("{v:?}"),
        CValue::Bool(v) => v.to_string(),
    }
}

fn tensor_text(elem: ScalarTy, shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("{}[{}]", elem.name(), dims.join(", "))
}

fn side_text(side: &RegionSide) -> String {
    match side {
        RegionSide::Free(name) => name.clone(),
        RegionSide::Fixed(expr) => cexpr_text(expr),
    }
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::North => "north",
        Side::South => "south",
        Side::East => "east",
        Side::West => "west",
    }
}

/// Binding strength: `||` 1, `&&` 2, comparisons 3, `+ -` 4, `* / %` 5, prefix 6.
fn precedence(op: CBinOp) -> u8 {
    match op {
        CBinOp::Or => 1,
        CBinOp::And => 2,
        CBinOp::Eq | CBinOp::Ne | CBinOp::Lt | CBinOp::Le | CBinOp::Gt | CBinOp::Ge => 3,
        CBinOp::Add | CBinOp::Sub => 4,
        CBinOp::Mul | CBinOp::Div | CBinOp::Rem => 5,
    }
}

fn op_text(op: CBinOp) -> &'static str {
    match op {
        CBinOp::Add => "+",
        CBinOp::Sub => "-",
        CBinOp::Mul => "*",
        CBinOp::Div => "/",
        CBinOp::Rem => "%",
        CBinOp::Eq => "==",
        CBinOp::Ne => "!=",
        CBinOp::Lt => "<",
        CBinOp::Le => "<=",
        CBinOp::Gt => ">",
        CBinOp::Ge => ">=",
        CBinOp::And => "&&",
        CBinOp::Or => "||",
    }
}

/// Writes `expr`, parenthesised if it binds less tightly than `context`.
fn write_cexpr(expr: &CExpr, context: u8, out: &mut String) {
    match expr {
        CExpr::Int(v) => {
            let _ = write!(out, "{v}");
        }
        CExpr::Float(v) => {
            let _ = write!(out, "{v:?}");
        }
        CExpr::Bool(v) => {
            let _ = write!(out, "{v}");
        }
        CExpr::Var(name) => out.push_str(name),
        CExpr::Neg(e) | CExpr::Not(e) => {
            out.push(if matches!(expr, CExpr::Neg(_)) {
                '-'
            } else {
                '!'
            });
            write_cexpr(e, 6, out);
        }
        CExpr::Min(a, b) | CExpr::Max(a, b) => {
            out.push_str(if matches!(expr, CExpr::Min(..)) {
                "min("
            } else {
                "max("
            });
            write_cexpr(a, 0, out);
            out.push_str(", ");
            write_cexpr(b, 0, out);
            out.push(')');
        }
        CExpr::Select(c, a, b) => {
            out.push_str("select(");
            for (i, e) in [c, a, b].into_iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_cexpr(e, 0, out);
            }
            out.push(')');
        }
        CExpr::Binary(op, a, b) => {
            let prec = precedence(*op);
            let paren = prec < context;
            if paren {
                out.push('(');
            }
            write_cexpr(a, prec, out);
            let _ = write!(out, " {} ", op_text(*op));
            // Operators are left-associative: a right operand of equal strength needs
            // parentheses.
            write_cexpr(b, prec + 1, out);
            if paren {
                out.push(')');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str) -> CExpr {
        CExpr::Var(name.into())
    }

    fn bin(op: CBinOp, a: CExpr, b: CExpr) -> CExpr {
        CExpr::Binary(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn prints_with_the_parentheses_the_structure_needs() {
        let n_r = bin(CBinOp::Div, var("N"), var("R"));
        let m_c = bin(CBinOp::Div, var("M"), var("C"));
        assert_eq!(
            cexpr_text(&bin(CBinOp::Mul, n_r.clone(), m_c.clone())),
            "N / R * (M / C)"
        );
        let sum = bin(CBinOp::Add, var("N"), var("M"));
        assert_eq!(
            cexpr_text(&bin(CBinOp::Mul, CExpr::Int(4), sum)),
            "4 * (N + M)"
        );
        let cond = bin(
            CBinOp::And,
            bin(
                CBinOp::Eq,
                bin(CBinOp::Rem, var("N"), var("R")),
                CExpr::Int(0),
            ),
            CExpr::Not(Box::new(CExpr::Bool(false))),
        );
        assert_eq!(cexpr_text(&cond), "N % R == 0 && !false");
        let sub = bin(CBinOp::Sub, var("a"), bin(CBinOp::Sub, var("b"), var("c")));
        assert_eq!(cexpr_text(&sub), "a - (b - c)");
        let neg = CExpr::Neg(Box::new(bin(CBinOp::Add, var("a"), CExpr::Int(1))));
        assert_eq!(cexpr_text(&neg), "-(a + 1)");
        let m = CExpr::Min(Box::new(n_r), Box::new(CExpr::Float(0.5)));
        assert_eq!(cexpr_text(&m), "min(N / R, 0.5)");
    }
}
