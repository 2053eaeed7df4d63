//! Document symbols: the outline of a file, items with their members (kernel parameters,
//! storage, ports and tasks; layer tensors; model inputs, parameters and lets).

use crate::defs::{Def, DefKind};

/// One entry of the outline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: DefKind,
    pub detail: Option<String>,
    /// The whole declaration.
    pub span: std::ops::Range<usize>,
    /// The name.
    pub selection: std::ops::Range<usize>,
    pub children: Vec<Symbol>,
}

/// The outline of a file from its declarations.
pub fn document_symbols(text: &str, defs: &[Def]) -> Vec<Symbol> {
    let symbol = |d: &Def| Symbol {
        name: match d.kind {
            DefKind::Run => format!("run {}", d.name),
            DefKind::Train => format!("train {}", d.name),
            _ => d.name.clone(),
        },
        kind: d.kind,
        detail: detail(text, d),
        span: d.decl_span.clone(),
        selection: d.name_span.clone(),
        children: Vec::new(),
    };
    let mut out: Vec<Symbol> = Vec::new();
    for (i, item) in defs.iter().enumerate() {
        if item.parent.is_some() {
            continue;
        }
        let mut s = symbol(item);
        s.children = defs
            .iter()
            .filter(|d| d.parent == Some(i) && in_outline(d.kind))
            .map(symbol)
            .collect();
        out.push(s);
    }
    out
}

fn in_outline(kind: DefKind) -> bool {
    !matches!(
        kind,
        DefKind::Let | DefKind::LocalVar | DefKind::LoopVar | DefKind::DimVar | DefKind::RegionSize
    )
}

/// The declaration after its name, on one line (`: [f32; n * m]`, `(x: f32[B, N], ...)`).
fn detail(text: &str, d: &Def) -> Option<String> {
    let after = text.get(d.name_span.end..d.decl_span.end)?;
    let cut = match d.kind {
        DefKind::Kernel
        | DefKind::Layer
        | DefKind::Model
        | DefKind::Run
        | DefKind::Train
        | DefKind::Task => after.find('{').unwrap_or(after.len()),
        _ => after.trim_end().trim_end_matches(';').len(),
    };
    let line = crate::context::one_line(&after[..cut]);
    let line = line.trim_start_matches(':').trim().to_string();
    (!line.is_empty()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outline_of_a_kernel_and_a_model() {
        let src = "kernel k(n: u32) { var a: [f32; n]; in xs: stream<f32> from west; task main() { let s = 1; } }
model m(x: f32[B, 4]) -> f32[B, 4] { let h = x; return h; }
run m { output = \"o.npy\"; }";
        let module = wsel_syntax::parse(src).module;
        let defs = crate::defs::file_defs(&module, &[]);
        let symbols = document_symbols(src, &defs);
        let names: Vec<(String, Vec<String>)> = symbols
            .iter()
            .map(|s| {
                (
                    s.name.clone(),
                    s.children.iter().map(|c| c.name.clone()).collect(),
                )
            })
            .collect();
        assert_eq!(
            names,
            vec![
                (
                    "k".to_string(),
                    vec!["n".into(), "a".into(), "xs".into(), "main".into()]
                ),
                ("m".to_string(), vec!["x".into(), "h".into()]),
                ("run m".to_string(), vec![]),
            ]
        );
        assert_eq!(symbols[0].children[1].detail.as_deref(), Some("[f32; n]"));
        assert_eq!(symbols[0].detail.as_deref(), Some("(n: u32)"));
    }
}
