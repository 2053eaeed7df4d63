"""examples/notebook.ipynb runs headless, every cell, without errors."""

import re

import nbformat
import pytest

from conftest import REPO

nbclient = pytest.importorskip("nbclient")


def test_the_example_notebook_runs():
    path = REPO / "examples" / "notebook.ipynb"
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    svg = [o for o in outputs if "image/svg+xml" in o.get("data", {})]
    assert svg, "the placement was not drawn"
    text = "".join(o.get("text", "") for o in outputs)
    assert "E0803" in text and "E0402" in text
    assert re.search(r"loss \d\.\d{3} → \d\.\d{3} in [\d,]+ cycles", text), "no training line"
