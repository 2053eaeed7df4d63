"""Type stubs of the native module ``wsel._wsel`` (Rust, pyo3). Use the documented functions
of :mod:`wsel`; these are their building blocks."""

from typing import Optional, TypedDict

import numpy as np

class _Program(TypedDict):
    path: str
    text: Optional[str]

class _Settings(TypedDict):
    target: Optional[str]
    mode: Optional[str]
    batch: Optional[int]
    backend: str
    copies: int | str | None
    micro_order: Optional[str]

class WselError(Exception):
    """A program that cannot be built or run."""

    #: The stable diagnostic code (``"E0402"``), or None for problems outside the program.
    code: Optional[str]
    #: One sentence.
    message: str
    #: The primary location ``{"file", "start", "end", "line", "column", "message"}``, or None.
    span: Optional[dict]
    #: Every diagnostic, as ``wsel check --format json`` gives them.
    diagnostics: list[dict]

def run(
    program: _Program,
    inputs: dict[str, np.ndarray],
    params: dict[str, np.ndarray],
    settings: _Settings,
    threads: int,
    max_cycles: int,
) -> tuple[np.ndarray, str, list[str]]:
    """Result array, report JSON, warnings."""

class _TrainSettings(TypedDict):
    target: Optional[str]
    mode: Optional[str]
    loss: Optional[str]
    optimizer: Optional[str]
    lr: Optional[float]
    momentum: Optional[float]
    beta1: Optional[float]
    beta2: Optional[float]
    eps: Optional[float]
    steps: Optional[int]
    epochs: Optional[int]
    batch: Optional[int]
    micro_batch: Optional[int]
    seed: Optional[int]
    shuffle: Optional[bool]
    systems: Optional[int]
    backend: str
    threads: int
    max_cycles: int

def train(
    program: _Program,
    inputs: dict[str, np.ndarray],
    labels: Optional[np.ndarray],
    params: dict[str, np.ndarray],
    settings: _TrainSettings,
) -> tuple[list[tuple[str, np.ndarray]], np.ndarray, str, list[str]]:
    """Trained weights by name (in the model's order), losses, report JSON, warnings."""

def map(program: _Program, settings: _Settings, routes: bool) -> tuple[str, str, str]:
    """Placement table, SVG, placement JSON."""

def check(program: _Program) -> tuple[str, str]:
    """Diagnostics JSON, rendered diagnostics."""

def import_onnx(model: str, output: str) -> None:
    """Writes the program and its weights."""
