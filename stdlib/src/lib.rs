//! The wsel standard library: `.wse` sources embedded in the binary, looked up by module path.
//!
//! `import std.nn.{dense}` names the module path `["nn"]`, which is the file `stdlib/nn.wse`.
//! The compiler knows no layer by name; these files are ordinary `.wse` modules.

/// Every standard-library module: its dotted path below `std` and its source text.
const MODULES: &[(&str, &str)] = &[
    ("nn", include_str!("../nn.wse")),
    ("collectives", include_str!("../collectives.wse")),
    ("stencil", include_str!("../stencil.wse")),
    ("resident", include_str!("../resident.wse")),
    ("loss", include_str!("../loss.wse")),
];

/// The source of the standard-library module at `path` (the segments after `std`), if any.
pub fn source(path: &[&str]) -> Option<&'static str> {
    let dotted = path.join(".");
    MODULES
        .iter()
        .find(|(name, _)| *name == dotted)
        .map(|(_, text)| *text)
}

/// The dotted paths of all standard-library modules, for completion and listings.
pub fn module_paths() -> impl Iterator<Item = &'static str> {
    MODULES.iter().map(|(name, _)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nn_and_rejects_unknown() {
        assert!(source(&["nn"]).is_some());
        assert!(source(&["nope"]).is_none());
        assert!(module_paths().any(|p| p == "nn"));
    }
}
