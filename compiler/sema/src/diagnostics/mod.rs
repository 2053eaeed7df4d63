//! Diagnostic handlers: one module per family of codes, one constructor per code, each with a
//! doc comment saying when it fires. Checks call these instead of building messages inline, so
//! the wording of every code lives in one place. `CODES` lists every code for `all_codes()`.

pub mod kernels;
pub mod layers;
pub mod models;
pub mod resolve;
pub mod run;
pub mod switches;
pub mod train;
pub mod train_as;
pub mod types;

/// Every code this crate reports, with a one-line summary (the parser's E0001–E0007 come
/// from `wsel_syntax::codes()`).
pub const CODES: &[(&str, &str)] = &[
    ("E0101", "imported module not found"),
    ("E0102", "imported name not found in its module"),
    ("E0103", "name defined more than once at module level"),
    ("E0104", "import cycle"),
    ("E0105", "unresolved name"),
    (
        "E0106",
        "name defined more than once in a kernel, layer or model",
    ),
    ("E0107", "name of the wrong kind"),
    ("E0108", "unknown field"),
    ("E0201", "mismatched types"),
    ("E0202", "operator not defined for a type"),
    ("E0203", "overflow in a compile-time expression"),
    ("E0204", "division by zero"),
    ("E0205", "expression is not a compile-time constant"),
    ("E0206", "constant index or slice out of bounds"),
    ("E0207", "slices of different lengths in one statement"),
    ("E0208", "invalid cast"),
    ("E0209", "unknown function"),
    ("E0210", "wrong number of arguments to a function"),
    ("E0211", "assignment to something that cannot be assigned"),
    (
        "E0212",
        "indexing or slicing something that is not an array",
    ),
    ("E0213", "a vector or array where a scalar is needed"),
    ("E0214", "type not allowed in this position"),
    ("E0215", "constant defined in terms of itself"),
    ("E0216", "expression statement has no effect"),
    (
        "E0217",
        "tensor dimension is neither a constant nor a dimension variable",
    ),
    ("E0218", "a `train as` clause that leads back to its layer"),
    ("E0301", "kernel has no `main` task"),
    ("E0302", "receive on an `out` port or send on an `in` port"),
    ("E0303", "activation target is not a task of the kernel"),
    ("E0304", "unknown port side"),
    (
        "E0305",
        "port element type differs from the data received or sent",
    ),
    (
        "E0306",
        "receive target is not an array slice, element or scalar variable",
    ),
    ("E0401", "called name is not a layer"),
    ("E0402", "tensor shape or type mismatch at a layer call"),
    ("E0403", "layer `param` input not given a model parameter"),
    ("E0404", "model parameter given to an activation input"),
    ("E0405", "wrong number of arguments to a layer"),
    (
        "E0406",
        "model result type differs from the declared output type",
    ),
    ("E0407", "model without exactly one final `return`"),
    ("E0408", "invalid sample dimension or parameter shape"),
    ("E0409", "missing, unknown or repeated cost entry"),
    ("E0410", "two implementations for the same mode"),
    ("E0411", "implementation without `run`"),
    ("E0412", "`run` names something that is not a kernel"),
    ("E0413", "unknown kernel parameter in `run`"),
    ("E0414", "kernel parameter missing from `run`"),
    ("E0415", "kernel parameter given twice in `run`"),
    (
        "E0416",
        "`bind` names something that is not a tensor of the layer",
    ),
    (
        "E0417",
        "`bind` target is not an array or port of the kernel",
    ),
    ("E0418", "unknown split axis"),
    ("E0419", "split longer than the tensor's rank"),
    ("E0420", "port bound against its direction"),
    (
        "E0421",
        "bound tensor's element type differs from the array or port",
    ),
    ("E0423", "output dimension not determined by the inputs"),
    ("E0424", "invalid region size"),
    (
        "E0425",
        "implementation binds tensors but not the layer's output",
    ),
    ("E0426", "tensor bound twice in one implementation"),
    ("E0427", "tensor bound to a bus port"),
    ("E0430", "`run` item names something that is not a model"),
    ("E0431", "run input is not an input of the model"),
    (
        "E0432",
        "model input missing from or repeated in the run configuration",
    ),
    ("E0433", "unknown run setting"),
    ("E0434", "invalid run setting value"),
    ("E0435", "more than one `run` item in a file"),
    (
        "E0436",
        "named argument that is not a scalar input of the layer",
    ),
    ("E0437", "scalar input given twice at a layer call"),
    (
        "E0438",
        "scalar input without a default not given at a layer call",
    ),
    ("E0440", "resident activation in a pipelined implementation"),
    ("E0441", "`tiles` with the wrong number of counts"),
    ("E0442", "unknown name in an output dimension expression"),
    (
        "E0443",
        "output dimension expression that is not integer arithmetic",
    ),
    ("E0444", "output dimension that is not a positive size"),
    ("E0445", "output dimension with no value at a call"),
    (
        "E0446",
        "output dimension expression using the sample dimension",
    ),
    ("E1109", "unknown or repeated train setting"),
    ("E1110", "invalid train setting value"),
    ("E1111", "more than one `train` item in a file"),
    ("E1112", "train settings that exclude each other"),
    ("E1120", "invalid `recompute` train setting"),
    ("E0450", "`by k` on a bus port"),
    (
        "E0451",
        "a `train as` clause calls something that is not a layer",
    ),
    (
        "E0452",
        "a `train as` argument that is not the layer's input or does not fit",
    ),
    (
        "E0453",
        "a `train as` shape or result type that does not fit",
    ),
    ("E0454", "a reshape that changes the number of features"),
    (
        "E0455",
        "a reshape of a model input or param, or as the model's result",
    ),
    (
        "E0456",
        "a reshape's arguments are not a tensor and its dimensions",
    ),
    ("E0706", "too many or misnamed switch positions"),
    ("E0707", "`control` on a port without a switch"),
    ("E0708", "a switch names what its port cannot use"),
    ("E0709", "invalid control commands"),
    ("E0815", "tensor bound to a switched port"),
];

/// The longest name, in characters, that gets a "did you mean" suggestion. Comparing two names
/// costs the product of their lengths, so unbounded names made suggestions quadratic (a
/// 20,000-character misspelt name took 14.7 s); a typo in a name this long is not one a
/// suggestion helps with anyway.
pub const MAX_SUGGESTED_NAME: usize = 64;

/// A suggestion among `candidates` for the misspelt `name`: the nearest by optimal string
/// alignment distance (an insertion, deletion, substitution or swap of two neighbours costs
/// 1), if at most a third of the name's length. Names longer than [`MAX_SUGGESTED_NAME`] get
/// none, and candidates whose length alone puts them too far are not compared.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let len = name.chars().count();
    let limit = len / 3;
    if limit == 0 || len > MAX_SUGGESTED_NAME {
        return None;
    }
    candidates
        .into_iter()
        .filter(|c| *c != name && c.len() <= 4 * (len + limit))
        .filter(|c| c.chars().count().abs_diff(len) <= limit)
        .map(|c| (strsim::osa_distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions_use_edit_distance() {
        assert_eq!(
            did_you_mean("dens", ["dense", "relu"]),
            Some("dense".into())
        );
        assert_eq!(did_you_mean("xyz", ["dense", "relu"]), None);
        assert_eq!(did_you_mean("stpe", ["step", "stop"]), Some("step".into()));
        assert_eq!(did_you_mean("t", ["a"]), None);
    }

    #[test]
    fn long_names_get_no_suggestion() {
        // 61cd1ce compared names of any length, at the product of their lengths in time and
        // memory: a 20,000-character misspelt name took 14.7 s.
        let near = |n: usize| ("a".repeat(n - 1) + "b", "a".repeat(n));
        let (name, candidate) = near(MAX_SUGGESTED_NAME);
        assert_eq!(did_you_mean(&name, [candidate.as_str()]), Some(candidate));
        let (name, candidate) = near(MAX_SUGGESTED_NAME + 1);
        assert_eq!(did_you_mean(&name, [candidate.as_str()]), None);
        let (name, candidate) = near(200_000);
        assert_eq!(did_you_mean(&name, [candidate.as_str(), "a"]), None);
    }
}
