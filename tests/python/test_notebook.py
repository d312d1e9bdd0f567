"""examples/annbench.ipynb run headless in a fresh Jupyter kernel (nbconvert's
ExecutePreprocessor) against the real servers: every plotting cell must keep a rendered PNG
in the saved notebook, with no %matplotlib magic. The executed copy is saved as
artifacts/annbench.ipynb. And with matplotlib's inline backend active, a figure still shows
exactly once."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbconvert.preprocessors import ExecutePreprocessor
from test_end_to_end import server_urls

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "annbench.ipynb"
ARTIFACTS = ROOT / "artifacts"


def _execute(nb: nbformat.NotebookNode, cwd: Path) -> nbformat.NotebookNode:
    """Runs every cell in a new python3 kernel (it inherits this process's environment, so
    the server URLs and ANNBENCH_CACHE_DIR); a failing cell raises with its traceback."""
    ExecutePreprocessor(timeout=300, kernel_name="python3").preprocess(
        nb, {"metadata": {"path": str(cwd)}}
    )
    return nb


def _images(cell: nbformat.NotebookNode) -> int:
    return sum("image/png" in output.get("data", {}) for output in cell.get("outputs", []))


def _plotting(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and "annbench.plot." in cell.source


def test_example_notebook_runs_headless_with_a_png_per_plot(tmp_path, monkeypatch):
    for key, url in server_urls().items():
        monkeypatch.setenv(key, url)
    monkeypatch.delenv("MPLBACKEND", raising=False)
    # The notebook's scratch directory (tempfile.mkdtemp) lands under tmp_path, which pytest
    # cleans up, not in /tmp.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    sources = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
    assert "%matplotlib" not in sources and "pyplot" not in sources
    _execute(nb, tmp_path)
    ARTIFACTS.mkdir(exist_ok=True)
    nbformat.write(nb, ARTIFACTS / "annbench.ipynb")
    plots = [cell for cell in nb.cells if _plotting(cell)]
    assert len(plots) >= 9, "every plot kind the sweep supports"
    for cell in plots:
        assert _images(cell) == 1, (cell.source, cell.outputs)
    # The saved file keeps the images (what a reader of the exported notebook sees).
    saved = nbformat.read(ARTIFACTS / "annbench.ipynb", as_version=4)
    assert sum(_images(cell) for cell in saved.cells) == len(plots)


SMALL_FRAME = """\
import pandas as pd
import annbench
df = pd.DataFrame({"algorithm": ["mariadb"] * 3, "recall": [0.8, 0.9, 0.99],
                   "qps": [900.0, 500.0, 100.0]})
"""


def test_one_image_per_figure_with_or_without_inline_backend(tmp_path, monkeypatch):
    monkeypatch.delenv("MPLBACKEND", raising=False)
    new = nbformat.v4
    nb = new.new_notebook(
        cells=[
            new.new_code_cell(SMALL_FRAME + "annbench.plot.qps_recall(df)"),
            new.new_code_cell("%matplotlib inline\nannbench.plot.qps_recall(df)"),
            new.new_code_cell(
                "fig, (a, b) = annbench.plot.subplots(1, 2)\n"
                "annbench.plot.qps_recall(df, ax=a)\n"
                "annbench.plot.metric(df, y='qps', ax=b)\n"
                "fig"
            ),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    _execute(nb, tmp_path)
    assert [_images(cell) for cell in nb.cells] == [1, 1, 1], [c.outputs for c in nb.cells]
