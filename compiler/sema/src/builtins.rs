//! The functions kernel code can call, with the signature and the sentence the language
//! server shows for each: one table for the checker, completion, hover and semantic tokens.

/// A built-in function of kernel code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    pub name: &'static str,
    /// How it is called, e.g. `exp(x)`.
    pub signature: &'static str,
    /// One sentence: what it computes.
    pub doc: &'static str,
}

/// Every built-in function, in the order `docs/language.md` §5.7 lists them.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "exp",
        signature: "exp(x)",
        doc: "e to the power x, on a float or element-wise on a slice.",
    },
    Builtin {
        name: "log",
        signature: "log(x)",
        doc: "The natural logarithm, on a float or element-wise on a slice.",
    },
    Builtin {
        name: "sqrt",
        signature: "sqrt(x)",
        doc: "The square root, on a float or element-wise on a slice.",
    },
    Builtin {
        name: "tanh",
        signature: "tanh(x)",
        doc: "The hyperbolic tangent, on a float or element-wise on a slice.",
    },
    Builtin {
        name: "abs",
        signature: "abs(x)",
        doc: "The absolute value, on a number or element-wise on a slice.",
    },
    Builtin {
        name: "max",
        signature: "max(a, b) | max(a[lo..hi])",
        doc: "The larger of two values (element-wise on slices), or the largest element of one slice.",
    },
    Builtin {
        name: "min",
        signature: "min(a, b) | min(a[lo..hi])",
        doc: "The smaller of two values (element-wise on slices), or the smallest element of one slice.",
    },
    Builtin {
        name: "sum",
        signature: "sum(a[lo..hi])",
        doc: "The sum of a slice's elements, folded left to right.",
    },
    Builtin {
        name: "select",
        signature: "select(mask, a, b)",
        doc: "`a` where `mask` is true, else `b`: on scalars, or element-wise when any argument is a slice (a mask such as `x[0..n] > 0.0`); both values are evaluated.",
    },
    Builtin {
        name: "part_len",
        signature: "part_len(total: u32, parts: u32, index: u32) -> u32",
        doc: "The length of block `index` when `total` elements are split into `parts` blocks: `total / parts`, one more for the first `total % parts` blocks (the rule of uneven splits). Compile-time in a layer, per PE in a kernel (`part_len(n_total, region.rows, pe.row)`).",
    },
    Builtin {
        name: "part_start",
        signature: "part_start(total: u32, parts: u32, index: u32) -> u32",
        doc: "Where block `index` starts when `total` elements are split into `parts` blocks: `index * (total / parts) + min(index, total % parts)`.",
    },
];

/// The built-in functions that split a length into blocks: `u32` arguments and result, usable
/// in compile-time expressions.
pub const PART_FUNCTIONS: &[&str] = &["part_len", "part_start"];

/// `part_len(total, parts, index)` (`start` false) or `part_start` (true); `None` when
/// `parts` is 0.
pub fn part(start: bool, total: u64, parts: u64, index: u64) -> Option<u64> {
    let (size, extra) = (total.checked_div(parts)?, total % parts);
    Some(if start {
        index * size + index.min(extra)
    } else {
        size + u64::from(index < extra)
    })
}

/// The built-in function named `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}
