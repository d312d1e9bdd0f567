"""``annbench.run``: a sweep of build and query parameters, as ``annbench run`` does it,
with progress bars in notebooks and terminals, returning the measured points."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Union

import pandas as pd

from . import _annbench
from .frames import rows_to_frame
from .reports import results_dir

PathLike = Union[str, "os.PathLike[str]"]
Grid = Union[Mapping[str, Union[Any, Sequence[Any]]], Sequence[str], str, None]
Callback = Callable[[dict[str, Any]], None]

__all__ = ["algorithms", "run"]


def algorithms() -> list[dict[str, Any]]:
    """The algorithms :func:`run` accepts, as the registry declares them: one dict per
    algorithm with ``name``, ``display``, ``summary``, ``server``, ``max_dimension``,
    ``build`` and ``query`` (lists of parameters: ``name``, ``values``, ``required``,
    ``default``, ``auto``, ``help``) and ``rules`` (e.g. ``"ef_construction >= 2*M"``)."""
    result: list[dict[str, Any]] = json.loads(_annbench.algorithms_json())
    return result


def run(
    dataset: PathLike,
    algorithms: str | Sequence[str],
    *,
    config: PathLike | Sequence[PathLike] | None = None,
    build: Grid = None,
    query: Grid = None,
    count: int = 10,
    runs: int = 6,
    min_time: float = 1.0,
    target_ci: float | None = None,
    max_time: float | None = None,
    rebuilds: int = 1,
    order: str = "rounds",
    clients: int | Iterable[int] = (1,),
    results: PathLike | None = None,
    data_dir: PathLike | None = None,
    force: bool = False,
    label: str | None = None,
    timeout: float | None = None,
    progress: bool | Callback = True,
    keep_going: bool = False,
    expect: str | None = None,
    **servers: str | None,
) -> pd.DataFrame:
    """Runs a sweep and returns one row per point of the grid (measured now, or already
    stored and skipped unless ``force``), with the columns of :func:`annbench.results`.

    ``algorithms``: one name or a list; :func:`algorithms` lists them with their
    parameters (``mariadb``, ``pgvector``, ``pgvector_ivfflat``, ...).
    ``config``: YAML grid file(s) replacing an algorithm's built-in grid. ``build`` /
    ``query`` narrow the grid like ``--build`` / ``--query``: ``{"M": [8, 16]}`` or
    ``["M=8,16"]``. ``clients``: concurrent connections, e.g. ``(1, 2, 4)``.

    Measurement (docs/methodology.md): every point gets a recall pass, then at least ``runs``
    timed passes of at least ``min_time`` seconds each (0: one pass over the queries); its
    ``qps`` is the median pass with a 95% interval (``qps_ci_low``, ``qps_ci_high``).
    ``target_ci`` (e.g. 0.02) adds passes until the interval lies within +-2% of the median;
    points flagged for interference, stalls or a wide interval are measured again; both stop
    once a point's timed passes have lasted ``max_time`` seconds (default
    ``2 * runs * min_time``). ``rebuilds`` builds
    every index that many times and folds the build spread into the interval. ``order``:
    ``"rounds"`` (pass 1 of every point of a build, then pass 2...) or ``"points"``. Server URLs
    are keywords named after their database (``mariadb="mysql://..."``, ``postgres=...``: one
    per database, the names of ``annbench run``'s URL flags); each defaults to
    ``$ANNBENCH_<DATABASE>_URL`` and the servers that ``scripts/databases.sh`` started. ``timeout``: longest index build, in seconds.
    ``progress``: tqdm bars (True), nothing (False), or a callable given each event dict.
    ``keep_going``: go on after a failing point, build or algorithm, then raise
    ``BackendError`` listing what failed (everything else is stored; a rerun measures only what
    is missing). Without it the first failure raises.
    ``expect``: ``"cached"`` or ``"io-bound"``, what the points' storage reads should say
    (the ``storage`` column, docs/server-cost.md): each point that says the other, and the
    points where the reads could not be measured, give a ``UserWarning`` at the end.

    The GIL is released while the sweep runs. Ctrl-C (KeyboardInterrupt) stops it at the
    next check (within about 0.1 s); every point measured before stays stored."""
    names = [algorithms] if isinstance(algorithms, str) else list(algorithms)
    configs = _paths(config)
    client_counts = [clients] if isinstance(clients, int) else list(clients)
    bars = _Bars() if progress is True else None
    callback: Callback | None = bars if bars is not None else (progress or None)  # type: ignore[assignment]
    try:
        text = _annbench.run_sweep(
            os.fspath(dataset),
            names,
            configs,
            _overrides(build, "build"),
            _overrides(query, "query"),
            count,
            runs,
            client_counts,
            results_dir(results),
            None if data_dir is None else os.fspath(data_dir),
            force,
            label,
            {key: url for key, url in servers.items() if url is not None},
            timeout,
            callback,
            min_time=min_time,
            target_ci=target_ci,
            max_time=max_time,
            rebuilds=rebuilds,
            order=order,
            keep_going=keep_going,
            expect=expect,
        )
    finally:
        if bars is not None:
            bars.close()
    return rows_to_frame(json.loads(text))


def _paths(config: PathLike | Sequence[PathLike] | None) -> list[str]:
    if config is None:
        return []
    if isinstance(config, (str, os.PathLike)):
        return [os.fspath(config)]
    return [os.fspath(c) for c in config]


def _overrides(grid: Grid, what: str) -> list[str]:
    """``{"M": [8, 16], "ef": 40}`` or ``["M=8,16"]`` -> ``["M=8,16", "ef=40"]``."""
    if grid is None:
        return []
    if isinstance(grid, str):
        return [grid]
    if isinstance(grid, Mapping):
        out = []
        for key, values in grid.items():
            seq = values if isinstance(values, (list, tuple, range)) else [values]
            out.append(f"{key}={','.join(_value(v) for v in seq)}")
        return out
    if isinstance(grid, Sequence) and all(isinstance(item, str) for item in grid):
        return list(grid)
    raise _annbench.ConfigError(
        f"{what}={grid!r}: give a dict of parameter values like {{'M': [8, 16]}} "
        f"or strings like 'M=8,16' (parameters: annbench.algorithms())"
    )


def _value(v: object) -> str:
    return str(v).lower() if isinstance(v, bool) else str(v)


class _Bars:
    """tqdm bars driven by sweep events: one over the points of the sweep, one over the
    passes of the current build; warnings are printed above the bars."""

    def __init__(self) -> None:
        from tqdm.auto import tqdm

        self._tqdm = tqdm
        # In a terminal or a notebook: bars. Redirected to a file (a log, CI): no bars, whose
        # carriage returns and escape codes would fill it, but one plain line per point.
        self._disable: bool | None = False if tqdm.__module__.endswith("notebook") else None
        self.points = tqdm(
            total=0, desc="points", unit="pt", position=0, disable=self._disable
        )
        self.passes: Any = None

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event["kind"]
        if kind == "sweep_started":
            # The whole sweep's points are known before the first build.
            self.points.total = event["points"]
            self.points.refresh()
        elif kind == "algorithm_started" and not self.points.total:
            self.points.total = event["points"]
            self.points.refresh()
        elif kind in ("load_started", "build_started", "ground_truth"):
            what = {
                "load_started": "loading",
                "build_started": "building index",
                "ground_truth": "computing ground truth",
            }[kind]
            detail = event.get("build_args") or event.get("algorithm") or ""
            self.points.set_postfix_str(f"{what} {detail}".strip())
        elif kind == "build_progress" and event["percent"] is not None:
            self.points.set_postfix_str(
                f"building index {event['build_args']}: {event['phase']} {event['percent']:.0f}%"
            )
        elif kind == "ground_truth_progress" and event["total"]:
            self.points.set_postfix_str(
                f"computing ground truth {100 * event['done'] / event['total']:.0f}%"
            )
        elif kind == "measure_started":
            self._close_passes()
            desc = f"{event['algorithm']}({event['build_args']})"
            self.passes = self._tqdm(
                total=event["passes"],
                desc=desc,
                unit="pass",
                leave=False,
                position=1,
                disable=self._disable,
            )
        elif kind == "pass_finished" and self.passes is not None:
            # Extra passes (re-measuring, --target-ci) grow the bar; events may be thinned.
            if self.passes.n >= self.passes.total:
                self.passes.total = self.passes.n + 1
            self.passes.update(1)
            self.passes.set_postfix_str(f"{event['query_args']} {event['qps']:.0f} QPS")
        elif kind in ("point_finished", "point_skipped"):
            self.points.update(1)
            if kind == "point_finished":
                mark = "~" if event["flags"] else ""
                text = f"recall {event['recall']:.3f}, {mark}{event['qps']:.0f} QPS"
                self.points.set_postfix_str(text)
                if self.points.disable:
                    self._tqdm.write(
                        f"points {self.points.n}/{self.points.total}: {event['algorithm']}"
                        f"({event['build_args']}, {event['query_args']}) x{event['clients']}: "
                        f"{text}"
                    )
        elif kind == "warning":
            self._tqdm.write(f"warning: {event['message']}")

    def _close_passes(self) -> None:
        if self.passes is not None:
            self.passes.close()
            self.passes = None

    def close(self) -> None:
        self._close_passes()
        self.points.close()
