"""The figures :mod:`annbench.plot` returns: built without pyplot (safe under Agg, in
threads, scripts and servers), shown as PNG by any IPython kernel, saved as PNG or SVG by
the file's extension; and the Axes a plot draws into."""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any, Union

from matplotlib.axes import Axes
from matplotlib.figure import Figure, SubFigure

from .._annbench import ConfigError, IoError

PathLike = Union[str, "os.PathLike[str]"]
FIGSIZE: tuple[float, float] = (8.0, 5.5)
DPI = 100
FORMATS = (".png", ".svg")
#: Titles longer than this (characters) wrap before their parenthesis.
TITLE_CHARS = 60


class PlotFigure(Figure):
    """A matplotlib ``Figure`` that a Jupyter (IPython) kernel shows as a PNG by itself, with
    no pyplot and no ``%matplotlib inline``, so a notebook run headless keeps its plots. Where
    matplotlib's inline backend is active, its own PNG formatter draws the figure instead:
    one image either way."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=self.get_dpi())
        return buffer.getvalue()


def subplots(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize: tuple[float, float] | None = None,
    dpi: int = DPI,
    **kwargs: Any,
) -> tuple[PlotFigure, Any]:
    """A figure and its grid of Axes, as matplotlib's ``Figure.subplots`` (``sharex``,
    ``sharey``, ``squeeze``, ... pass through), to draw several plots into with ``ax=``. The
    figure shows itself in notebooks like every figure of :mod:`annbench.plot`. Default size:
    6 x 4.5 inches per Axes."""
    if nrows < 1 or ncols < 1:
        raise ConfigError(f"subplots({nrows}, {ncols}): give at least one row and one column")
    size = figsize if figsize is not None else (6.0 * ncols, 4.5 * nrows)
    fig = PlotFigure(figsize=size, dpi=dpi, layout="constrained")
    return fig, fig.subplots(nrows, ncols, **kwargs)


def target(
    ax: Axes | None, figsize: tuple[float, float], dpi: int, what: str
) -> tuple[Figure, Axes]:
    """The figure and Axes to draw into: ``ax`` and its figure when given (``figsize`` and
    ``dpi`` are then the figure's own), else a new :class:`PlotFigure` with one Axes."""
    if ax is None:
        fig = PlotFigure(figsize=figsize, dpi=dpi, layout="constrained")
        return fig, fig.add_subplot()
    if not isinstance(ax, Axes):
        raise ConfigError(
            f"{what}: ax= takes a matplotlib Axes (e.g. from annbench.plot.subplots()), "
            f"not {type(ax).__name__}"
        )
    return root_figure(ax), ax


def root_figure(ax: Axes) -> Figure:
    """The top-level figure of ``ax`` (through a subfigure), the one that is saved."""
    fig = ax.figure
    return fig.figure if isinstance(fig, SubFigure) else fig


def check_path(path: PathLike | None) -> None:
    """A bad file name fails before anything is drawn."""
    if path is None:
        return
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise ConfigError(
            f"cannot save a plot as '{os.fspath(path)}': use a .png or .svg file name"
        )


def save(fig: Figure, path: PathLike) -> None:
    """Saves ``fig`` as PNG or SVG, chosen by ``path``'s extension, at the figure's dpi,
    atomically as annbench's Rust writers do: a hidden temp file beside ``path``, synced,
    then renamed over it, so a failed write (a full disk) leaves an old file whole. A FIFO,
    device or directory at ``path`` is refused, never replaced."""
    check_path(path)
    target = os.fspath(path)
    suffix = os.path.splitext(target)[1].lower()
    if os.path.exists(target) and not os.path.isfile(target):
        raise ConfigError(
            f"cannot write the plot to {target}: it is not a regular file, and annbench "
            "replaces only regular files; give another file name"
        )
    directory, name = os.path.split(target)
    tmp = os.path.join(directory or ".", f".{name}.tmp-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
        with os.fdopen(fd, "wb") as out:
            fig.savefig(out, format=suffix[1:], dpi=fig.get_dpi())
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except OSError as err:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise IoError(f"cannot write the plot to {target}: {err.strerror or err}") from err
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def finish(fig: Figure, ax: Axes, title: str, path: PathLike | None) -> Figure:
    """Title and grid on ``ax``; saves the whole figure when ``path`` is given. A long title
    puts its trailing ``(dataset, k=10)`` on a second line rather than run off the figure."""
    head, sep, tail = title.rpartition(" (")
    if len(title) > TITLE_CHARS and sep and head:
        title = f"{head}\n({tail}"
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    if path is not None:
        save(fig, path)
    return fig
