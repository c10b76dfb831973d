"""csigsim: a deterministic packet-level simulator of datacenter and AI fabrics.

>>> import csigsim
>>> res = csigsim.run("scenarios/incast_fat_tree.toml", seed=2, overrides={"transport.cc": "dctcp"})
>>> res.summary["fct_p99_ns"], res.flows.head()

A scenario is a path to a TOML file, a TOML string, or a dict with the same
structure as the TOML file (see the "Scenario core" in the docs).
"""

from __future__ import annotations

import json as _json
import numbers as _numbers
import os as _os
from functools import cached_property
from pathlib import Path as _Path
from typing import Any, Callable, Dict, List, Mapping, NamedTuple, Optional, Sequence, Union

import pandas as _pd

from . import _core
from ._core import ScenarioError
from ._toml import _value, to_toml
from .sweep import Sweep, SweepError, load_sweep, sweep
from ._tables import frame as _frame
from .stats import nearest_rank

__version__: str = _core.version()

__all__ = ["run", "validate", "read_run", "nearest_rank", "Results", "Progress", "ScenarioError", "to_toml", "sweep", "load_sweep",
           "Sweep", "SweepError", "__version__"]

ScenarioLike = Union[str, "_os.PathLike[str]", Mapping[str, Any]]
OverridesLike = Union[Mapping[str, Any], Sequence[str], None]


class Results:
    """The outputs of one run: the summary, per-flow and per-link tables."""

    def __init__(self, output: "_core.Output", out: Optional[_Path] = None) -> None:
        self._output = output
        #: summary.json as written (without its final line break).
        self.summary_json: str = output.summary_json
        #: The scenario as run (after overrides).
        self.scenario_toml: str = output.scenario_toml
        #: The run directory written by ``run(..., out=...)``, or None.
        self.out: Optional[_Path] = out
        self.summary: Dict[str, Any] = _json.loads(self.summary_json)

    # The tables are built from the engine's columns on first use: a large
    # run's links table can be big and many callers only want the summary.
    @cached_property
    def flows(self) -> _pd.DataFrame:
        """One row per flow (columns described in docs/outputs.md)."""
        return _frame(self._output.table("flows"))

    @cached_property
    def links(self) -> _pd.DataFrame:
        """One row per directed link per monitor window (empty if monitor.links is off)."""
        return _frame(self._output.table("links"))

    @cached_property
    def signals(self) -> _pd.DataFrame:
        """Reflected signals per flow and monitor window (empty when no signal is on)."""
        return _frame(self._output.table("signals"))

    @cached_property
    def collectives(self) -> _pd.DataFrame:
        """Each collective's steps and totals: time, algbw, busbw (empty when the run has none)."""
        return _frame(self._output.table("collectives"))

    @cached_property
    def rpcs(self) -> _pd.DataFrame:
        """Every RPC of an `rpc` workload with its latency (empty when the run has none)."""
        return _frame(self._output.table("rpcs"))

    @cached_property
    def jobs(self) -> _pd.DataFrame:
        """One row per job: placement, times, links shared and, after ``--isolate-jobs``, slowdown (empty without jobs)."""
        return _frame(self._output.table("jobs"))

    @cached_property
    def job_links(self) -> _pd.DataFrame:
        """Each job's bytes on each link it used (empty without jobs)."""
        return _frame(self._output.table("job_links"))

    @cached_property
    def ops(self) -> _pd.DataFrame:
        """Each operation of each rank of a trace workload: ready, start, end, what it waited on (empty without one)."""
        return _frame(self._output.table("ops"))

    @cached_property
    def iterations(self) -> _pd.DataFrame:
        """Each trace workload's iteration times per rank, with compute and exposed time (empty without one)."""
        return _frame(self._output.table("iterations"))

    @cached_property
    def cc(self) -> _pd.DataFrame:
        """Congestion-control state per flow and monitor window (empty unless monitor.cc is on)."""
        return _frame(self._output.table("cc"))

    # The texts of the CSV files, exactly as the engine writes them, formatted
    # on first use.
    @cached_property
    def flows_csv(self) -> str:
        """The text of flows.csv."""
        return self._output.csv("flows")

    @cached_property
    def links_csv(self) -> str:
        """The text of links.csv ("" when monitor.links is off)."""
        return self._output.csv("links")

    @cached_property
    def signals_csv(self) -> str:
        """The text of signals.csv ("" when no signal is enabled)."""
        return self._output.csv("signals")

    @cached_property
    def cc_csv(self) -> str:
        """The text of cc.csv ("" unless monitor.cc is on)."""
        return self._output.csv("cc")

    @cached_property
    def rpcs_csv(self) -> str:
        """The text of rpcs.csv ("" when the run has no RPC workload)."""
        return self._output.csv("rpcs")

    @cached_property
    def jobs_csv(self) -> str:
        """The text of jobs.csv ("" when the scenario has no jobs)."""
        return self._output.csv("jobs")

    @cached_property
    def job_links_csv(self) -> str:
        """The text of job_links.csv ("" without jobs)."""
        return self._output.csv("job_links")

    @cached_property
    def ops_csv(self) -> str:
        """The text of ops.csv ("" without a trace workload)."""
        return self._output.csv("ops")

    @cached_property
    def iterations_csv(self) -> str:
        """The text of iterations.csv ("" without a trace workload)."""
        return self._output.csv("iterations")

    @cached_property
    def collectives_csv(self) -> str:
        """The text of collectives.csv ("" when the run has no collective)."""
        return self._output.csv("collectives")

    def write(self, dir: Union[str, "_os.PathLike[str]"]) -> _Path:
        """Writes the run directory (the same files, byte for byte, and the same
        checks and publish as ``out=``; a refusal raises ScenarioError, key ``dir``)."""
        d = _Path(dir)
        # The engine's own writer: optional files are written when present and
        # a stale copy from an earlier run in the same directory is removed.
        self._output.write_dir(d)
        return d

    def __repr__(self) -> str:
        s = self.summary
        sim_us = s.get("sim_time_ns", 0.0) / 1000.0
        out = f", out={str(self.out)!r}" if self.out is not None else ""
        return (
            f"<csigsim.Results {s.get('name', '')!r}: {s.get('flows_completed')}/{s.get('flows_total')} flows completed, "
            f"{sim_us:g} us simulated, {s.get('end_reason')}{out}>"
        )


class Progress(NamedTuple):
    """Where a run is, as :func:`run` reports it to a ``progress`` callable:
    simulated time (ps), the scenario's stop time (ps, or None), flows
    completed of all, and events executed so far."""

    sim_time_ps: int
    stop_ps: Optional[int]
    flows_completed: int
    flows_total: int
    events: int


class _Bar:
    """A tqdm bar of simulated time against the stop time (us), or of flows
    completed against all when the scenario has no stop; tqdm.auto draws it
    as a widget in a notebook."""

    def __init__(self) -> None:
        self.bar = None

    def __call__(self, p: Progress) -> None:
        if self.bar is None:
            from tqdm.auto import tqdm

            if p.stop_ps is not None:
                self.bar = tqdm(total=p.stop_ps // 1_000_000, unit="us", unit_scale=True, desc="simulated", dynamic_ncols=True)
            else:
                self.bar = tqdm(total=p.flows_total, unit="flow", desc="flows done", dynamic_ncols=True)
        pos = min(p.sim_time_ps // 1_000_000, self.bar.total) if p.stop_ps is not None else p.flows_completed
        self.bar.update(pos - self.bar.n)
        self.bar.set_postfix_str(f"{p.events / 1e6:.0f} M events", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(
    scenario: ScenarioLike,
    *,
    seed: Optional[int] = None,
    overrides: OverridesLike = None,
    out: Union[str, "_os.PathLike[str]", None] = None,
    progress: Union[bool, Callable[[Progress], Any]] = False,
    threads: Union[int, str] = 1,
) -> Results:
    """Runs a scenario and returns its :class:`Results`.

    ``scenario`` is a path to a TOML file, a TOML string (anything containing a
    newline), or a dict shaped like the TOML file. ``seed`` replaces the
    scenario's seed. ``overrides`` is a dict ``{"transport.cc": "dctcp"}`` or a
    list of ``"KEY=VALUE"`` strings, like the CLI's ``--set``. With ``out``, the
    run directory (summary.json, flows.csv, links.csv, scenario.toml) is
    written there too, as the CLI writes it (docs/outputs.md): locked while
    the run goes on, published whole by one rename, replacing an earlier run
    there; a directory that holds anything else, another run writing it, or
    a file the scenario reads inside it raises :class:`ScenarioError` (key
    ``out``) before the run. ``progress=True`` draws a tqdm bar on stderr (a widget
    in a notebook): simulated time against the scenario's stop, or flows done
    of all, with rate and ETA; a callable instead receives a :class:`Progress`
    every 2^20 events (an exception it raises stops the run and propagates).
    Off by default. ``threads`` (1 to 64) runs the simulation on that many
    threads, the fabric cut into as many partitions, with the same results
    (docs/parallel.md; a scenario that cannot be cut runs on one thread);
    ``"auto"`` takes the cores the machine's load leaves free, as the CLI's
    ``--threads auto`` (the default stays 1: a script's runs take what it
    asks for).
    Raises :class:`ScenarioError` on bad input; Ctrl-C stops the run and
    raises KeyboardInterrupt.
    """
    seed = _check_seed(seed)
    if threads == "auto":
        threads = min(_core.free_cores(), 64)
    if isinstance(threads, bool) or not isinstance(threads, _numbers.Integral) or not 1 <= int(threads) <= 64:
        raise ValueError(f"threads must be an integer in [1, 64] or \"auto\", got {threads!r}")
    ov = _overrides(overrides)
    out_path = _Path(out) if out is not None else None
    kind, arg, source = _source(scenario)
    bar = _Bar() if progress is True else None
    user = bar if bar is not None else (progress if callable(progress) else None)
    if progress is not False and user is None:
        raise TypeError(f"progress must be a bool or a callable, not {type(progress).__name__}")
    on_progress = None if user is None else (lambda *a: user(Progress(*a)))
    try:
        if kind == "file":
            raw = _core.run_file(arg, seed, ov, out_path, on_progress, int(threads))
        else:
            raw = _core.run_toml(arg, source, _os.getcwd(), seed, ov, out_path, on_progress, int(threads))
    finally:
        if bar is not None:
            bar.close()
    return Results(raw, out_path)


def validate(scenario: ScenarioLike, overrides: OverridesLike = None) -> None:
    """Loads and checks a scenario without running it; raises :class:`ScenarioError`."""
    ov = _overrides(overrides)
    kind, arg, source = _source(scenario)
    if kind == "file":
        _core.validate_file(arg, ov)
    else:
        _core.validate_toml(arg, source, _os.getcwd(), ov)


def _source(scenario: ScenarioLike):
    """Classifies a scenario argument as ("file", path, None) or ("text", toml, name)."""
    if isinstance(scenario, Mapping):
        return "text", to_toml(scenario), "<dict>"
    if isinstance(scenario, str):
        # A path never contains a newline; any real scenario text does.
        if "\n" in scenario:
            return "text", scenario, "<string>"
        return "file", _Path(scenario), None
    if isinstance(scenario, _os.PathLike):
        return "file", _Path(scenario), None
    raise TypeError(f"scenario must be a path, a TOML string or a dict, not {type(scenario).__name__}")


def _check_seed(seed: Any) -> Optional[int]:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, _numbers.Integral) or not 0 <= int(seed) < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return int(seed)


def _overrides(overrides: OverridesLike) -> List[str]:
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        # Values are written as TOML so strings stay strings and lists stay lists.
        return [f"{k}={_value(v, str(k))}" for k, v in overrides.items()]
    if isinstance(overrides, str):
        return [overrides]
    return [str(o) for o in overrides]


def read_run(run_dir: Union[str, "_os.PathLike[str]"], *, format: str = "csv") -> Any:
    """Reads a run directory (``csigsim run --out DIR``, or ``run(..., out=DIR)``)
    back into the tables :class:`Results` has: ``summary``, ``flows``,
    ``links``, ``signals``, ``cc``, ``collectives``, ``rpcs``, ``jobs``,
    ``job_links``, ``ops``, ``iterations`` (DataFrames with
    the same columns, values and dtypes), ``scenario_toml`` and ``out``. The
    engine reads the files (``csigsim::output::read_run``, as ``csigsim
    compare`` does). ``format="parquet"`` reads the Parquet twins
    (``--parquet``) into the same frames; ``"auto"`` each table's twin when
    there is one. The same as :func:`csigsim.plot.read_run`."""
    from .plot import read_run as _read_run

    return _read_run(run_dir, format=format)


#: The submodules a user imports (``import csigsim.plot``), listed by ``dir``
#: once imported.
_SUBMODULES = ("plot", "report", "telemetry", "sweep", "stats")


def __dir__() -> List[str]:
    # The public names, not the modules and typing names this file uses.
    loaded = [m for m in _SUBMODULES if m in globals()]
    return sorted(set(__all__) | set(loaded) | {"__version__", "__doc__", "__name__", "__file__", "__path__"})
