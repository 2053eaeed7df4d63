//! The `param` files of a model, checked where they are declared: `wsel check`, the language
//! server and a fresh build read every `param`'s file header (never its values) and report a
//! missing or unreadable file (E0801), the wrong dtype (E0802) or the wrong shape (E0803) at
//! the `param` line, with "did you mean" for a near file name and a hint when the shape is
//! the declared one reversed.
//!
//! Reading files is IO at the edge, so this is a plain function its callers run beside the
//! checker's queries, not a salsa query: a data file changed on disk is seen at the next call.

use std::path::{Path, PathBuf};

use wsel_sema::ty::{Dim, TensorType};
use wsel_sema::{Db, Diagnostic, ItemKind, Location, Severity, SourceFile};
use wsel_syntax::ast;

use crate::convert::numpy_dtype;
use crate::npz::DataRef;

mod wording;

/// One `param` as declared: its name, checked type, file as written and where it is.
struct ParamSite<'a> {
    name: &'a str,
    ty: &'a TensorType,
    written: String,
    data: DataRef,
    /// The string naming the file, or the whole `param` statement when it names none.
    at: Location,
    /// The declared type.
    ty_at: Location,
}

/// The diagnostics of the `param` files of every model in `file`, once the program has no
/// errors (in a broken program they would only add noise, as mapping would). Parameters for
/// which `given` is true (data handed over in memory) are skipped.
pub fn param_diagnostics(
    db: &dyn Db,
    file: SourceFile,
    given: &dyn Fn(&str) -> bool,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let broken = wsel_sema::program_diagnostics(db, file)
        .iter()
        .any(|d| d.severity == Severity::Error);
    if broken {
        return out;
    }
    for item in wsel_sema::item_index(db, file) {
        if item.kind(db) != ItemKind::Model {
            continue;
        }
        let Some(ast::Item::Model(model)) = wsel_sema::item_ast(db, *item) else {
            continue;
        };
        let checked = &wsel_sema::check_model(db, *item).graph;
        for stmt in &model.body {
            let Some(site) = site(file.path(db), stmt, &checked.params) else {
                continue;
            };
            if !given(site.name) {
                out.extend(check(&site));
            }
        }
    }
    out
}

fn site<'a>(
    source: &Path,
    stmt: &ast::ModelStmt,
    params: &'a [(String, TensorType, String)],
) -> Option<ParamSite<'a>> {
    let ast::ModelStmt::Param {
        name,
        ty: written_ty,
        path,
        span,
    } = stmt
    else {
        return None;
    };
    let (name, ty, written) = params
        .iter()
        .find(|(n, _, _)| *n == name.name)
        .map(|(n, t, w)| (n.as_str(), t, w.clone()))?;
    let location = |span: &ast::Span| Location {
        file: source.to_path_buf(),
        span: span.clone(),
    };
    Some(ParamSite {
        name,
        ty,
        data: DataRef::new(&wsel_lower::graph::resolve_path(source, &written), name),
        written,
        at: location(path.as_ref().map_or(span, |(_, s)| s)),
        ty_at: location(&ast_type_span(written_ty).unwrap_or_else(|| span.clone())),
    })
}

/// The diagnostic of one `param`'s file, if it has a problem.
fn check(site: &ParamSite<'_>) -> Option<Diagnostic> {
    let header = match site.data.header() {
        Ok(header) => header,
        Err(reason) => {
            let near = near_name(&site.data.path, &site.written);
            return Some(wording::unreadable(site, &reason, near));
        }
    };
    if header.fortran {
        let reason = "the array is stored in Fortran order";
        return Some(
            wording::unreadable(site, reason, None)
                .with_help("save it in C order: `np.save(path, np.ascontiguousarray(w))`"),
        );
    }
    let declared: Vec<u64> = site
        .ty
        .dims
        .iter()
        .map(|d| match d {
            Dim::Known(n) => *n,
            Dim::Var(_) | Dim::Expr(_) => 0,
        })
        .collect();
    if header.shape != declared {
        return Some(wording::wrong_shape(site, &header, &declared));
    }
    let wanted = numpy_dtype(wsel_lower::value::scalar_ty(site.ty.elem));
    (header.dtype != wanted).then(|| wording::wrong_dtype(site, &header, wanted))
}

/// A `.npy`/`.npz` file beside the missing one with a near name, written as the program
/// writes paths: `data/w3.npy` for a missing `data/w4.npy`.
fn near_name(path: &Path, written: &str) -> Option<String> {
    let dir = path.parent()?;
    let missing = path.file_name()?.to_str()?;
    let names: Vec<String> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".npy") || n.ends_with(".npz"))
        .collect();
    let near = wsel_sema::diagnostics::did_you_mean(missing, names.iter().map(String::as_str))?;
    let suggestion: PathBuf = Path::new(written).with_file_name(near);
    Some(suggestion.display().to_string())
}

/// The span of a written type (`f32[64, 32]`).
fn ast_type_span(ty: &ast::Type) -> Option<ast::Span> {
    match ty {
        ast::Type::Tensor { span, .. } => Some(span.clone()),
        _ => None,
    }
}
