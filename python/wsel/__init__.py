"""wsel from Python: run, map, check and train ``.wse`` programs on the simulated wafer-scale
fabric, with NumPy arrays in and out.

>>> import numpy as np, wsel
>>> probs, report = wsel.run("examples/digits/main.wse", inputs={"x": x_test})
>>> wsel.map("examples/digits/main.wse")        # renders the placement inline in Jupyter
>>> trained = wsel.train("examples/digits/train.wse", steps=10)
>>> trained.weights["w1"], trained.losses       # NumPy arrays; trained.steps: a DataFrame

Every output value and cycle count comes from executing the program on the simulated fabric,
exactly as ``wsel run`` and ``wsel train`` do. A program that cannot be built or run raises
:class:`WselError` with the diagnostic's stable code, message and source span.

``program`` is a path to a ``.wse`` file, or ``.wse`` source text (any string with a line
break or a ``{``); source text resolves its imports and data paths against ``base_dir``
(default: the current folder).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Union

import numpy as np

from . import _wsel
from ._wsel import WselError

__all__ = [
    "WselError",
    "Diagnostic",
    "Placement",
    "RunResult",
    "TrainResult",
    "check",
    "import_onnx",
    "map",
    "run",
    "train",
]

ProgramLike = Union[str, "os.PathLike[str]"]

#: ``wsel run --max-cycles`` by default: stops a program that never ends.
DEFAULT_MAX_CYCLES = 1_000_000_000


@dataclass
class RunResult:
    """What :func:`run` gives: the model's result and the run's report.

    Unpacks as ``output, report = wsel.run(...)``.
    """

    #: The model's result, computed on the simulated fabric (float32 for ``f32`` results).
    output: np.ndarray
    #: The report as ``wsel run --report`` writes it (``docs/running.md`` lists every field).
    report: dict
    #: One line per warning of the build and the data (e.g. float64 inputs rounded to f32).
    warnings: list = field(default_factory=list)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.output, self.report))

    @property
    def layers(self) -> Any:
        """The per-layer table: a pandas DataFrame when pandas is installed, else a list of
        dicts (``report["run"]["layers"]``)."""
        return _table([_layer_row(layer) for layer in self.report["run"]["layers"]], "layer")

    @property
    def cycles(self) -> int:
        """Simulated cycles of the whole run."""
        return self.report["run"]["cycles"]


@dataclass
class TrainResult:
    """What :func:`train` gives: the trained weights, the loss of every step and the report.

    Unpacks as ``weights, losses = wsel.train(...)``.
    """

    #: The trained parameters by name, float32, shaped as declared (ready for
    #: ``wsel.run(..., params=weights)`` or ``np.save``).
    weights: dict
    #: The batch's mean loss at each step, before that step's update (float32), as the loss
    #: layer computed it on the fabric.
    losses: np.ndarray
    #: The report: the target, batch, micro-batch, phases, region, the activations kept for
    #: the backward pass, the total cycles, seconds and samples per second, and ``steps``,
    #: one dict per step (``docs/running.md``, "Training").
    report: dict
    #: One line per warning of the data (e.g. float64 inputs rounded to f32).
    warnings: list = field(default_factory=list)

    def __iter__(self) -> Iterator[Any]:
        return iter((self.weights, self.losses))

    @property
    def steps(self) -> Any:
        """The per-step table ``wsel train`` prints (loss, forward, loss, backward, update and
        stall cycles, samples per second): a pandas DataFrame indexed by step when pandas is
        installed, else a list of dicts (``report["steps"]``)."""
        return _table(self.report["steps"], "step")

    @property
    def cycles(self) -> int:
        """Simulated cycles of every step, the store's updates included."""
        return self.report["cycles"]


@dataclass
class Placement:
    """Where every layer of a model goes on the fabric (:func:`map`). Renders as its SVG
    picture in Jupyter; ``str()`` gives the table ``wsel map`` prints."""

    #: The placement table, as ``wsel map`` prints it.
    table: str
    #: The picture of the fabric with every layer's region.
    svg: str
    #: The whole placement (``wsel map --format json``).
    data: dict

    def _repr_svg_(self) -> str:
        return self.svg

    def __str__(self) -> str:
        return self.table

    @property
    def layers(self) -> list:
        """One dict per placed layer: name, kernel, origin, region size, SRAM per PE, ..."""
        return self.data["layers"]


@dataclass
class Diagnostic:
    """One diagnostic of :func:`check`, as ``wsel check --format json`` gives it."""

    code: str
    severity: str
    message: str
    #: The primary location: ``{"file", "start", "end", "line", "column", "message"}``.
    span: dict
    help: Optional[str] = None
    notes: list = field(default_factory=list)
    secondary: list = field(default_factory=list)

    def __str__(self) -> str:
        where = f"{self.span['file']}:{self.span['line']}:{self.span['column']}"
        return f"{where}: {self.severity}[{self.code}]: {self.message}"


def run(
    program: ProgramLike,
    inputs: Optional[Mapping[str, Any]] = None,
    params: Optional[Mapping[str, Any]] = None,
    *,
    target: Optional[str] = None,
    mode: Optional[str] = None,
    batch: Optional[int] = None,
    backend: str = "cranelift",
    copies: Union[int, str, None] = None,
    micro_order: Optional[str] = None,
    threads: int = 1,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    base_dir: Optional[ProgramLike] = None,
) -> RunResult:
    """Run a model on the simulated fabric, as ``wsel run`` does, with its data in memory.

    ``inputs`` maps model input names to arrays (inputs not given come from the program's
    ``run`` item); ``params`` maps ``param`` names to arrays (parameters not given are read
    from their files). ``target`` (``"dev"``, ``"wse2"``, ``"wse3"`` or a target ``.toml``),
    ``mode`` (``"pipelined"``, ``"streaming"``, ``"auto"``), ``batch``, ``copies`` and
    ``micro_order`` (the order of weight streaming's micro-batches: ``"auto"``, ``"micro"``
    or ``"layer"``, as ``--micro-order``) default to the ``run`` item's settings, then to
    ``wsel run``'s defaults. float64 inputs
    are rounded to float32 with a warning; parameters must have their declared dtype.

    Returns a :class:`RunResult` (``output, report = wsel.run(...)``). Raises
    :class:`WselError` when the program has errors, the data does not fit it, or the run
    fails on the fabric.
    """
    result, report, notes = _wsel.run(
        _program(program, base_dir),
        _arrays(inputs),
        _arrays(params),
        _settings(target, mode, batch, backend, copies, micro_order),
        threads,
        max_cycles,
    )
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return RunResult(output=result, report=json.loads(report), warnings=list(notes))


def train(
    program: ProgramLike,
    inputs: Optional[Mapping[str, Any]] = None,
    labels: Any = None,
    params: Optional[Mapping[str, Any]] = None,
    *,
    loss: Optional[str] = None,
    optimizer: Optional[str] = None,
    lr: Optional[float] = None,
    momentum: Optional[float] = None,
    beta1: Optional[float] = None,
    beta2: Optional[float] = None,
    eps: Optional[float] = None,
    steps: Optional[int] = None,
    epochs: Optional[int] = None,
    batch: Optional[int] = None,
    micro_batch: Optional[int] = None,
    recompute: Optional[str] = None,
    seed: Optional[int] = None,
    shuffle: Optional[bool] = None,
    target: Optional[str] = None,
    mode: Optional[str] = None,
    systems: Optional[int] = None,
    backend: str = "cranelift",
    threads: int = 1,
    max_cycles: int = DEFAULT_MAX_CYCLES,
    base_dir: Optional[ProgramLike] = None,
) -> TrainResult:
    """Train a model on the simulated fabric, as ``wsel train`` does, with its data in memory
    and nothing written to disk.

    ``inputs`` maps model input names to the training data, ``labels`` is the class of every
    sample (any integer dtype) for ``cross_entropy`` or the targets shaped like the model's
    result for ``mse``, ``params`` maps ``param`` names to initial weights; what is not given
    comes from the program's ``train`` item (else its ``run`` item) and the ``param`` files.
    Every setting (``loss``, ``optimizer`` ``"sgd"`` or ``"adam"``, ``lr``, ``momentum``,
    ``beta1``, ``beta2``, ``eps``, ``steps`` or ``epochs``, ``batch``, ``micro_batch``,
    ``recompute`` ``"auto"``, ``"never"`` or ``"always"``, ``seed``, ``shuffle``, ``target``,
    ``mode``, ``systems``) defaults to the ``train``
    item's, then to ``wsel train``'s default (``docs/running.md``, "Training"). Each step
    runs the forward and backward passes on the fabric; the store's optimizer updates the
    weights after it.

    Returns a :class:`TrainResult` (``weights, losses = wsel.train(...)``). Raises
    :class:`WselError` when the program has errors, a setting is out of range (e.g. E1106 for
    a learning rate that is not positive), the data does not fit the model, or a step fails
    on the fabric; no weights are returned then.
    """
    if steps is not None and epochs is not None:
        raise ValueError("give steps or epochs, not both")
    if optimizer not in (None, "sgd", "adam"):
        raise ValueError(f"optimizer {optimizer!r}: expected 'sgd' or 'adam'")
    if recompute not in (None, "auto", "never", "always"):
        raise ValueError(f"recompute {recompute!r}: expected 'auto', 'never' or 'always'")
    settings = {
        "target": target,
        "mode": mode,
        "loss": loss,
        "optimizer": optimizer,
        "lr": lr,
        "momentum": momentum,
        "beta1": beta1,
        "beta2": beta2,
        "eps": eps,
        "steps": steps,
        "epochs": epochs,
        "batch": batch,
        "micro_batch": micro_batch,
        "recompute": recompute,
        "seed": seed,
        "shuffle": shuffle,
        "systems": systems,
        "backend": backend,
        "threads": threads,
        "max_cycles": max_cycles,
    }
    weights, losses, report, notes = _wsel.train(
        _program(program, base_dir),
        _arrays(inputs),
        None if labels is None else np.asarray(labels),
        _arrays(params),
        settings,
    )
    for note in notes:
        warnings.warn(note, stacklevel=2)
    return TrainResult(
        weights=dict(weights), losses=losses, report=json.loads(report), warnings=list(notes)
    )


def map(
    program: ProgramLike,
    *,
    target: Optional[str] = None,
    mode: Optional[str] = None,
    batch: Optional[int] = None,
    copies: Union[int, str, None] = None,
    micro_order: Optional[str] = None,
    routes: bool = False,
    base_dir: Optional[ProgramLike] = None,
) -> Placement:
    """Map a model onto a target, as ``wsel map`` does, and return its :class:`Placement`
    (shown as a picture in Jupyter). The settings are :func:`run`'s; ``routes`` draws the
    routes between regions. Raises
    :class:`WselError` when the program has errors or does not fit the target."""
    table, svg, data = _wsel.map(
        _program(program, base_dir),
        _settings(target, mode, batch, "cranelift", copies, micro_order),
        routes,
    )
    return Placement(table=table, svg=svg, data=json.loads(data))


def check(program: ProgramLike, *, base_dir: Optional[ProgramLike] = None) -> list:
    """Check a program, as ``wsel check`` does (its ``param`` files included), and return its
    diagnostics (an empty list when it is clean). Raises :class:`WselError` only when the
    file cannot be read."""
    found, _rendered = _wsel.check(_program(program, base_dir))
    return [
        Diagnostic(
            code=d["code"],
            severity=d["severity"],
            message=d["message"],
            span=d["primary"],
            help=d.get("help"),
            notes=d.get("notes", []),
            secondary=d.get("secondary", []),
        )
        for d in json.loads(found)
    ]


def import_onnx(model: ProgramLike, output: ProgramLike) -> Path:
    """Translate an ONNX model into a ``.wse`` program at ``output``, with its weights as
    ``.npy`` files in a folder beside it (``wsel import``). Returns the program's path.
    Raises :class:`WselError` naming the node of an operator std.nn does not have."""
    _wsel.import_onnx(os.fspath(model), os.fspath(output))
    return Path(output)


def _program(program: ProgramLike, base_dir: Optional[ProgramLike]) -> dict:
    """A program as the native module takes it: a file, or source text with its folder."""
    if isinstance(program, str) and ("\n" in program or "{" in program):
        folder = Path(base_dir) if base_dir is not None else Path(".")
        return {"path": os.fspath(folder / "<string>"), "text": program}
    if base_dir is not None:
        raise TypeError("base_dir is only for source text; a file's paths resolve beside it")
    return {"path": os.fspath(program), "text": None}


def _arrays(arrays: Optional[Mapping[str, Any]]) -> dict:
    """Named arrays as NumPy arrays (lists and other array-likes are converted)."""
    return {name: np.asarray(value) for name, value in (arrays or {}).items()}


def _settings(target, mode, batch, backend, copies, micro_order) -> dict:
    return {
        "target": target,
        "mode": mode,
        "batch": batch,
        "backend": backend,
        "copies": copies,
        "micro_order": micro_order,
    }


def _table(rows: list, index: str) -> Any:
    """Rows as a pandas DataFrame indexed by ``index`` when pandas is installed, else as they
    are."""
    try:
        import pandas
    except ImportError:
        return rows
    return pandas.DataFrame(rows).set_index(index)


def _layer_row(layer: dict) -> dict:
    """One row of the per-layer table, with the figures ``wsel run`` prints."""
    return {
        "layer": layer["name"],
        "kernel": layer["kernel"],
        "origin": tuple(layer["origin"]),
        "rows": layer["rows"],
        "cols": layer["cols"],
        "pes": layer["pes"],
        "sram_bytes_per_pe": layer["sram_bytes_per_pe"],
        "estimated_cycles_per_sample": layer["estimated_cycles_per_sample"],
        "simulated_cycles_per_sample": layer["simulated_cycles_per_sample"],
        "utilisation": layer["activity"]["utilisation"],
    }
