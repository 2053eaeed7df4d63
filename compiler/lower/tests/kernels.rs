//! Snapshots of the kernel IR of every stdlib and example kernel, instantiated with small
//! arguments that satisfy its layer's conditions. Every instance also passes the code
//! generators' IR checker (`common::lower`).

mod common;

use expect_test::expect_file;
use wsel_ir::graph::CValue;
use wsel_ir::print::print_kernel;

const STDLIB: &str = "
import std.nn.{dense_tile, dense_resident, relu_tile, relu_resident, softmax_row, softmax_resident};
import std.resident.{stage_in_tile, stage_out_tile};
import std.collectives.{row_reduce, row_broadcast, row_broadcast_add, row_allreduce};
import std.stencil.{jacobi5};
";

fn stdlib(name: &str, args: &[(&str, i64)]) -> String {
    stdlib_with(name, args, &[])
}

/// [`stdlib`] with boolean arguments too.
fn stdlib_with(name: &str, ints: &[(&str, i64)], bools: &[(&str, bool)]) -> String {
    let (db, file) = common::load_one(STDLIB);
    let args: Vec<(String, CValue)> = ints
        .iter()
        .map(|(n, v)| (n.to_string(), CValue::Int(*v)))
        .chain(bools.iter().map(|(n, v)| (n.to_string(), CValue::Bool(*v))))
        .collect();
    print_kernel(&common::lower_with(&db, file, name, &args))
}

/// `stdlib` for a kernel with `bool` parameters too.
fn stdlib_flags(name: &str, ints: &[(&str, i64)], flags: &[(&str, bool)]) -> String {
    let (db, file) = common::load_one(STDLIB);
    let args: Vec<(String, CValue)> = ints
        .iter()
        .map(|(n, v)| (n.to_string(), CValue::Int(*v)))
        .chain(flags.iter().map(|(n, v)| (n.to_string(), CValue::Bool(*v))))
        .collect();
    print_kernel(&common::lower_with(&db, file, name, &args))
}

fn example(example: &str, name: &str, args: &[(&str, CValue)]) -> String {
    let (db, file) = common::load_example(example);
    let args: Vec<(String, CValue)> = args.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    print_kernel(&common::lower_with(&db, file, name, &args))
}

macro_rules! snapshot {
    ($test:ident, $text:expr) => {
        #[test]
        fn $test() {
            expect_file![concat!("snapshots/kernels/", stringify!($test), ".ir")].assert_eq(&$text);
        }
    };
}

snapshot!(
    dense_tile,
    stdlib(
        "dense_tile",
        &[
            ("n", 4),
            ("m", 2),
            ("samples", 3),
            ("n_total", 7),
            ("m_total", 4),
            ("act", 0)
        ]
    )
);
snapshot!(
    dense_resident,
    stdlib_with(
        "dense_resident",
        &[
            ("N", 5),
            ("M", 3),
            ("S", 3),
            ("R", 2),
            ("C", 2),
            ("nmax", 3),
            ("mmax", 2),
            ("smax", 2),
            ("k", 2),
            ("slots", 2),
            ("wlen", 8),
            ("K", 1),
            ("kc", 0)
        ],
        &[("biased", true), ("hold", false)]
    )
);
snapshot!(
    relu_resident,
    stdlib(
        "relu_resident",
        &[("N", 5), ("S", 3), ("R", 2), ("C", 2), ("len", 6)]
    )
);
snapshot!(
    softmax_resident,
    // Grouped and causally masked: two groups of 3 over rows of 3 features.
    stdlib_flags(
        "softmax_resident",
        &[
            ("N", 6),
            ("S", 3),
            ("R", 2),
            ("C", 2),
            ("nmax", 3),
            ("smax", 2),
            ("ctx", 3),
            ("G", 2)
        ],
        &[("causal", true)]
    )
);
snapshot!(
    stage_in_tile,
    stdlib(
        "stage_in_tile",
        &[
            ("N", 5),
            ("S", 3),
            ("R", 2),
            ("C", 2),
            ("nmax", 3),
            ("smax", 2)
        ]
    )
);
snapshot!(
    stage_out_tile,
    stdlib(
        "stage_out_tile",
        &[
            ("N", 5),
            ("S", 3),
            ("R", 2),
            ("C", 2),
            ("nmax", 3),
            ("smax", 2)
        ]
    )
);
snapshot!(relu_tile, stdlib("relu_tile", &[("n", 4), ("samples", 3)]));
snapshot!(
    softmax_row,
    stdlib_flags(
        "softmax_row",
        &[("n", 4), ("samples", 3), ("slots", 2), ("ctx", 0)],
        &[("causal", true)]
    )
);
snapshot!(
    row_reduce,
    stdlib("row_reduce", &[("p", 2), ("n", 4), ("samples", 3)])
);
snapshot!(
    row_broadcast,
    stdlib("row_broadcast", &[("p", 2), ("n", 4), ("samples", 3)])
);
snapshot!(
    row_broadcast_add,
    stdlib("row_broadcast_add", &[("p", 2), ("n", 4), ("samples", 3)])
);
snapshot!(
    row_allreduce,
    stdlib(
        "row_allreduce",
        &[("p", 2), ("n", 4), ("samples", 3), ("slots", 2)]
    )
);
snapshot!(
    jacobi5,
    stdlib(
        "jacobi5",
        &[("h", 4), ("w", 4), ("gw", 8), ("iters", 2), ("samples", 1)]
    )
);
snapshot!(
    axpy_row,
    example(
        "axpy",
        "axpy_row",
        &[
            ("n", CValue::Int(4)),
            ("alpha", CValue::Float(2.5)),
            ("samples", CValue::Int(3))
        ]
    )
);
snapshot!(
    gemv_tile,
    example(
        "gemv",
        "gemv_tile",
        &[
            ("m", CValue::Int(2)),
            ("n", CValue::Int(4)),
            ("samples", CValue::Int(3))
        ]
    )
);
snapshot!(
    divide_parts,
    example(
        "allreduce",
        "divide_parts",
        &[
            ("p", CValue::Int(2)),
            ("n", CValue::Int(4)),
            ("samples", CValue::Int(3))
        ]
    )
);
snapshot!(
    add_row,
    example(
        "residual",
        "add_row",
        &[("n", CValue::Int(4)), ("samples", CValue::Int(3))]
    )
);
snapshot!(
    layernorm_row,
    example(
        "residual",
        "layernorm_row",
        &[
            ("n", CValue::Int(4)),
            ("total", CValue::Int(8)),
            ("eps", CValue::Float(1e-5)),
            ("samples", CValue::Int(3))
        ]
    )
);
