//! Tests: name resolution and imports (E01xx).

use expect_test::expect;

use super::*;

#[test]
fn e0101_unknown_module() {
    let out = check_files(&[(
        "main.wse",
        "import kernels.gemv.{k};\nimport std.nope.{x};\n",
    )]);
    expect![[r#"
        E0101 main.wse:1:8 `kernels.gemv`: cannot find module `kernels.gemv`
            [module not found]
            note: looked for `kernels/gemv.wse`
        E0101 main.wse:2:8 `std.nope`: cannot find module `std.nope`
            [module not found]
            note: looked for `<std>/nope.wse`
            help: the standard library has `std.nn`, `std.collectives`, `std.stencil`, `std.resident`, `std.loss`
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0102_unknown_name_in_module() {
    let out = check_files(&[
        ("main.wse", "import lib.{HIDEN};\n"),
        ("lib.wse", "const HIDDEN: u32 = 4;\n"),
    ]);
    expect![[r#"
        E0102 main.wse:1:13 `HIDEN`: module `lib` has no item named `HIDEN`
            [not found in the module]
            help: did you mean `HIDDEN`?
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0103_duplicate_items_and_imports() {
    let out = check_files(&[
        (
            "main.wse",
            "import lib.{A, A as B};\nconst A: u32 = 1;\nconst C: u32 = 2;\nconst C: u32 = 3;\n",
        ),
        ("lib.wse", "const A: u32 = 4;\n"),
    ]);
    expect![[r#"
        E0103 main.wse:2:7 `A`: the name `A` is defined more than once in this module
            [defined again here]
            + main.wse:1:13 `A`: first defined here
            help: rename one of them, or import with `as` under another name
        E0103 main.wse:4:7 `C`: the name `C` is defined more than once in this module
            [defined again here]
            + main.wse:3:7 `C`: first defined here
            help: rename one of them, or import with `as` under another name
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0104_import_cycle() {
    let out = check_files(&[
        ("main.wse", "import a.{X};\nconst Y: u32 = X;\n"),
        ("a.wse", "import main.{Y};\nconst X: u32 = 1;\n"),
    ]);
    expect![[r#"
        E0104 a.wse:1:8 `main`: this import creates an import cycle
            [the imported module imports this one back]
            note: the cycle is a.wse → main.wse → a.wse
    "#]]
    .assert_eq(&out);
}

#[test]
fn imports_resolve_with_renames_and_stdlib_paths() {
    let out = check_files(&[
        (
            "dir/main.wse",
            "import sub.lib.{SIZE as N};\nconst M: u32 = N * 2;\n",
        ),
        ("dir/sub/lib.wse", "const SIZE: u32 = 4;\n"),
    ]);
    expect![[""]].assert_eq(&out);
}

#[test]
fn e0105_unresolved_name_with_suggestion() {
    let out = check("const HIDDEN: u32 = 4;\nconst X: u32 = HIDEN + 1;\n");
    expect![[r#"
        E0105 main.wse:2:16 `HIDEN`: cannot find value `HIDEN` in this scope
            [not found in this scope]
            help: did you mean `HIDDEN`?
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0106_duplicate_local_names() {
    let out = check(
        "kernel k(n: u32, n: u32) {\n    var a: f32;\n    var a: f32;\n    task main() { let t: f32 = 1.0; let t: f32 = 2.0; }\n}\n",
    );
    expect![[r#"
        E0106 main.wse:1:18 `n`: the name `n` is defined more than once
            [defined again here]
            + main.wse:1:10 `n`: first defined here
        E0106 main.wse:3:9 `a`: the name `a` is defined more than once
            [defined again here]
            + main.wse:2:9 `a`: first defined here
        E0106 main.wse:4:41 `t`: the name `t` is defined more than once
            [defined again here]
            + main.wse:4:23 `t`: first defined here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0107_wrong_kind_of_name() {
    let out = check(
        "kernel k() {\n    in xs: stream<f32> from west;\n    var a: f32;\n    task main() { a = xs; a = k; }\n}\n",
    );
    expect![[r#"
        E0107 main.wse:4:23 `xs`: expected a value, found port `xs`
            [this is a port]
            + main.wse:2:8 `xs`: port defined here
        E0107 main.wse:4:31 `k`: expected a value, found kernel `k`
            [this is a kernel]
            + main.wse:1:8 `k`: kernel defined here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0108_unknown_field() {
    let out = check(
        "kernel k() {\n    var a: u32;\n    task main() { a = pe.x; a = region.rows; a = pe; }\n}\n",
    );
    expect![[r#"
        E0108 main.wse:3:26 `x`: `pe` has no field `x`
            [unknown field]
            help: use `pe.row`, `pe.col` or `pe.cycle`
        E0108 main.wse:3:50 `pe`: `pe` is not a value on its own
            [needs a field]
            help: use `pe.row`, `pe.col` or `pe.cycle`
    "#]]
    .assert_eq(&out);
}

#[test]
fn go_to_definition_and_types_are_recorded() {
    let src = "const N: u32 = 4;\nkernel k() {\n    var a: [f32; N];\n    task main() { a[0] = 1.0; }\n}\n";
    let (db, root, _) = load(&[("main.wse", src)]);
    let analysis = crate::check_file(&db, root);
    let use_of_n = src.rfind("N]").expect("use of N");
    let def = analysis.definition_at(use_of_n).expect("N resolves");
    assert_eq!(&src[def.span.clone()], "N");
    assert_eq!(def.span.start, src.find("N:").expect("def of N"));
    let use_of_a = src.rfind("a[0]").expect("use of a");
    assert_eq!(analysis.type_at(use_of_a), Some("[f32; 4]"));
}

#[test]
fn import_lists_are_name_uses() {
    let main = "import lib.{K as k2, J};\nconst X: u32 = k2;\n";
    let lib = "const K: u32 = 3;\n";
    let (db, root, _) = load(&[("main.wse", main), ("lib.wse", lib)]);
    let analysis = crate::check_file(&db, root);
    let at = |needle: &str| main.find(needle).expect("needle");
    let def_of = |offset: usize| analysis.definition_at(offset).cloned();
    let k = crate::Location {
        file: "lib.wse".into(),
        span: 6..7,
    };
    // The module path names the module; an imported name and its alias name the item, as
    // a use of the alias does; a name the module lacks (E0102) names nothing.
    assert_eq!(
        def_of(at("lib")),
        Some(crate::Location {
            file: "lib.wse".into(),
            span: 0..0
        })
    );
    assert_eq!(def_of(at("K as")), Some(k.clone()));
    assert_eq!(def_of(at("k2,")), Some(k.clone()));
    assert_eq!(def_of(at("k2;")), Some(k));
    assert_eq!(def_of(at("J}")), None);
}
