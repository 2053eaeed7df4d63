//! Tests: kernels, ports and tasks (E03xx).

use expect_test::expect;

use super::*;

#[test]
fn e0301_missing_main() {
    expect![[r#"
        E0301 main.wse:1:8 `k`: kernel `k` has no `main` task
            [no `task main()`]
            help: add `task main() { ... }`, which runs once on every PE at start
    "#]]
    .assert_eq(&check("kernel k() {\n    task start() {}\n}\n"));
}

#[test]
fn e0302_port_direction() {
    let out = check(
        "kernel k() {\n    var a: [f32; 4];\n    in xs: stream<f32> from west;\n    out ys: stream<f32> to east;\n    task main() { recv(ys, a[0..4]) then main; send(xs, a[0..4]); }\n}\n",
    );
    expect![[r#"
        E0302 main.wse:5:24 `ys`: cannot `recv` on `ys`, which is an `out` port
            [`recv` needs an `in` port]
            + main.wse:4:9 `ys`: `ys` declared as `out` here
        E0302 main.wse:5:53 `xs`: cannot `send` on `xs`, which is an `in` port
            [`send` needs an `out` port]
            + main.wse:3:8 `xs`: `xs` declared as `in` here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0303_activation_target_not_a_task() {
    let out = check(
        "kernel k() {\n    var a: [f32; 4];\n    in xs: stream<f32> from west;\n    task main() { recv(xs, a[0..4]) then stpe; activate a; }\n    task step() {}\n}\n",
    );
    expect![[r#"
        E0303 main.wse:4:42 `stpe`: `stpe` is not a task of this kernel
            [expected a task]
            help: did you mean `step`?
        E0303 main.wse:4:57 `a`: `a` is not a task of this kernel
            [expected a task]
            + main.wse:2:9 `a`: `a` is a variable, declared here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0304_unknown_side_and_multicast_out_is_a_syntax_error() {
    let out = check(
        "kernel k() {\n    in xs: stream<f32> from wset;\n    out ys: stream<f32> to east multicast;\n    task main() {}\n}\n",
    );
    expect![[r#"
        E0304 main.wse:2:29 `wset`: unknown side `wset`
            [expected `north`, `south`, `east`, `west`, `row`, `col` or `region`]
            help: did you mean `west`?
        E0002 main.wse:3:33 `multicast`: expected `;`, found identifier `multicast`
            [`multicast` is only for `in` ports]
            note: expected `;`
            help: remove `multicast`: only an `in` port receives a multicast stream (the routers deliver a stream entering the region's edge to a whole row or column)
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0450_distance_on_a_bus_and_a_distance_that_is_not_a_constant() {
    let out = check(
        "kernel k(h: u32) {\n    var a: [u32; 1];\n    out p: stream<f32> to row by 2;\n    in q: stream<f32> from row;\n    out r: stream<f32> to east by h + 1;\n    in s: stream<f32> from west by a[0];\n    out t: stream<f32> to east sideways 2;\n    task main() {}\n}\n",
    );
    expect![[r#"
        E0450 main.wse:3:34 `2`: a port on the `row` bus has no distance
            [not for a bus]
            help: remove `by ...`: what a PE sends `to row` reaches every other PE of its row already; `by` is for a stream to the PE k away on one side (`to east by k`)
        E0205 main.wse:6:36 `a[0]`: a port's distance must be known at compile time
            [not a compile-time value]
            note: compile-time values are literals, constants, kernel parameters and dimensions
        E0002 main.wse:7:32 `sideways`: expected `by` or `;`, found identifier `sideways`
            [a port's side is followed by `;`, or by `by` and a distance]
            note: expected one of `by`, `;`
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0305_port_element_type() {
    let out = check(
        "kernel k() {\n    var a: [i32; 4];\n    in xs: stream<f32> from west;\n    out ys: stream<f32> to east;\n    task main() { recv(xs, a[0..4]) then main; send(ys, a[0..4]); }\n}\n",
    );
    expect![[r#"
        E0305 main.wse:5:28 `a[0..4]`: port `xs` carries `f32`, but this is `i32`
            [expected `f32` elements]
            + main.wse:3:8 `xs`: `xs` declared as `stream<f32>` here
        E0305 main.wse:5:57 `a[0..4]`: port `ys` carries `f32`, but this is `i32`
            [expected `f32` elements]
            + main.wse:4:9 `ys`: `ys` declared as `stream<f32>` here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0306_bad_recv_target() {
    let out = check(
        "kernel k() {\n    var a: [f32; 4];\n    in xs: stream<f32> from west;\n    task main() { recv(xs, a[0] + 1.0) then main; }\n}\n",
    );
    expect![[r#"
        E0306 main.wse:4:28 `a[0] + 1.0`: `recv` needs an array slice, an array element or a scalar `var` to receive into
            [cannot receive into this]
    "#]]
    .assert_eq(&out);
}

#[test]
fn scoping_of_task_locals_and_members() {
    // Members are visible in every task; locals end with their block; a local may hide a
    // member; declarations see only earlier members.
    let out = check(
        "kernel k(n: u32) {\n    const h: u32 = n / 2;\n    var a: [f32; h];\n    var c: [f32; later];\n    const later: u32 = 2;\n    task main() {\n        if true { let t: f32 = 1.0; }\n        a[0] = t;\n        let a: f32 = 2.0;\n        activate other;\n    }\n    task other() { a[0] = 1.0; }\n}\n",
    );
    expect![[r#"
        E0105 main.wse:4:18 `later`: cannot find value `later` in this scope
            [not found in this scope]
        E0105 main.wse:8:16 `t`: cannot find value `t` in this scope
            [not found in this scope]
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0706_to_e0709_switches_and_control() {
    let out = check(
        "kernel k(w: u32) {\n    var v: u32 = 0;\n    out line: stream<f32> to east switch {\n        pos1: rx west; pos3: tx ramp; pos3: rx up tx north;\n        start: v; spin;\n    };\n    in ends: stream<f32> from west switch;\n    out ys: stream<f32> to east;\n    out bus: stream<f32> to row switch { pos1: rx west; };\n    task main() {\n        control(line, [adv, jump]);\n        control(line, []);\n        control(ys, [adv]);\n        control(ends, [nop]);\n    }\n}\n",
    );
    expect![[r#"
        E0706 main.wse:4:24 `pos3`: switch positions are `pos1`, `pos2`, `pos3` in order; found `pos3`
            [expected a position name]
            help: each position changes the one before it; name this one `pos2`
        E0708 main.wse:4:48 `up`: `up` cannot be used here
            [expected `east`, `west` or `ramp`]
            help: a switched port's color runs along one line: its positions receive from and forward to the port's side, the opposite side and `ramp` (this PE)
        E0708 main.wse:4:54 `north`: `north` cannot be used here
            [expected `east`, `west` or `ramp`]
            help: a switched port's color runs along one line: its positions receive from and forward to the port's side, the opposite side and `ramp` (this PE)
        E0708 main.wse:5:16 `v`: `v` cannot be used here
            [expected parameters, constants, `pe.row` and `pe.col`]
            help: the start position is set before the run: it cannot read a `var` or a local
        E0708 main.wse:5:19 `spin`: `spin` cannot be used here
            [expected `posK: rx D;`, `posK: tx D;`, `start: e;` or `ring;`]
            help: a switch lists its positions, its start and whether it is a ring
        E0708 main.wse:9:33 `switch { pos1: rx west; }`: `switch` cannot be used here
            [expected a port to `north`, `south`, `east` or `west`]
            help: a bus already reaches every PE of its line; switches are for a line toward one side (`to east switch { ... }`)
        E0709 main.wse:11:29 `jump`: invalid control commands: `jump` is not a command
            [not a valid control wavelet]
            help: a control wavelet carries 1 to 16 commands, one per router from the sender's: `adv`, `nop` or `reset`
        E0709 main.wse:12:9 `control(line, []);`: invalid control commands: there are none
            [not a valid control wavelet]
            help: a control wavelet carries 1 to 16 commands, one per router from the sender's: `adv`, `nop` or `reset`
        E0707 main.wse:13:17 `ys`: `control` on `ys`, which has no switch
            [a control wavelet needs a switched `out` port]
            + main.wse:8:9 `ys`: `ys` declared here
            help: declare the port `out p: stream<f32> to east switch { pos1: rx west; ... };`
        E0707 main.wse:14:17 `ends`: `control` on `ends`, which has no switch
            [a control wavelet needs a switched `out` port]
            + main.wse:7:8 `ends`: `ends` declared here
            help: declare the port `out p: stream<f32> to east switch { pos1: rx west; ... };`
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0815_a_tensor_bound_to_a_switched_port() {
    let out = check(
        "kernel k() {\n    out line: stream<f32> to east switch { pos1: rx west; pos2: tx ramp; };\n    in ends: stream<f32> from west switch;\n    task main() {}\n}\nlayer l(x: f32[B, 1]) -> y: f32[B, 1] {\n    cost { flops = 1; weights = 0; activations = 4; }\n    pipelined on [1, 2] {\n        run k();\n        bind x to port ends;\n        bind y to port line;\n    }\n}\n",
    );
    expect![[r#"
        E0815 main.wse:10:24 `ends`: `ends` is a switched port, which no tensor can be bound to
            [a switched port]
            + main.wse:3:8 `ends`: `ends` is declared with `switch` here
            help: bind the tensor to a port without a switch (`in xs: stream<f32> from west;`) and pass the values on inside the region
        E0815 main.wse:11:24 `line`: `line` is a switched port, which no tensor can be bound to
            [a switched port]
            + main.wse:2:9 `line`: `line` is declared with `switch` here
            help: bind the tensor to a port without a switch (`in xs: stream<f32> from west;`) and pass the values on inside the region
    "#]].assert_eq(&out);
}
