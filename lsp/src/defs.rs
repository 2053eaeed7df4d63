//! The declarations of one file as plain data: every name the file defines (items, kernel
//! parameters and members, task locals, layer tensors, dimension variables and region sizes,
//! model inputs, parameters and lets) with its kind, where its name is written, the span of
//! the whole declaration and the declaration that contains it. Hover, completion, document
//! symbols and semantic tokens read it; name *uses*, and which names declare dimension
//! variables and region sizes, come from `wsel_sema::check_file`.

use wsel_sema::analysis::{Declared, DeclaredKind};
use wsel_sema::syntax::written_span;
use wsel_syntax::ast::{self, Span};

/// What a declaration declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DefKind {
    Const,
    Kernel,
    Layer,
    Model,
    /// A `run` item (named after the model it runs).
    Run,
    /// A `train` item (named after the model it trains).
    Train,
    KernelParam,
    /// A kernel `var` member: an SRAM array or scalar.
    Storage,
    /// A `const` inside a kernel.
    LocalConst,
    InPort,
    OutPort,
    Task,
    /// A task-local `let`.
    Let,
    /// A task-local `var`.
    LocalVar,
    LoopVar,
    LayerInput,
    LayerParam,
    /// A scalar input of a layer (a compile-time setting given by name at calls).
    LayerScalar,
    LayerOutput,
    DimVar,
    RegionSize,
    ModelInput,
    ModelParam,
    ModelLet,
}

impl DefKind {
    /// How the kind is named in hovers and completion details.
    pub fn describe(self) -> &'static str {
        match self {
            DefKind::Const => "constant",
            DefKind::Kernel => "kernel",
            DefKind::Layer => "layer",
            DefKind::Model => "model",
            DefKind::Run => "run configuration",
            DefKind::Train => "training configuration",
            DefKind::KernelParam => "kernel parameter",
            DefKind::Storage => "SRAM variable",
            DefKind::LocalConst => "kernel constant",
            DefKind::InPort => "input port",
            DefKind::OutPort => "output port",
            DefKind::Task => "task",
            DefKind::Let => "local",
            DefKind::LocalVar => "local variable",
            DefKind::LoopVar => "loop variable",
            DefKind::LayerInput => "layer input",
            DefKind::LayerParam => "layer weight",
            DefKind::LayerScalar => "layer scalar input",
            DefKind::LayerOutput => "layer result",
            DefKind::DimVar => "dimension variable",
            DefKind::RegionSize => "region size",
            DefKind::ModelInput => "model input",
            DefKind::ModelParam => "model parameter",
            DefKind::ModelLet => "tensor",
        }
    }

    /// Whether the declaration is a top-level item.
    pub fn is_item(self) -> bool {
        matches!(
            self,
            DefKind::Const
                | DefKind::Kernel
                | DefKind::Layer
                | DefKind::Model
                | DefKind::Run
                | DefKind::Train
        )
    }
}

/// One declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Def {
    pub name: String,
    pub kind: DefKind,
    /// Where the name is written (what `NameUse::def` points at).
    pub name_span: Span,
    /// The whole declaration (`var w: [f32; n * m];`, a whole kernel, ...).
    pub decl_span: Span,
    /// The index of the containing declaration (a task for its locals, an item for its
    /// members), `None` for items.
    pub parent: Option<usize>,
    /// The doc comment of an item.
    pub doc: Option<String>,
}

/// Every declaration of `module`, parents before their children, in source order within a
/// parent. Which names in dimension and region positions declare dimension variables and
/// region sizes is the checker's decision (`declared`, from `wsel_sema::check_file`): the
/// syntax cannot tell them from uses of module constants, imported ones included.
pub fn file_defs(module: &ast::Module, declared: &[Declared]) -> Vec<Def> {
    let mut out = Collector {
        defs: Vec::new(),
        declared,
    };
    for item in &module.items {
        out.item(item);
    }
    out.defs
}

/// The declaration whose name is written exactly at `span`.
pub fn def_named_at<'d>(defs: &'d [Def], span: &Span) -> Option<&'d Def> {
    defs.iter().find(|d| &d.name_span == span)
}

/// The declaration whose name contains byte `offset` (the end of the name included, where
/// the cursor sits after typing it).
pub fn def_name_at(defs: &[Def], offset: usize) -> Option<&Def> {
    defs.iter().find(|d| {
        d.name_span.start <= offset
            && offset <= d.name_span.end
            && !matches!(d.kind, DefKind::Run | DefKind::Train)
    })
}

/// The innermost item whose declaration contains byte `offset`.
pub fn item_at(defs: &[Def], offset: usize) -> Option<(usize, &Def)> {
    defs.iter()
        .enumerate()
        .find(|(_, d)| d.kind.is_item() && d.decl_span.start <= offset && offset <= d.decl_span.end)
}

struct Collector<'a> {
    defs: Vec<Def>,
    declared: &'a [Declared],
}

impl Collector<'_> {
    fn is_declared(&self, span: &Span, kind: DeclaredKind) -> bool {
        self.declared
            .iter()
            .any(|d| &d.span == span && d.kind == kind)
    }

    fn push(
        &mut self,
        name: &ast::Ident,
        kind: DefKind,
        decl_span: &Span,
        parent: Option<usize>,
    ) -> usize {
        self.defs.push(Def {
            name: name.name.clone(),
            kind,
            name_span: name.span.clone(),
            decl_span: decl_span.clone(),
            parent,
            doc: None,
        });
        self.defs.len() - 1
    }

    fn item(&mut self, item: &ast::Item) {
        match item {
            ast::Item::Const(c) => {
                let i = self.push(&c.name, DefKind::Const, &c.span, None);
                self.defs[i].doc = c.doc.clone();
            }
            ast::Item::Kernel(k) => self.kernel(k),
            ast::Item::Layer(l) => self.layer(l),
            ast::Item::Model(m) => self.model(m),
            ast::Item::Run(r) => {
                self.push(&r.model, DefKind::Run, &r.span, None);
            }
            ast::Item::Train(t) => {
                self.push(&t.model, DefKind::Train, &t.span, None);
            }
            ast::Item::Import(_) | ast::Item::Error(_) => {}
        }
    }

    fn kernel(&mut self, k: &ast::Kernel) {
        let me = self.push(&k.name, DefKind::Kernel, &k.span, None);
        self.defs[me].doc = k.doc.clone();
        for p in &k.params {
            self.push(&p.name, DefKind::KernelParam, &p.span, Some(me));
        }
        for member in &k.members {
            match member {
                ast::KernelMember::Var(v) => {
                    self.push(&v.name, DefKind::Storage, &v.span, Some(me));
                }
                ast::KernelMember::Const(c) => {
                    self.push(&c.name, DefKind::LocalConst, &c.span, Some(me));
                }
                ast::KernelMember::Port(p) => {
                    let kind = match p.direction {
                        ast::PortDirection::In => DefKind::InPort,
                        ast::PortDirection::Out => DefKind::OutPort,
                    };
                    self.push(&p.name, kind, &p.span, Some(me));
                }
                ast::KernelMember::Task(t) => {
                    let task = self.push(&t.name, DefKind::Task, &t.span, Some(me));
                    self.block(&t.body, task);
                }
                ast::KernelMember::Error(_) => {}
            }
        }
    }

    fn block(&mut self, block: &ast::Block, task: usize) {
        for stmt in &block.stmts {
            match stmt {
                ast::Stmt::Let { name, span, .. } => {
                    self.push(name, DefKind::Let, span, Some(task));
                }
                ast::Stmt::Var(v) => {
                    self.push(&v.name, DefKind::LocalVar, &v.span, Some(task));
                }
                ast::Stmt::For {
                    var, body, span, ..
                } => {
                    self.push(var, DefKind::LoopVar, span, Some(task));
                    self.block(body, task);
                }
                ast::Stmt::While { body, .. } => self.block(body, task),
                ast::Stmt::If {
                    then_block,
                    else_block,
                    ..
                } => {
                    self.block(then_block, task);
                    if let Some(b) = else_block {
                        self.block(b, task);
                    }
                }
                _ => {}
            }
        }
    }

    fn layer(&mut self, l: &ast::Layer) {
        let me = self.push(&l.name, DefKind::Layer, &l.span, None);
        self.defs[me].doc = l.doc.clone();
        for p in &l.inputs {
            let kind = match (&p.ty, p.is_param) {
                (ast::Type::Scalar(..), _) => DefKind::LayerScalar,
                (_, true) => DefKind::LayerParam,
                (_, false) => DefKind::LayerInput,
            };
            self.push(&p.name, kind, &p.span, Some(me));
            self.dims(&p.ty, me);
        }
        let out_span = l.output.span.start..written_span(&l.output_ty).end;
        self.push(&l.output, DefKind::LayerOutput, &out_span, Some(me));
        self.dims(&l.output_ty, me);
        for imp in &l.impls {
            for size in [&imp.rows, &imp.cols] {
                if let ast::Expr::Name(id) = size
                    && self.is_declared(&id.span, DeclaredKind::RegionSize)
                {
                    self.push(id, DefKind::RegionSize, &imp.span, Some(me));
                }
            }
        }
    }

    fn model(&mut self, m: &ast::Model) {
        let me = self.push(&m.name, DefKind::Model, &m.span, None);
        self.defs[me].doc = m.doc.clone();
        for p in &m.inputs {
            self.push(&p.name, DefKind::ModelInput, &p.span, Some(me));
            self.dims(&p.ty, me);
        }
        self.dims(&m.output_ty, me);
        for stmt in &m.body {
            match stmt {
                ast::ModelStmt::Param { name, span, .. } => {
                    self.push(name, DefKind::ModelParam, span, Some(me));
                }
                ast::ModelStmt::Let { name, span, .. } => {
                    self.push(name, DefKind::ModelLet, span, Some(me));
                }
                ast::ModelStmt::Return { .. } | ast::ModelStmt::Error(_) => {}
            }
        }
    }

    /// The dimension variables `ty` declares.
    fn dims(&mut self, ty: &ast::Type, parent: usize) {
        let ast::Type::Tensor { dims, .. } = ty else {
            return;
        };
        for dim in dims {
            if let ast::Expr::Name(id) = dim
                && self.is_declared(&id.span, DeclaredKind::DimVar)
            {
                self.push(id, DefKind::DimVar, &id.span, Some(parent));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// The declarations of `main.wse` in a program of `files` (path, text; `main.wse` first),
    /// checked.
    fn program_defs(files: &[(&str, &str)]) -> Vec<Def> {
        let mut db = wsel_sema::Database::default();
        let mut read = |p: &Path| {
            files
                .iter()
                .find(|(path, _)| Path::new(path) == p)
                .map(|(_, text)| text.to_string())
                .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::NotFound, "no file"))
        };
        let file = wsel_sema::load_program(&mut db, Path::new(files[0].0), &mut read);
        let file = file.unwrap_or_else(|e| panic!("{e}"));
        let analysis = wsel_sema::check_file(&db, file);
        file_defs(wsel_sema::parse(&db, file), &analysis.declared)
    }

    fn checked_defs(src: &str) -> Vec<Def> {
        program_defs(&[("main.wse", src)])
    }

    #[test]
    fn an_imported_constant_in_a_dimension_or_region_declares_nothing() {
        let main = "import lib.{K};
layer l(x: f32[B, K]) -> y: f32[B, K] {
  cost { flops = K; weights = 0; activations = 0; }
  pipelined on [K, C] { run k(); } }";
        let defs = program_defs(&[("main.wse", main), ("lib.wse", "const K: u32 = 2;\n")]);
        let summary: Vec<(&str, DefKind)> =
            defs.iter().map(|d| (d.name.as_str(), d.kind)).collect();
        assert_eq!(
            summary,
            [
                ("l", DefKind::Layer),
                ("x", DefKind::LayerInput),
                ("B", DefKind::DimVar),
                ("y", DefKind::LayerOutput),
                ("C", DefKind::RegionSize),
            ]
        );
    }

    #[test]
    fn collects_every_kind_of_declaration() {
        let src = "const K: u32 = 2;
kernel k(n: u32) { var a: [f32; n]; const h: u32 = 1; in xs: stream<f32> from west;
  task main() { let s = 1; for i in 0..n { var t: u32 = 0; } } }
layer l(x: f32[B, N], param w: f32[N, K]) -> y: f32[B, K] {
  cost { flops = N; weights = N; activations = N; }
  pipelined on [R, 1] { run k(n = N); } }
model m(x: f32[B, 4]) -> f32[B, 2] { param w: f32[4, 2]; let h = l(x, w); return h; }";
        let defs = checked_defs(src);
        let summary: Vec<(String, DefKind)> =
            defs.iter().map(|d| (d.name.clone(), d.kind)).collect();
        let expected = [
            ("K", DefKind::Const),
            ("k", DefKind::Kernel),
            ("n", DefKind::KernelParam),
            ("a", DefKind::Storage),
            ("h", DefKind::LocalConst),
            ("xs", DefKind::InPort),
            ("main", DefKind::Task),
            ("s", DefKind::Let),
            ("i", DefKind::LoopVar),
            ("t", DefKind::LocalVar),
            ("l", DefKind::Layer),
            ("x", DefKind::LayerInput),
            ("B", DefKind::DimVar),
            ("N", DefKind::DimVar),
            ("w", DefKind::LayerParam),
            ("y", DefKind::LayerOutput),
            ("R", DefKind::RegionSize),
            ("m", DefKind::Model),
            ("x", DefKind::ModelInput),
            ("B", DefKind::DimVar),
            ("w", DefKind::ModelParam),
            ("h", DefKind::ModelLet),
        ];
        let expected: Vec<(String, DefKind)> =
            expected.iter().map(|(n, k)| (n.to_string(), *k)).collect();
        assert_eq!(summary, expected);
        let s = defs.iter().position(|d| d.name == "s");
        let main = defs.iter().position(|d| d.name == "main");
        assert_eq!(s.and_then(|s| defs[s].parent), main);
        assert_eq!(
            item_at(&defs, src.find("task").unwrap_or(0)).map(|(_, d)| d.name.as_str()),
            Some("k")
        );
    }
}
