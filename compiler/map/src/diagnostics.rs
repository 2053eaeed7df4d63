//! The mapping pass's diagnostics (`E06xx`): one constructor per code, each saying when it
//! fires, and [`codes`] listing them for `docs/diagnostics.md`.
//!
//! Every diagnostic points at the layer call concerned (a secondary label may point at the
//! implementation or the `bind`), and its message carries the numbers: bytes needed against
//! bytes available, colors needed against colors available, the part counts that disagree.

use wsel_diagnostic::{Diagnostic, Location};
use wsel_ir::graph::SourceSpan;

/// A layer fits no region: at every region size its `where` conditions allow on this target,
/// the kernel's SRAM per PE exceeds the target's. The message gives the bytes needed at the
/// smallest candidate (the allowed size needing the least SRAM) and the bytes available.
pub const E0601: &str = "E0601";
/// The program needs more colors than the target's routers have: the message gives the
/// colors needed and available.
pub const E0602: &str = "E0602";
/// A connection cannot be routed: dead PEs or links cut every path, the producer's output
/// edge faces off the fabric, or the parts of one tensor would have to share a router.
pub const E0603: &str = "E0603";
/// The part counts of connected layers cannot agree: the producer's output parts must equal
/// every consumer's input parts, and no region sizes allowed by both layers' `where`
/// conditions (and SRAM) give equal counts.
pub const E0604: &str = "E0604";
/// No region size on this target satisfies a layer's `where` conditions (or a size, argument
/// or SRAM expression cannot be evaluated), whatever the SRAM.
pub const E0605: &str = "E0605";
/// A layer has no implementation for the requested execution mode.
pub const E0606: &str = "E0606";
/// The regions do not fit on the fabric together: every layer has an allowed size, but the
/// fabric (with its defects) has no room left for this one.
pub const E0607: &str = "E0607";
/// A tensor that must cross between regions, or to or from the host, is not bound to a port
/// of the layer that produces or consumes it.
pub const E0608: &str = "E0608";
/// A port's `split` does not match its side: a `west`/`east` port splits over `rows`, a
/// `north`/`south` port over `cols`.
pub const E0609: &str = "E0609";
/// Replication asked for (`--copies N`) cannot be done: the copies do not fit on the fabric
/// beside each other (each needs its own regions, routes and edge PEs), or `N` does not
/// divide the batch (every copy processes the same number of samples).
pub const E0610: &str = "E0610";
/// In weight-streaming mode, an activation passed from one layer to the next is not left by
/// the producer where the consumer takes it: one of them streams it through a port instead of
/// keeping it in SRAM, or they split it differently.
pub const E0611: &str = "E0611";
/// In weight-streaming mode, a layer's working set (its kernel's SRAM per PE for the whole
/// batch) does not fit a PE even on the largest region of the fabric.
pub const E0612: &str = "E0612";
/// In weight-streaming mode, the weight store cannot hold the model's weights: the message
/// names the layer whose weights no longer fit, and the bytes.
pub const E0613: &str = "E0613";
/// In weight-streaming mode, a layer's streaming implementation binds a weight to an array:
/// weights stream from the store into ports; nothing puts them into SRAM before a phase.
pub const E0614: &str = "E0614";
/// Layer-major micro-batches were asked for (`--micro-order layer`) but a layer cannot hold
/// its weights on the fabric between micro-batches: it has no streaming implementation that
/// holds them, or held they do not fit even at micro-batches of one sample.
pub const E0618: &str = "E0618";
/// In layer-major micro-batches, a phase that runs while a layer holds its weights on the
/// fabric (the rest of the layer's segment) does not fit a PE beside them, on any region where
/// every phase fits alone, even at micro-batches of one sample.
pub const E0619: &str = "E0619";
/// Weight streaming was asked for with copies of the pipeline (`--copies N`, N > 1): it runs
/// one layer at a time over its region and takes none.
pub const E0620: &str = "E0620";
/// In weight-streaming mode, a phase does not fit a PE beside the activations kept for later
/// phases: its own working set and the results made before it and read after it need more
/// SRAM per PE than the target has (`crate::kept_fit`).
pub const E0624: &str = "E0624";

/// Whether the mapping error `code` says the batch does not fit the SRAM in weight streaming:
/// a phase's working set (E0612) or a phase beside the activations kept for later phases
/// (E0624). A smaller micro-batch may fit.
pub fn batch_too_big(code: &str) -> bool {
    code == E0612 || code == E0624
}

/// Every mapping code with a one-line description, in code order.
pub fn codes() -> &'static [(&'static str, &'static str)] {
    &[
        (
            E0601,
            "layer fits no region: SRAM per PE needed at the smallest candidate exceeds the target's",
        ),
        (E0602, "too many colors: colors needed exceed the target's"),
        (E0603, "connection cannot be routed on the fabric"),
        (
            E0604,
            "part counts of connected layers cannot agree at any allowed region size",
        ),
        (
            E0605,
            "no region size on this target satisfies the layer's `where` conditions",
        ),
        (E0606, "layer has no implementation for the execution mode"),
        (E0607, "the regions do not fit on the fabric together"),
        (
            E0608,
            "a tensor crossing between regions is not bound to a port",
        ),
        (E0609, "a port's split does not match its side"),
        (
            E0610,
            "the copies of the pipeline asked for do not fit, or do not divide the batch",
        ),
        (
            E0611,
            "an activation between streamed layers is not kept in SRAM the way its consumer takes it",
        ),
        (
            E0612,
            "a streamed layer's working set exceeds the SRAM per PE even on the whole fabric",
        ),
        (E0613, "the weight store cannot hold the model's weights"),
        (
            E0614,
            "a streamed layer binds a weight to an array instead of streaming it",
        ),
        (
            E0618,
            "layer-major micro-batches asked for, but a layer cannot hold its weights on the fabric",
        ),
        (
            E0619,
            "layer-major micro-batches asked for, but a phase does not fit beside a layer's held weights",
        ),
        (
            E0620,
            "weight streaming asked for with copies of the pipeline",
        ),
        (
            E0624,
            "a streamed phase does not fit beside the activations kept for later phases",
        ),
    ]
}

fn at(span: &SourceSpan) -> Location {
    Location {
        file: span.file.clone(),
        span: span.span.clone(),
    }
}

/// E0601 at the call of `layer`.
pub(crate) fn sram_does_not_fit(
    layer: &str,
    call: &SourceSpan,
    needed: u64,
    rows: u32,
    cols: u32,
    available: u32,
) -> Diagnostic {
    Diagnostic::error(
        E0601,
        format!(
            "layer `{layer}` fits no region: it needs {needed} bytes of SRAM per PE at its \
             smallest candidate ({rows} × {cols} PEs), the target has {available}"
        ),
        at(call),
        format!("needs {needed} bytes per PE, {available} available"),
    )
    .with_help(
        "use a target with more SRAM per PE, a smaller layer, or the streaming mode if the layer \
         has a streaming implementation",
    )
}

/// E0602 at the call of `layer`, whose streams were the first that found no free color.
pub(crate) fn too_many_colors(
    layer: &str,
    call: &SourceSpan,
    needed: u32,
    available: u32,
    layer_streams: u32,
) -> Diagnostic {
    Diagnostic::error(
        E0602,
        format!(
            "the program needs {needed} colors, the target has {available}: the streams of \
             layer `{layer}` find no free color"
        ),
        at(call),
        format!("{needed} colors needed here, {available} available"),
    )
    .with_note(format!(
        "the region of `{layer}` alone carries {layer_streams} streams that meet in its routers \
         (two colors per pair of neighbour ports, one per multicast port)"
    ))
}

/// E0603 at the call of the consuming (or producing) `layer`.
pub(crate) fn unroutable(layer: &str, call: &SourceSpan, what: &str, why: &str) -> Diagnostic {
    Diagnostic::error(
        E0603,
        format!("cannot route {what} of layer `{layer}`: {why}"),
        at(call),
        "this connection cannot be routed",
    )
}

/// E0604 at the call of the consumer `layer`.
pub(crate) fn parts_disagree(
    layer: &str,
    call: &SourceSpan,
    detail: &str,
    bind: Option<&SourceSpan>,
) -> Diagnostic {
    let d = Diagnostic::error(
        E0604,
        format!("the part counts of layer `{layer}` and the layers it is connected to cannot agree: {detail}"),
        at(call),
        "no region sizes give matching part counts",
    )
    .with_help("a producer's output parts must equal its consumers' input parts: change a `where` condition or a tensor's size so that a common count exists");
    match bind {
        Some(span) => d.with_secondary(at(span), "the parts of this bind"),
        None => d,
    }
}

/// E0605 at the call of `layer`.
pub(crate) fn no_allowed_size(layer: &str, call: &SourceSpan, detail: &str) -> Diagnostic {
    Diagnostic::error(
        E0605,
        format!("no region size for layer `{layer}` on this target is allowed: {detail}"),
        at(call),
        "no allowed region size",
    )
}

/// E0606 at the call of `layer`.
pub(crate) fn no_implementation(layer: &str, call: &SourceSpan, mode: &str) -> Diagnostic {
    Diagnostic::error(
        E0606,
        format!("layer `{layer}` has no {mode} implementation"),
        at(call),
        format!("no `{mode}` implementation"),
    )
    .with_help("add an implementation for this mode to the layer, or map in the other mode")
}

/// E0607 at the call of `layer`, the first that found no room.
pub(crate) fn does_not_fit_fabric(
    layer: &str,
    call: &SourceSpan,
    rows: u32,
    cols: u32,
    used: u64,
    live: u64,
) -> Diagnostic {
    Diagnostic::error(
        E0607,
        format!(
            "no room on the fabric for layer `{layer}` ({rows} × {cols} PEs): the layers before \
             it already use {used} of {live} live PEs"
        ),
        at(call),
        "no room left for this region",
    )
    .with_help("use a larger target, or smaller layers")
}

/// E0607 at the call of `layer` when no size its conditions allow fits in the PEs the
/// target's defects leave alive, even with the fabric to itself.
pub(crate) fn defects_leave_no_room(
    layer: &str,
    call: &SourceSpan,
    needed: u64,
    live: u64,
    target: &wsel_target::Target,
) -> Diagnostic {
    Diagnostic::error(
        E0607,
        format!(
            "no room on the fabric for layer `{layer}`: its smallest allowed region has {needed} \
             PE{}, but the target's defect map leaves only {live} of its {} × {} PEs alive",
            if needed == 1 { "" } else { "s" },
            target.width,
            target.height
        ),
        at(call),
        "does not fit in the live PEs",
    )
    .with_help("use a target with fewer dead PEs, or a layer that allows smaller regions")
}

/// E0608 at the call of `layer`.
pub(crate) fn tensor_not_bound(layer: &str, call: &SourceSpan, tensor: &str) -> Diagnostic {
    Diagnostic::error(
        E0608,
        format!(
            "layer `{layer}` does not bind `{tensor}` to a port, but `{tensor}` must stream between \
             regions"
        ),
        at(call),
        format!("`{tensor}` crosses between regions here"),
    )
    .with_help(format!(
        "add `bind {tensor} to port ...` to the layer's implementation"
    ))
}

/// E0609 at the `bind`.
pub(crate) fn split_side_mismatch(
    layer: &str,
    call: &SourceSpan,
    bind: &SourceSpan,
    port: &str,
    side: &str,
    expected: &str,
) -> Diagnostic {
    Diagnostic::error(
        E0609,
        format!(
            "port `{port}` of layer `{layer}` is on the {side} side, so its tensor must be split \
             over `{expected}`"
        ),
        at(bind),
        format!("split over `{expected}` here"),
    )
    .with_secondary(at(call), "in this layer call")
}

/// E0610 at the call of the model's first layer: `asked` copies, of which `fitted` fit.
pub(crate) fn copies_do_not_fit(call: &SourceSpan, asked: u32, fitted: u32) -> Diagnostic {
    Diagnostic::error(
        E0610,
        format!(
            "{asked} copies of the pipeline were asked for, but only {fitted} fit on the fabric \
             beside each other"
        ),
        at(call),
        format!("copy {} of this pipeline finds no room", fitted + 1),
    )
    .with_note(
        "every copy needs a tile of its own for its regions and the routes between them, and \
         ways to the fabric's edge for its inputs and result",
    )
    .with_help("ask for fewer copies, or let the mapper choose (`--copies auto`)")
}

/// E0610 at the call of the model's first layer: `asked` copies cannot share `batch` samples.
pub(crate) fn copies_do_not_divide(call: &SourceSpan, asked: u32, batch: u64) -> Diagnostic {
    Diagnostic::error(
        E0610,
        format!("{asked} copies of the pipeline cannot share a batch of {batch} samples evenly"),
        at(call),
        "this pipeline would be copied",
    )
    .with_help("choose a number of copies that divides the batch, or change the batch")
}

/// E0611 at the call of `layer`, about its input `tensor`.
pub(crate) fn resident_mismatch(
    layer: &str,
    call: &SourceSpan,
    tensor: &str,
    why: &str,
) -> Diagnostic {
    Diagnostic::error(
        E0611,
        format!(
            "in weight-streaming mode `{layer}` cannot take its input `{tensor}` from SRAM: {why}"
        ),
        at(call),
        format!("`{tensor}` is not where this layer takes it"),
    )
    .with_note(
        "weight streaming runs one layer at a time and keeps the batch's activations in SRAM \
         between layers, in std.resident's layout (`bind x to array xb split [cols, rows];`)",
    )
}

/// E0612 at the call of `layer`, whose kernel needs `needed` bytes per PE at the least: on
/// `rows × cols`, the region of the fabric where its conditions hold that needs the fewest.
pub(crate) fn working_set_too_big(
    layer: &str,
    call: &SourceSpan,
    needed: u64,
    rows: u32,
    cols: u32,
    available: u32,
) -> Diagnostic {
    Diagnostic::error(
        E0612,
        format!(
            "layer `{layer}` does not fit the fabric even streamed: its working set needs \
             {needed} bytes of SRAM per PE on the best region its conditions allow ({rows} × \
             {cols} PEs), the target has {available}"
        ),
        at(call),
        format!("needs {needed} bytes per PE, {available} available"),
    )
    .with_help("use a smaller batch (`--batch`), a target with more SRAM, or a narrower layer")
}

/// E0612 at the call of `layer`, which fits some region on its own but, on the region every
/// phase's conditions allow where the largest working set is least (`rows × cols`), needs the
/// most: `needed` bytes per PE against `available`.
pub(crate) fn shared_working_set_too_big(
    layer: &str,
    call: &SourceSpan,
    needed: u64,
    rows: u32,
    cols: u32,
    available: u32,
) -> Diagnostic {
    Diagnostic::error(
        E0612,
        format!(
            "layer `{layer}` does not fit the region the streamed model's phases share: on the \
             best region every phase's conditions allow ({rows} × {cols} PEs) its working set \
             needs {needed} bytes of SRAM per PE, the target has {available}"
        ),
        at(call),
        format!("needs {needed} bytes per PE, {available} available"),
    )
    .with_help("use a smaller batch (`--batch`), a target with more SRAM, or a narrower layer")
}

/// E0613 at the call of `layer`, the first whose weights do not fit the store after those
/// before it: `needed` bytes up to and with it, `capacity` in the store.
pub(crate) fn store_too_small(
    layer: &str,
    call: &SourceSpan,
    needed: u64,
    capacity: u64,
) -> Diagnostic {
    Diagnostic::error(
        E0613,
        format!(
            "the weight store cannot hold the weights up to layer `{layer}`: they take {needed} \
             bytes, the store holds {capacity}"
        ),
        at(call),
        format!("{needed} bytes of weights up to here, {capacity} in the store"),
    )
    .with_help(
        "use a target with a larger weight store (`weight_store.capacity_bytes`), or a smaller \
         model",
    )
}

/// E0614 at the call of `layer`, whose streaming implementation binds weight `tensor` to an
/// array.
pub(crate) fn weight_in_array(layer: &str, call: &SourceSpan, tensor: &str) -> Diagnostic {
    Diagnostic::error(
        E0614,
        format!(
            "in weight-streaming mode `{layer}` cannot take its weight `{tensor}` from an array: \
             weights stream in from the weight store"
        ),
        at(call),
        format!("`{tensor}` is bound to an array"),
    )
    .with_help(format!(
        "bind `{tensor}` to an `in` port of the kernel in the layer's `streaming` \
         implementation, and receive it there"
    ))
}

/// E0618 at the call of `layer`, which has no streaming implementation that holds its
/// weights (`hold = true`).
pub(crate) fn no_held_implementation(layer: &str, call: &SourceSpan) -> Diagnostic {
    Diagnostic::error(
        E0618,
        format!(
            "layer-major micro-batches need `{layer}`'s weights held on the fabric between \
             micro-batches, and its layer has no streaming implementation that holds them"
        ),
        at(call),
        "no streaming implementation with `hold = true`",
    )
    .with_help(format!(
        "use `--micro-order micro`, or give `{layer}`'s layer a `_held` twin whose streaming \
         implementation's kernel takes `hold = true` (std.nn's `dense_held`, \
         `layernorm_held`, `embedding_held`)"
    ))
}

/// E0618 for layer-major order asked for, where a held layer fits no region at any
/// micro-batch size: `why` is the mapper's diagnostic at `size` samples (the closest,
/// `crate::layer_major`), naming the layer and the bytes; `one_a_column` when `size` takes
/// at most one sample a column of the fabric (else it is the fewest every layer's conditions
/// allow, as attention's whole sequences).
pub(crate) fn held_weights_do_not_fit(
    why: &Diagnostic,
    size: u64,
    one_a_column: bool,
) -> Diagnostic {
    let at = match size {
        1 => "even at micro-batches of one sample".to_string(),
        _ if one_a_column => {
            format!("at any micro-batch size (at {size} samples, one a column at most)")
        }
        _ => format!(
            "at any micro-batch size (at {size} samples, the fewest its layers' conditions allow)"
        ),
    };
    Diagnostic {
        code: E0618,
        message: format!(
            "`--micro-order layer` cannot hold every layer's weights on the fabric between \
             micro-batches, {at}: {}",
            why.message
        ),
        notes: Vec::new(),
        help: Some(
            "use `--micro-order micro` (each micro-batch streams the weights again), or a target \
             with more SRAM"
                .into(),
        ),
        ..why.clone()
    }
}

/// Who holds weights beside which phase, for E0619: the holding layer and its call, the phase
/// (its index and layer name), and the samples of a micro-batch.
pub(crate) struct Beside<'a> {
    pub holder: &'a str,
    pub call: &'a SourceSpan,
    pub phase: usize,
    pub phase_name: &'a str,
    pub micro: u64,
}

/// E0619 at the call of the layer that holds `held` bytes of weights per PE, beside which a
/// phase needs `own` bytes of its own on a `rows × cols` region of PEs with `sram` bytes.
pub(crate) fn phase_beside_held(
    at_layer: Beside<'_>,
    (held, own): (u64, u64),
    (rows, cols): (u32, u32),
    sram: u32,
) -> Diagnostic {
    let Beside {
        holder,
        call,
        phase,
        phase_name,
        micro,
    } = at_layer;
    let samples = if micro == 1 { "sample" } else { "samples" };
    Diagnostic::error(
        E0619,
        format!(
            "in layer-major order `{holder}` holds {held} bytes of weights per PE between \
             micro-batches, and phase {phase} (`{phase_name}`), which runs beside them, needs \
             {own} bytes of its own: {} bytes per PE at best ({rows} × {cols} PEs, micro-batches \
             of {micro} {samples}), the target has {sram}",
            held + own
        ),
        at(call),
        format!("holds {held} bytes per PE here"),
    )
    .with_note(
        "a layer holds its weights from its first micro-batch until every micro-batch has run \
         its segment (the phases from the unparks before it to the parks after it); each of \
         those phases keeps its arrays beside the held ones",
    )
    .with_help(
        "use `--micro-order micro` (each micro-batch streams the weights again), or a target \
         with more SRAM per PE",
    )
}

/// E0620 at the call of the model's first layer: `copies` copies asked for in weight
/// streaming.
pub fn streaming_takes_no_copies(call: &SourceSpan, copies: u32) -> Diagnostic {
    Diagnostic::error(
        E0620,
        format!(
            "{copies} copies of the pipeline were asked for in weight-streaming mode, which \
             runs one layer at a time over its region and takes no copies"
        ),
        at(call),
        "the model's first layer",
    )
    .with_help("leave out `--copies` in streaming mode, or ask for `--mode pipelined`")
}

/// The phase of E0624 and the results kept beside it: its index (its graph layer), its
/// layer's name and call, and the largest kept results (`` `name` bytes ``, joined).
pub(crate) struct KeptBeside<'a> {
    pub phase: usize,
    pub name: &'a str,
    pub call: &'a SourceSpan,
    pub largest: &'a str,
}

/// E0624 at the call of the layer of phase `at_phase`, which needs `own` bytes per PE of its
/// own beside `kept` bytes of results kept for later phases, on a `rows × cols` region of PEs
/// with `sram` bytes.
pub(crate) fn kept_do_not_fit(
    at_phase: KeptBeside<'_>,
    (kept, own): (u64, u64),
    (rows, cols): (u32, u32),
    sram: u32,
) -> Diagnostic {
    let KeptBeside {
        phase,
        name,
        call,
        largest,
    } = at_phase;
    Diagnostic::error(
        E0624,
        format!(
            "phase {phase} (`{name}`) does not fit beside the activations kept for later \
             phases: {kept} bytes per PE of kept results and {own} bytes of its own working set \
             need {} bytes per PE ({rows} × {cols} PEs), the target has {sram}",
            kept + own
        ),
        at(call),
        format!("{} bytes per PE needed while this phase runs", kept + own),
    )
    .with_note(format!(
        "a result stays in SRAM from the phase that makes it to the last phase that reads it; \
         the largest kept beside this phase: {largest}"
    ))
    .with_help(
        "use a smaller batch or micro-batches (`--micro-batch`), a target with more SRAM per \
         PE, or, in training, let the backward pass recompute activations (`--recompute auto`)",
    )
}
