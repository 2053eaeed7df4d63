//! The wording of the `param` file diagnostics (E0801–E0803 at a `param` line).

use wsel_sema::Diagnostic;

use super::ParamSite;
use crate::array::Header;
use crate::tensor::shape_text;

/// E0801: a `param`'s file cannot be read — missing, not NumPy, an `.npz` archive without the
/// parameter's array, or stored in Fortran order. `near`: a file beside it with a near name.
pub fn unreadable(site: &ParamSite<'_>, reason: &str, near: Option<String>) -> Diagnostic {
    let d = Diagnostic::error(
        crate::E0801,
        format!(
            "cannot read {} for parameter `{}`: {reason}",
            site.data, site.name
        ),
        site.at.clone(),
        "cannot be read",
    );
    match near {
        Some(near) => d.with_help(format!("did you mean `{near}`?")),
        None => d,
    }
}

/// E0803: a `param`'s file holds an array of another shape than the parameter declares; when
/// it is the declared shape reversed, the help says the file looks transposed.
pub fn wrong_shape(site: &ParamSite<'_>, header: &Header, declared: &[u64]) -> Diagnostic {
    let found = shape_text(&header.shape);
    let d = Diagnostic::error(
        crate::E0803,
        format!(
            "{} has shape {found}, but parameter `{}` is declared `{}`",
            site.data, site.name, site.ty
        ),
        site.at.clone(),
        format!("shape {found}"),
    )
    .with_secondary(site.ty_at.clone(), "declared here");
    if crate::convert::is_transposed(&header.shape, declared) {
        d.with_help(format!("the file looks transposed: save `{}.T`", site.name))
    } else {
        d
    }
}

/// E0802: a `param`'s file holds values of another dtype than the parameter declares.
pub fn wrong_dtype(site: &ParamSite<'_>, header: &Header, wanted: &str) -> Diagnostic {
    Diagnostic::error(
        crate::E0802,
        format!(
            "{} holds `{}` values, but parameter `{}` is declared `{}`",
            site.data, header.dtype, site.name, site.ty
        ),
        site.at.clone(),
        format!("`{}` values", header.dtype),
    )
    .with_secondary(site.ty_at.clone(), "declared here")
    .with_help(format!(
        "save it as {wanted}: `np.save(path, {}.astype(np.{wanted}))`",
        site.name
    ))
}
