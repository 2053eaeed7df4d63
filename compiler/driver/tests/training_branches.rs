//! Pipelined training of models whose branches join (`docs/language.md` §11.2): a result
//! read by several layers gets the sum of their gradients, added on the fabric
//! (`gradient_sum_train_back`, on the region of the relay the compiler puts before each
//! reading after the first), and a layer of several activation inputs gives each input its
//! own gradient (`matmul_qk_train_back_q`/`_k`, `matmul_pv_train_back_p`/`_v`,
//! `pack_qkv_train_back_q`/`_k`/`_v` of the fused attention, which trains as its `train as`
//! clause; each input's but the last's on the region of the `keep` before the next input);
//! a layer of the model's own trains as its clause's calls; a residual block may start at the
//! model's input and may hold another. Checked against the same NumPy reference
//! (tests/reference/transformer_train.py) as weight-streaming training.

mod support;
use support::transformer::{
    SMALL_SGD, TINY_GPT, TINY_GPT_SGD, composed_tiny_gpt, reference_losses, small_train_item,
    transformer_trains_like_numpy,
};

/// [`composed_tiny_gpt`] trained pipelined on `dev`: the block's `a` feeds three dense
/// layers (q, k and v: two relays, two sums of gradients), `matmul_qk` and `matmul_pv` join
/// the branches (two keeps), inside the residual block `add(h, ·)`.
fn composed_gpt_pipelined() -> String {
    pipelined_on_dev(&composed_tiny_gpt(2, "0.35355339"))
}

/// `source`'s run item trained pipelined on `dev` instead of on `wse2`.
fn pipelined_on_dev(source: &str) -> String {
    let on_wse2 = "    target = \"wse2\";\n";
    assert!(source.contains(on_wse2));
    source.replace(
        on_wse2,
        "    target = \"dev\";\n    mode = \"pipelined\";\n",
    )
}

/// The tiny GPT with its attention composed (`matmul_qk`, the grouped causal `softmax`,
/// `matmul_pv`) trains pipelined on `dev` like the NumPy reference's `gpt`: 3 SGD-momentum
/// steps of 16 tokens, losses within 1e-5 relative and every weight within 1e-5
/// (`transformer_trains_like_numpy`, which also asks every weight but the key biases to move
/// by more than 1e-3, so a gradient lost on the way fails it). Measured: the losses agree to
/// 7 digits (3.347736, 4.764985, 2.282159), the weights within 1.5e-7 while training moves
/// them by 0.01 to 0.13; 40,712 simulated cycles a step (14,763 forward, 25,949 backward).
///
/// A sum at the fan-out that drops a gradient fails it: `gradient_sum_train_back_tile`
/// sending dy alone (the relayed readings' gradients, k's and v's paths to `a`, dropped) gave
/// step 2's loss 4.818159 against the reference's 4.764985 (1.1e-2 relative).
#[test]
fn a_tiny_gpt_with_composed_attention_trains_pipelined_like_numpy() {
    let stdout =
        transformer_trains_like_numpy("gpt", &composed_gpt_pipelined(), &[], &TINY_GPT_SGD);
    for layer in [
        "keep_train#1",
        "keep_train#2",
        "relay_train#1",
        "relay_train#2",
    ] {
        assert!(stdout.contains(layer), "no {layer}: {stdout}");
    }
}

/// [`TINY_GPT`] with its fused `attention(q, k, v)` trains pipelined on `dev`, as its `train
/// as` clause `attention_qkv(pack_qkv(q, k, v))` (relays before k and v, where a pair's
/// inputs get keeps: `pack_qkv`'s gradient layers read nothing a keep would keep,
/// language.md §11.2; q's and k's parts of the packed gradient on their regions, v's on
/// `pack_qkv`'s), like the NumPy reference's `gpt`: 3 SGD-momentum steps of 16 tokens, losses
/// within 1e-5 relative and every weight within 1e-5 while every weight but the key biases
/// moves by more than 1e-3 (`transformer_trains_like_numpy`). Measured: the losses agree to 7
/// digits (3.347736, 4.764985, 2.282158), the weights within 1.8e-7 while training moves them
/// by 0.01 or more. The whole batch of 16 at once: `attention_qkv_train_back` needs 5,252 B per
/// PE for it on one PE (`dev` has 4,096), and its region is 1 × 2, one head per column, on a
/// placement the mapper found after rejecting ones where the backward could not route
/// (docs/mapping.md §4, "Training's forks"); 29,955 simulated cycles a step (7,841 forward,
/// 22,114 backward, 473 update), where two micro-batches of 8 on 1 × 1 took 56,001.
///
/// Dropping one of the three gradients fails it: `pack_qkv_train_back_tile` sending zeros for
/// `which` 1 (dk) gave step 2's loss 4.810809 against the reference's 4.764985 (9.6e-3
/// relative).
#[test]
fn a_tiny_gpt_with_fused_attention_trains_pipelined_like_numpy() {
    let source = pipelined_on_dev(TINY_GPT);
    let stdout = transformer_trains_like_numpy("gpt", &source, &[], &TINY_GPT_SGD);
    let inserted = [
        "pack_qkv_train#1",
        "attention_qkv_train#1",
        "relay_train#3",
        "relay_train#4",
    ];
    for layer in inserted {
        assert!(stdout.contains(layer), "no {layer}: {stdout}");
    }
    assert!(!stdout.contains("keep_train"), "{stdout}");
    // The whole batch at once: attention on 1 × 2, one head per column.
    assert!(
        stdout.contains("3 steps of 16 samples on dev, pipelined"),
        "{stdout}"
    );
    assert!(!stdout.contains("micro-batches"), "{stdout}");
    assert!(stdout.contains("attention_qkv_train#1 1 × 2,"), "{stdout}");
}

/// A layer of the model's own whose `train as` clause composes two std.nn `dense` layers:
/// pipelined training runs the clause's calls in its place (docs/language.md §6.4), so the
/// layer needs no `double_dense_train` of its own — and no implementation, since nothing
/// but pipelined training runs it. tests/reference/transformer_train.py's `two_dense`.
const TWO_DENSE: &str = r#"import std.nn.{dense, gelu, softmax};

/// Two dense layers in one call, for pipelined training only.
layer double_dense(x: f32[B, N], param w1: f32[N, H], param b1: f32[H], param w2: f32[H, M],
        param b2: f32[M]) -> y: f32[B, M]
    train as dense(dense(x, w1, b1), w2, b2) {
    cost {
        flops = 2 * N * H + 2 * H * M;
        weights = N * H + H + H * M + M;
        activations = N + M;
    }
}

model two_dense(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param w2: f32[7, 7] from "w2.npy";
    param c2: f32[7] from "c2.npy";
    param w3: f32[7, 3] from "w3.npy";
    param c3: f32[3] from "c3.npy";
    return softmax(dense(gelu(double_dense(x, w1, c1, w2, c2)), w3, c3));
}
"#;

/// [`TWO_DENSE`]'s `double_dense` trains pipelined as its clause's two `dense` layers, like
/// the NumPy reference: 8 SGD-momentum steps of 6 samples on `dev`, losses within 1e-5
/// relative and every weight (both of the clause's layers' too) within 1e-5 while each moves
/// by more than 1e-3 (`transformer_trains_like_numpy`).
#[test]
fn a_layer_trains_pipelined_as_its_train_as_clause_like_numpy() {
    let source = format!("{TWO_DENSE}{}", small_train_item("two_dense", "x", 6));
    let stdout = transformer_trains_like_numpy("two_dense", &source, &[], &SMALL_SGD);
    for layer in ["dense_train#1", "dense_train#2", "dense_train#3"] {
        assert!(stdout.contains(layer), "no {layer}: {stdout}");
    }
    assert!(!stdout.contains("double_dense"), "{stdout}");
}

/// Two branches from `h` joined by a sum that is no residual block (neither reads the other's
/// input): tests/reference/transformer_train.py's `diamond_mlp` (its `train` item is
/// `small_train_item`'s).
const DIAMOND_MLP: &str = r#"import std.nn.{dense, gelu, add, softmax};

model diamond_mlp(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param w2: f32[7, 7] from "w2.npy";
    param c2: f32[7] from "c2.npy";
    param w4: f32[7, 7] from "w4.npy";
    param c4: f32[7] from "c4.npy";
    param w3: f32[7, 3] from "w3.npy";
    param c3: f32[3] from "c3.npy";
    let h = dense(x, w1, c1);
    return softmax(dense(add(dense(h, w2, c2), gelu(dense(h, w4, c4))), w3, c3));
}
"#;

/// `add(dense(h, w2, c2), gelu(dense(h, w4, c4)))`: `h` feeds two branches (a relay before
/// the second reading, whose region adds the gelu branch's gradient of `h` to the other's),
/// and `add` gives both branches its dy, with nothing to sum at its first input. 8
/// SGD-momentum steps on `dev` like the reference (measured: losses to 7 digits, weights
/// within 1.1e-7); the reference that leaves the second branch's gradient of `h` out is more
/// than 1e-2 away, so a sum that dropped it would fail.
#[test]
fn two_branches_joined_by_a_sum_train_pipelined_like_numpy() {
    let source = format!("{DIAMOND_MLP}{}", small_train_item("diamond_mlp", "x", 6));
    let stdout = transformer_trains_like_numpy("diamond_mlp", &source, &[], &SMALL_SGD);
    assert!(stdout.contains("relay_train#1"), "{stdout}");
    let both = reference_losses("diamond_mlp", &SMALL_SGD);
    let one = reference_losses("diamond_mlp_one_branch", &SMALL_SGD);
    assert!(
        both.iter().zip(&one).any(|(a, b)| (a - b).abs() > 1e-2),
        "the second branch's gradient should matter: {both:?} {one:?}"
    );
}

/// A residual block that starts at the model's input: tests/reference/transformer_train.py's
/// `input_res_mlp` (its `train` item is `small_train_item`'s).
const INPUT_RES_MLP: &str = r#"import std.nn.{dense, relu, add, softmax};

model input_res_mlp(x: f32[B, 16]) -> f32[B, 4] {
    param w1: f32[16, 16] from "w1.npy";
    param c1: f32[16] from "c1.npy";
    param w2: f32[16, 4] from "w2.npy";
    param c2: f32[4] from "c2.npy";
    return softmax(dense(add(x, relu(dense(x, w1, c1))), w2, c2));
}
"#;

/// `add(x, relu(dense(x, w1, c1)))`: the host streams the model's input to the branch's first
/// layer and, on a stream of its own, to `add`'s region, and the backward sends `add`'s dy into
/// the branch alone (the model's input needs no gradient: the skip's is dropped, no sum at
/// the fork). 8 SGD-momentum steps of 6 samples on `dev`, run pipelined on the whole batch,
/// like the reference: every loss within 1e-5 relative and every weight within 1e-5 while each
/// moves by more than 1e-3 (`transformer_trains_like_numpy`; float32 sums of at most 16
/// products and 6 samples, rounding errors of order 1e-7). Measured: losses within 1.8e-7
/// relative, weights within 6.7e-8 while training moves them by 0.12 to 0.35; 2,048 simulated
/// cycles a step (forward 1,054, backward 994).
///
/// The reference without the skip in the forward is more than 1e-2 away, so a forward that
/// lost the model's input on the way to `add` would fail.
#[test]
fn a_residual_block_from_the_model_input_trains_pipelined_like_numpy() {
    let stdout = small_model_trains_whole_batches(
        "input_res_mlp",
        INPUT_RES_MLP,
        &["input_res_mlp_no_skip"],
    );
    assert!(stdout.contains("add_train#1"), "{stdout}");
}

/// A residual block inside another: tests/reference/transformer_train.py's `nested_res_mlp`
/// (its `train` item is `small_train_item`'s).
const NESTED_RES_MLP: &str = r#"import std.nn.{dense, gelu, relu, add, softmax};

model nested_res_mlp(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param w2: f32[7, 7] from "w2.npy";
    param c2: f32[7] from "c2.npy";
    param w4: f32[7, 7] from "w4.npy";
    param c4: f32[7] from "c4.npy";
    param w5: f32[7, 7] from "w5.npy";
    param c5: f32[7] from "c5.npy";
    param w3: f32[7, 3] from "w3.npy";
    param c3: f32[3] from "c3.npy";
    let h = dense(x, w1, c1);
    let g = gelu(dense(h, w2, c2));
    let i = add(g, relu(dense(g, w4, c4)));
    let o = add(h, dense(i, w5, c5));
    return softmax(dense(o, w3, c3));
}
"#;

/// `add(h, dense(add(g, relu(dense(g))), w5, c5))` with g = gelu(dense(h)) inside h's block:
/// the inner block's sum (`add_train_back` at g's fork) runs before g's dense layer's
/// backward, whose dr the outer sum at h's fork adds to the outer skip's dy (which waited
/// there, the whole batch, since `add_train_back` takes dy first). 8 SGD-momentum steps of 6
/// samples on `dev`, the whole batch at once, like the reference within
/// `transformer_trains_like_numpy`'s 1e-5 (measured: losses within 8.9e-8 relative, weights
/// within 7.5e-8 while training moves each by 0.089 or more; 5,255 simulated cycles a step:
/// forward 1,693, backward 3,562). The references that leave either skip's gradient out are
/// more than 1e-2 away, so a backward that lost either sum would fail.
#[test]
fn a_residual_block_inside_another_trains_pipelined_like_numpy() {
    let wrong = ["nested_res_mlp_no_inner", "nested_res_mlp_no_outer"];
    small_model_trains_whole_batches("nested_res_mlp", NESTED_RES_MLP, &wrong);
}

/// Two residual blocks from one result, one inside the other:
/// tests/reference/transformer_train.py's `shared_start_mlp` (its `train` item is
/// `small_train_item`'s).
const SHARED_START_MLP: &str = r#"import std.nn.{dense, gelu, add, softmax};

model shared_start_mlp(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param w2: f32[7, 7] from "w2.npy";
    param c2: f32[7] from "c2.npy";
    param w5: f32[7, 7] from "w5.npy";
    param c5: f32[7] from "c5.npy";
    param w3: f32[7, 3] from "w3.npy";
    param c3: f32[3] from "c3.npy";
    let h = dense(x, w1, c1);
    let i = add(h, gelu(dense(h, w2, c2)));
    let o = add(h, dense(i, w5, c5));
    return softmax(dense(o, w3, c3));
}
"#;

/// `add(h, dense(add(h, gelu(dense(h)))))`: h gets three gradients, the inner branch's and
/// both skips'. The outer block's sum runs at h's fork, and the inner block's on its `add`'s
/// region after it, before h's dense layer takes the total. 8 SGD-momentum steps of 6 samples
/// on `dev`, the whole batch at once, like the reference within
/// `transformer_trains_like_numpy`'s 1e-5 (measured: losses within 1.1e-7 relative, weights
/// within 1.2e-7 while training moves each by 0.11 or more; 2,786 simulated cycles a step:
/// forward 1,132, backward 1,654). The references that leave either skip's gradient out are
/// more than 1e-2 away: with the inner block's sum dropped, step 2's loss was 1.044648
/// against the reference's 1.047358.
#[test]
fn two_residual_blocks_from_one_result_train_pipelined_like_numpy() {
    let wrong = ["shared_start_mlp_no_inner", "shared_start_mlp_no_outer"];
    small_model_trains_whole_batches("shared_start_mlp", SHARED_START_MLP, &wrong);
}

/// Two pre-norm blocks as a transformer's are written, the first from the model's input:
/// tests/reference/transformer_train.py's `pre_norm_mlp` (its `train` item is
/// `small_train_item`'s).
const PRE_NORM_MLP: &str = r#"import std.nn.{dense, gelu, layernorm, add, softmax};

model pre_norm_mlp(x: f32[B, 16]) -> f32[B, 4] {
    param g1: f32[16] from "g1.npy";
    param b1: f32[16] from "b1.npy";
    param w1: f32[16, 16] from "w1.npy";
    param c1: f32[16] from "c1.npy";
    param g2: f32[16] from "g2.npy";
    param b2: f32[16] from "b2.npy";
    param w2: f32[16, 16] from "w2.npy";
    param c2: f32[16] from "c2.npy";
    param w4: f32[16, 16] from "w4.npy";
    param c4: f32[16] from "c4.npy";
    param w3: f32[16, 4] from "w3.npy";
    param c3: f32[4] from "c3.npy";
    let r = add(x, dense(layernorm(x, g1, b1), w1, c1));
    let o = add(r, dense(gelu(dense(layernorm(r, g2, b2), w2, c2)), w4, c4));
    return softmax(dense(o, w3, c3));
}
"#;

/// `x + dense(layernorm(x))` then `r + mlp(layernorm(r))`: the first block from the model's
/// input (its skip's gradient dropped), the second from its result (its sum at r's fork, wider
/// than one part), 8 SGD-momentum steps of 6 samples on `dev`, the whole batch at once, like
/// the reference within `transformer_trains_like_numpy`'s 1e-5, g and b included (measured:
/// losses within 1.6e-7 relative, weights within 2.2e-7 while training moves each by 0.036 or
/// more; `add_train#2` on 1 × 5, a fork of 5 parts; 5,557 simulated cycles a step: forward
/// 3,346, backward 2,211). The reference without the second skip's gradient is more than 1e-2
/// away.
#[test]
fn pre_norm_blocks_from_the_model_input_train_pipelined_like_numpy() {
    let stdout =
        small_model_trains_whole_batches("pre_norm_mlp", PRE_NORM_MLP, &["pre_norm_mlp_no_skip"]);
    assert!(stdout.contains("add_train#2"), "{stdout}");
}

/// A pre-norm attention block straight on the model's input, as a transformer's first block
/// is written: tests/reference/transformer_train.py's `att_input_mlp` (its `train` item is
/// `small_train_item`'s for 3 steps of two sequences, `TINY_GPT_SGD`'s settings).
const ATT_INPUT_MLP: &str = r#"import std.nn.{dense, layernorm, add, attention, softmax};

model att_input_mlp(x: f32[B, 16]) -> f32[B, 4] {
    param g: f32[16] from "g.npy";
    param b: f32[16] from "b.npy";
    param wq: f32[16, 16] from "wq.npy";
    param bq: f32[16] from "bq.npy";
    param wk: f32[16, 16] from "wk.npy";
    param bk: f32[16] from "bk.npy";
    param wv: f32[16, 16] from "wv.npy";
    param bv: f32[16] from "bv.npy";
    param wo: f32[16, 16] from "wo.npy";
    param bo: f32[16] from "bo.npy";
    param w3: f32[16, 4] from "w3.npy";
    param c3: f32[4] from "c3.npy";
    let a = layernorm(x, g, b);
    let r = add(x, dense(attention(dense(a, wq, bq), dense(a, wk, bk), dense(a, wv, bv),
        heads = 2, context = 8), wo, bo));
    return softmax(dense(r, w3, c3));
}
"#;

/// `x + dense(attention(q, k, v))` with q, k and v made from `layernorm(x)`: the host streams
/// x to the layernorm and to `add`; the branch parts at the layernorm (relays before k and v)
/// and joins at the fused attention's `pack_qkv`. 3 SGD-momentum steps of 16 tokens on `dev`,
/// the whole batch at once, like the reference within `transformer_trains_like_numpy`'s 1e-5
/// (the key biases' gradient is zero, so they are exempt from moving). Measured: losses
/// within 1.1e-7 relative, weights within 1.3e-7 while training moves the others by 0.021 or
/// more; attention on 1 × 2, one head per column; 23,527 simulated cycles a step (forward
/// 6,667, backward 16,860). The reference without the skip is more than 1e-2 away.
#[test]
fn a_pre_norm_attention_block_on_the_model_input_trains_pipelined_like_numpy() {
    let model = "att_input_mlp";
    let item = small_train_item(model, "x", 16).replace("steps = 8;", "steps = 3;");
    let source = format!("{ATT_INPUT_MLP}{item}");
    let stdout = transformer_trains_like_numpy(model, &source, &[], &TINY_GPT_SGD);
    assert!(
        stdout.contains("3 steps of 16 samples on dev, pipelined"),
        "{stdout}"
    );
    assert!(!stdout.contains("micro-batches"), "{stdout}");
    let right = reference_losses(model, &TINY_GPT_SGD);
    let wrong = reference_losses("att_input_mlp_no_skip", &TINY_GPT_SGD);
    assert!(
        right.iter().zip(&wrong).any(|(a, b)| (a - b).abs() > 1e-2),
        "the skip should matter: {right:?} {wrong:?}"
    );
}

/// `source` (the reference's `model`, with `small_train_item`'s settings) trains pipelined on
/// `dev` like the reference (`transformer_trains_like_numpy`), each step's batch of 6 at once;
/// and each of the references `wrong` (a trainer that leaves something out) is more than 1e-2
/// away from it at some step, so that the comparison would tell them apart. wsel's output.
fn small_model_trains_whole_batches(model: &str, source: &str, wrong: &[&str]) -> String {
    let source = format!("{source}{}", small_train_item(model, "x", 6));
    let stdout = transformer_trains_like_numpy(model, &source, &[], &SMALL_SGD);
    assert!(
        stdout.contains("8 steps of 6 samples on dev, pipelined"),
        "{stdout}"
    );
    assert!(!stdout.contains("micro-batches"), "{stdout}");
    let right = reference_losses(model, &SMALL_SGD);
    for one in wrong {
        let losses = reference_losses(one, &SMALL_SGD);
        assert!(
            right.iter().zip(&losses).any(|(a, b)| (a - b).abs() > 1e-2),
            "{one} should be told apart from {model}: {right:?} {losses:?}"
        );
    }
    stdout
}
