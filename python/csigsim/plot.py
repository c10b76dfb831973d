"""Figures of a run's tables, with matplotlib.

Each function takes a :class:`csigsim.Results` (or the table it plots as a
DataFrame, or a run directory read with :func:`read_run`) and returns a
``matplotlib.figure.Figure``. The figures are built without pyplot: nothing is
shown, no display is needed, and pyplot keeps no reference to them. In a
notebook the returned figure displays as the cell's output; elsewhere, save it
with ``fig.savefig("fct.png")``.

>>> import csigsim, csigsim.plot as cp
>>> res = csigsim.run("scenarios/incast_fat_tree.toml")
>>> cp.fct_cdf(res).savefig("fct.png")

``python -m csigsim.plot RUN_DIR OUT_DIR`` writes a PNG of every plot that
applies to a run directory.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

# Shared with csigsim.telemetry, which does not import this module.
from ._rundir import RunTables, read_run
from .stats import nearest_rank

__all__ = [
    "fct_cdf",
    "slowdown_by_size",
    "queue",
    "utilization",
    "pauses",
    "cc_state",
    "collective_times",
    "cct",
    "abw_heatmap",
    "abw_timeline",
    "bottleneck_map",
    "repro",
    "save_repro",
    "read_run",
    "save_all",
    "RunTables",
    "NothingToPlot",
    "DEFAULT_BUCKETS",
    "PLOTS",
    "size_buckets",
]

#: Upper bounds of the default flow-size buckets of :func:`slowdown_by_size`
#: (bytes; KB = 1000 B, as in scenarios): <= 10KB, 10KB-100KB, 100KB-1MB,
#: 1MB-10MB, and a last bucket of larger flows.
DEFAULT_BUCKETS = (10_000, 100_000, 1_000_000, 10_000_000)


class NothingToPlot(ValueError):
    """The run has no data for this plot (its table is empty or missing)."""


# --- Shared helpers -----------------------------------------------------------

_TIME_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def _time_unit(max_ns: float, unit: Optional[str]) -> Tuple[float, str]:
    """Divisor and name of the time unit: ``unit`` if given, else us below 10 ms and ms above."""
    if unit is None:
        unit = "ms" if max_ns is not None and np.isfinite(max_ns) and max_ns >= 10e6 else "us"
    if unit not in _TIME_UNITS:
        raise ValueError(f"unit must be one of {', '.join(_TIME_UNITS)}, not {unit!r}")
    return _TIME_UNITS[unit], unit


def _runs(results: Any) -> List[Tuple[Optional[str], Any]]:
    """``results`` as [(label, run)]: a dict or a list of (label, run) pairs compares runs."""
    if isinstance(results, Mapping):
        return [(str(k), v) for k, v in results.items()]
    if isinstance(results, (list, tuple)) and results and all(isinstance(x, tuple) and len(x) == 2 for x in results):
        return [(str(label), r) for label, r in results]
    return [(None, results)]


def _table(results: Any, name: str) -> pd.DataFrame:
    if isinstance(results, pd.DataFrame):
        return results
    if isinstance(results, (str, os.PathLike)):
        results = read_run(results)
    table = getattr(results, name, None)
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"expected csigsim Results, a run directory or a DataFrame, not {type(results).__name__}")
    return table


def _require(table: pd.DataFrame, name: str, columns: Iterable[str], why: str) -> None:
    """NothingToPlot when the table was not written; TypeError when it is the wrong table."""
    if len(table.columns) == 0:
        raise NothingToPlot(f"the {name} table is empty: {why}")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"the {name} table has no column {', '.join(missing)} (is it the {name} table?)")
    if len(table) == 0:
        raise NothingToPlot(f"the {name} table has no rows")


def _run_name(results: Any) -> str:
    summary = getattr(results, "summary", None)
    return str(summary.get("name", "")) if isinstance(summary, Mapping) else ""


def _run_dir(results: Any) -> str:
    out = getattr(results, "out", None)
    return Path(out).name if out is not None and Path(out).name else ""


def _title(text: str, results: Any) -> str:
    """The title of a plot of one run: the figure, the scenario's name and
    the run's directory, so that plots of runs of one scenario differ."""
    name, run = _run_name(results), _run_dir(results)
    if name and run and run != name:
        return f"{text}: {name} ({run})"
    return f"{text}: {name or run}" if (name or run) else text


def _num(series: pd.Series) -> np.ndarray:
    return pd.to_numeric(series).to_numpy(dtype=float)


def _fmt_bytes(n: float) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= size:
            return f"{n / size:g}{unit}"
    return f"{n:g}B"


_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?)\s*(B|KB|MB|GB|KiB|MiB|GiB)?\s*$")
_SIZE_UNITS = {None: 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}


def _bytes(v: Any) -> float:
    if isinstance(v, str):
        m = _SIZE.match(v)
        if not m:
            raise ValueError(f"bad size {v!r}: expected a number of bytes or a size like '100KB'")
        return float(m.group(1)) * _SIZE_UNITS[m.group(2)]
    return float(v)


# --- Flow completion times -----------------------------------------------------


def fct_cdf(results: Any, by: Any = None, *, unit: Optional[str] = None, logx: Optional[bool] = None) -> Figure:
    """CDF of the flow completion times (``fct_ns``) of the finished flows.

    ``results`` is a Results, a flows DataFrame or a run directory; a dict
    ``{label: results}`` or a list of ``(label, results)`` draws one line per
    run. ``by`` groups each run's flows (a flows column such as ``"name"``, or
    anything ``DataFrame.groupby`` takes), one line per group. ``unit`` is
    the time unit (``"us"``, ``"ms"``; default us, or ms when an FCT exceeds
    10 ms). ``logx`` defaults to a log axis when the FCTs span more than two
    decades. Unfinished flows are left out; their count is in the title or
    the line's label.
    """
    lines: List[Tuple[Optional[str], np.ndarray, int]] = []
    runs = _runs(results)
    for run_label, r in runs:
        flows = _table(r, "flows")
        _require(flows, "flows", ["fct_ns"], "the run has no flows")
        if by is None:
            parts: List[Tuple[Optional[str], pd.DataFrame]] = [(run_label, flows)]
        else:
            parts = []
            for key, g in flows.groupby(by, sort=True):
                key = key[0] if isinstance(key, tuple) and len(key) == 1 else key
                text = str(key) if str(key) != "" else "(no name)"
                parts.append((f"{run_label}: {text}" if run_label is not None else text, g))
        for label, g in parts:
            fct = _num(g["fct_ns"])
            done = np.sort(fct[~np.isnan(fct)])
            lines.append((label, done, len(fct) - len(done)))
    if not any(len(done) for _, done, _ in lines):
        raise NothingToPlot("no flow finished")
    all_done = np.concatenate([done for _, done, _ in lines])
    div, uname = _time_unit(all_done.max(), unit)

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for label, done, unfinished in lines:
        if len(done) == 0:
            continue
        y = np.arange(1, len(done) + 1) / len(done)
        text = None
        if label is not None:
            text = f"{label} ({len(done)} flows" + (f", {unfinished} unfinished)" if unfinished else ")")
        ax.step(done / div, y, where="post", label=text)
    if logx is None:
        positive = all_done[all_done > 0]
        logx = len(positive) > 0 and positive.max() / positive.min() > 100
    if logx:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_xlabel(f"flow completion time ({uname})")
    ax.set_ylabel("fraction of flows")
    ax.set_ylim(0, 1.02)
    ax.grid(True, alpha=0.3)
    if len(lines) == 1 and lines[0][0] is None:
        _, done, unfinished = lines[0]
        total = len(done) + unfinished
        count = f"{total} flows" if not unfinished else f"{len(done)} of {total} flows finished"
        ax.set_title(_title(f"Flow completion time CDF ({count})", results))
    else:
        ax.set_title(_title("Flow completion time CDF", results if len(runs) == 1 else None))
        ax.legend(fontsize="small")
    return fig


def _bucket_labels(bounds: Sequence[float]) -> List[str]:
    labels = [f"<= {_fmt_bytes(bounds[0])}"]
    labels += [f"{_fmt_bytes(lo)}-{_fmt_bytes(hi)}" for lo, hi in zip(bounds, bounds[1:])]
    labels.append(f"> {_fmt_bytes(bounds[-1])}")
    return labels


def size_buckets(sizes: Any, buckets: Sequence[Any] = DEFAULT_BUCKETS) -> np.ndarray:
    """The bucket index of each flow size: bucket i holds sizes above bound i-1
    and at most bound i; sizes above the last bound are in bucket len(buckets)."""
    bounds = [_bytes(b) for b in buckets]
    if not bounds or any(b <= a for a, b in zip(bounds, bounds[1:])):
        raise ValueError("buckets must be a non-empty list of increasing sizes")
    return np.searchsorted(np.asarray(bounds), np.asarray(sizes, dtype=float), side="left")


def slowdown_by_size(results: Any, buckets: Sequence[Any] = DEFAULT_BUCKETS, *, log: Optional[bool] = None) -> Figure:
    """p50 and p99 slowdown of the finished flows per flow-size bucket.

    ``buckets`` are the buckets' upper bounds, increasing, in bytes or as
    sizes (``"100KB"``); a flow is in the first bucket whose bound is at
    least its size, and flows larger than the last bound form a last bucket.
    The default is :data:`DEFAULT_BUCKETS` (decades from 10KB to 10MB).
    Empty buckets are not drawn. Percentiles are nearest ranks
    (:func:`csigsim.nearest_rank`), as in summary.json and ``csigsim
    compare``. ``results`` may compare runs as in :func:`fct_cdf`.
    ``log`` defaults to a log y axis when the values span more than 10x.
    """
    bounds = [_bytes(b) for b in buckets]
    labels = _bucket_labels(bounds)
    runs = _runs(results)
    stats = []  # (run label, DataFrame indexed by bucket: p50, p99, count)
    for run_label, r in runs:
        flows = _table(r, "flows")
        _require(flows, "flows", ["size_bytes", "slowdown"], "the run has no flows")
        done = flows[flows["slowdown"].notna()]
        b = size_buckets(done["size_bytes"], buckets)
        g = pd.to_numeric(done["slowdown"]).groupby(b)
        p50 = g.agg(lambda v: nearest_rank(v, 0.5))
        p99 = g.agg(lambda v: nearest_rank(v, 0.99))
        stats.append((run_label, pd.DataFrame({"p50": p50, "p99": p99, "count": g.size()})))
    used = sorted(set().union(*[set(s.index) for _, s in stats]))
    if not used:
        raise NothingToPlot("no flow finished")
    pos = {bucket: i for i, bucket in enumerate(used)}

    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    for i, (run_label, s) in enumerate(stats):
        x = [pos[k] for k in s.index]
        color = f"C{i}"
        prefix = f"{run_label}: " if run_label is not None else ""
        ax.plot(x, s["p50"], marker="o", color=color, linestyle="-", label=f"{prefix}p50")
        ax.plot(x, s["p99"], marker="^", color=color, linestyle="--", label=f"{prefix}p99")
    ticks = []
    for k in used:
        if len(stats) == 1:
            n = int(stats[0][1]["count"][k])
            ticks.append(f"{labels[k]}\n{n} flow{'s' if n != 1 else ''}")
        else:
            ticks.append(labels[k])
    ax.set_xticks(range(len(used)), ticks)
    ax.set_xlim(-0.5, len(used) - 0.5)
    values = np.concatenate([s[["p50", "p99"]].to_numpy(float).ravel() for _, s in stats])
    values = values[np.isfinite(values) & (values > 0)]
    if log is None:
        log = len(values) > 0 and values.max() / values.min() > 10
    if log:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("flow size")
    ax.set_ylabel("slowdown (FCT / ideal FCT)")
    ax.set_title(_title("Slowdown by flow size", results if len(runs) == 1 else None))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


# --- Links ----------------------------------------------------------------------


def _links_table(results: Any) -> pd.DataFrame:
    links = _table(results, "links")
    _require(links, "links", ["time_ns", "from", "to"], "the run had monitor.links = false")
    return links


def _measured(links: pd.DataFrame, column: str, what: str) -> None:
    """Refuses a queue column that is empty in every row: a flow-level run
    (``engine.fidelity = "flow"``) measures no queue, drop, mark or pause."""
    if not pd.to_numeric(links[column], errors="coerce").notna().any():
        raise NothingToPlot(f"{what} not measured: links.csv's {column} is empty, as at flow level (engine.fidelity = \"flow\"), which has no queues")


def _link_key(link: Any) -> Tuple[str, str]:
    if isinstance(link, str):
        parts = link.split("->")
        if len(parts) == 2:
            return parts[0], parts[1]
        raise ValueError(f"a link is (from, to) or 'from->to', not {link!r}")
    a, b = link
    return str(a), str(b)


def _pick_links(links: pd.DataFrame, chosen: Any, score: pd.Series, top: int) -> List[Tuple[str, str]]:
    """The chosen directed links, or the ``top`` ones with the highest score (ties: link order)."""
    present = list(dict.fromkeys(zip(links["from"], links["to"])))
    if chosen is not None:
        if isinstance(chosen, (str, tuple)):
            chosen = [chosen]
        keys = [_link_key(c) for c in chosen]
        known = set(present)
        unknown = [f"{a}->{b}" for a, b in keys if (a, b) not in known]
        if unknown:
            raise ValueError(f"no such directed link in the links table: {', '.join(unknown)}")
        return keys
    order = sorted(present, key=lambda k: -score.get(k, 0.0))
    return order[:top]


def _link_lines(links: pd.DataFrame, column: str, chosen: Any, top: int, how: str, scale: float,
                unit: Optional[str]) -> Tuple[Figure, Any, float, str]:
    values = pd.to_numeric(links[column])
    score = values.groupby([links["from"], links["to"]]).agg(how)
    keys = _pick_links(links, chosen, score, top)
    t = _num(links["time_ns"])
    div, uname = _time_unit(np.nanmax(t) if len(t) else 0.0, unit)
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.add_subplot()
    frm, to = links["from"].to_numpy(), links["to"].to_numpy()
    v = values.to_numpy(dtype=float)
    for a, b in keys:
        m = (frm == a) & (to == b)
        order = np.argsort(t[m], kind="stable")
        ax.step(t[m][order] / div, v[m][order] * scale, where="post", label=f"{a}->{b}")
    ax.set_xlabel(f"time ({uname})")
    ax.grid(True, alpha=0.3)
    if keys:
        ax.legend(fontsize="small")
    return fig, ax, div, uname


def queue(results: Any, links: Any = None, *, top: int = 4, unit: Optional[str] = None) -> Figure:
    """The largest egress queue per monitor window (``max_queue_bytes``, KB) of
    directed links over time.

    ``links`` is a list of ``(from, to)`` pairs or ``"from->to"`` strings;
    by default the ``top`` links with the deepest queue of the run.
    """
    table = _links_table(results)
    _measured(table, "max_queue_bytes", "queues")
    fig, ax, _, _ = _link_lines(table, "max_queue_bytes", links, top, "max", 1e-3, unit)
    ax.set_ylabel("max queue in window (KB)")
    # From 0: a flat queue is not stretched over the whole axis.
    ax.set_ylim(bottom=0, top=max(ax.get_ylim()[1], 1e-3))
    ax.set_title(_title("Egress queue", results))
    return fig


def utilization(results: Any, links: Any = None, *, top: int = 4, unit: Optional[str] = None) -> Figure:
    """Utilization per monitor window (busy time of the transmitter, % of the
    window) of directed links over time; by default the ``top`` links with
    the highest mean utilization. ``links`` as in :func:`queue`."""
    table = _links_table(results)
    fig, ax, _, _ = _link_lines(table, "utilization", links, top, "mean", 100.0, unit)
    ax.set_ylabel("utilization (% of line rate)")
    ax.set_ylim(0, 105)
    ax.set_title(_title("Link utilization", results))
    return fig


def pauses(results: Any, *, top: int = 10, unit: Optional[str] = None) -> Figure:
    """PFC pause time per monitor window (``pause_ns``, us) of the directed
    links that were paused, the ``top`` most paused ones (by total pause time)."""
    table = _links_table(results)
    _measured(table, "pause_ns", "pauses")
    p = pd.to_numeric(table["pause_ns"])
    total = p.groupby([table["from"], table["to"]]).sum()
    paused = total[total > 0]
    if paused.empty:
        raise NothingToPlot("no link was paused (pause_ns is 0 everywhere)")
    fig, ax, _, _ = _link_lines(table, "pause_ns", None, min(top, len(paused)), "sum", 1e-3, unit)
    ax.set_ylabel("paused time in window (us)")
    ax.set_ylim(bottom=0)
    shown = min(top, len(paused))
    which = f"{shown} of {len(paused)} paused links" if shown < len(paused) else f"{len(paused)} paused link{'s' if len(paused) != 1 else ''}"
    ax.set_title(_title(f"PFC pauses ({which})", results))
    return fig


# --- Congestion control -----------------------------------------------------------


def cc_state(results: Any, flows: Optional[Sequence[int]] = None, *, top: int = 8, unit: Optional[str] = None) -> Figure:
    """Window (``cwnd_bytes``, KB) and pacing rate (``rate_bps``, Gb/s) per
    monitor window of the given flow ids (default: the first ``top`` flows
    of the cc table). Needs a run with ``monitor.cc = true``."""
    cc = _table(results, "cc")
    if len(cc.columns) == 0:
        raise NothingToPlot("the cc table is empty: cc_state needs a run with monitor.cc = true")
    _require(cc, "cc", ["time_ns", "flow_id", "cwnd_bytes", "rate_bps"], "")
    ids = pd.to_numeric(cc["flow_id"]).to_numpy()
    present = sorted(set(ids.tolist()))
    if flows is None:
        chosen = present[:top]
    else:
        chosen = [int(f) for f in ([flows] if isinstance(flows, (int, np.integer)) else flows)]
        missing = [f for f in chosen if f not in set(present)]
        if missing:
            raise ValueError(f"no cc rows for flow {', '.join(map(str, missing))} (flows with rows: {len(present)})")
    names: Dict[int, str] = {}
    if not isinstance(results, pd.DataFrame):
        ft = getattr(results, "flows", None)
        if isinstance(ft, pd.DataFrame) and "name" in ft.columns and len(ft):
            names = dict(zip(pd.to_numeric(ft["flow_id"]).tolist(), ft["name"].tolist()))
    t = _num(cc["time_ns"])
    div, uname = _time_unit(np.nanmax(t), unit)
    cwnd, rate = _num(cc["cwnd_bytes"]), _num(cc["rate_bps"])

    fig = Figure(figsize=(7, 6), layout="constrained")
    ax_w, ax_r = fig.subplots(2, 1, sharex=True)
    for f in chosen:
        m = ids == f
        order = np.argsort(t[m], kind="stable")
        name = names.get(f, "")
        label = f"flow {f}" + (f" ({name})" if name else "")
        ax_w.plot(t[m][order] / div, cwnd[m][order] / 1e3, marker=".", markersize=3, label=label)
        ax_r.plot(t[m][order] / div, rate[m][order] / 1e9, marker=".", markersize=3, label=label)
    if chosen and np.isnan(cwnd[np.isin(ids, chosen)]).all():
        ax_w.text(0.5, 0.5, "no window: the algorithm is rate-based", transform=ax_w.transAxes, ha="center")
    algos = sorted(set(cc["cc"].astype(str))) if "cc" in cc.columns else []
    ax_w.set_title(_title("Congestion control" + (f" ({', '.join(algos)})" if algos else ""), results))
    ax_w.set_ylabel("cwnd (KB)")
    ax_r.set_ylabel("rate (Gb/s)")
    ax_r.set_xlabel(f"time ({uname})")
    for ax in (ax_w, ax_r):
        ax.grid(True, alpha=0.3)
    ax_w.legend(fontsize="small")
    return fig


# --- Collectives -------------------------------------------------------------------


def collective_times(results: Any, *, unit: Optional[str] = None) -> Figure:
    """Completion time of each collective per iteration (the totals rows of
    the collectives table, whose ``step`` is empty; one line per collective
    entry) and the time of each step (one line per instance)."""
    coll = _table(results, "collectives")
    _require(coll, "collectives", ["collective_id", "name", "iteration", "step", "time_ns"],
             "the run has no collective workload")
    step = pd.to_numeric(coll["step"])
    totals = coll[step.isna()]
    steps = coll[step.notna()]
    if totals.empty:
        raise NothingToPlot("the collectives table has no totals rows")
    t_tot, t_step = _num(totals["time_ns"]), _num(steps["time_ns"])
    finite = np.concatenate([t_tot[np.isfinite(t_tot)], [0.0]])
    div, uname = _time_unit(finite.max(), unit)
    finite_s = np.concatenate([t_step[np.isfinite(t_step)], [0.0]])
    div_s, uname_s = _time_unit(finite_s.max(), unit)

    fig = Figure(figsize=(7, 6.5), layout="constrained")
    ax_it, ax_st = fig.subplots(2, 1)
    names = list(dict.fromkeys(totals["name"].astype(str)))
    color = {n: f"C{i}" for i, n in enumerate(names)}
    for n in names:
        rows = totals[totals["name"].astype(str) == n].sort_values("iteration")
        ax_it.plot(_num(rows["iteration"]), _num(rows["time_ns"]) / div, marker="o", color=color[n], label=n)
    unfinished = int(np.isnan(t_tot).sum())
    title = "Collective completion time" + (f" ({unfinished} unfinished)" if unfinished else "")
    ax_it.set_title(_title(title, results))
    ax_it.set_xlabel("iteration")
    ax_it.set_ylabel(f"completion time ({uname})")
    ax_it.set_ylim(bottom=0)
    # Half an iteration either side: one iteration is not squeezed onto the border.
    its = pd.to_numeric(totals["iteration"]).to_numpy(float)
    ax_it.set_xlim(its.min() - 0.5, its.max() + 0.5)
    ax_it.xaxis.get_major_locator().set_params(integer=True)
    ax_it.legend(fontsize="small")

    instances = list(dict.fromkeys(pd.to_numeric(steps["collective_id"]).tolist()))
    labelled = set()
    for i, cid in enumerate(instances):
        rows = steps[pd.to_numeric(steps["collective_id"]) == cid].sort_values("step")
        n = str(rows["name"].iloc[0])
        if len(instances) <= 8:
            # Few instances: a color each.
            label, c = f"{n} iteration {int(rows['iteration'].iloc[0])}", f"C{i}"
        else:
            # Many: a color per collective entry.
            label, c = (n if n not in labelled else None), color.get(n)
            labelled.add(n)
        ax_st.plot(_num(rows["step"]), _num(rows["time_ns"]) / div_s, marker=".", color=c, alpha=0.8, label=label)
    ax_st.set_title("Time of each step")
    ax_st.set_xlabel("step")
    ax_st.set_ylabel(f"step time ({uname_s})")
    ax_st.set_ylim(bottom=0)
    ax_st.xaxis.get_major_locator().set_params(integer=True)
    ax_st.legend(fontsize="small")
    for ax in (ax_it, ax_st):
        ax.grid(True, alpha=0.3)
    return fig


# --- Telemetry views (csigsim.telemetry; docs/telemetry.md) ----------------------------------


def _telemetry_run(results: Any) -> Any:
    """A run with tables (a run directory is read), for the telemetry plots."""
    if isinstance(results, (str, os.PathLike)):
        return read_run(results)
    if isinstance(results, pd.DataFrame):
        raise TypeError("the telemetry plots need a run (Results or a run directory), not one table")
    return results


def _need_csig(run: Any, types: Optional[Sequence[str]] = None) -> pd.DataFrame:
    sig = getattr(run, "signals", None)
    if not isinstance(sig, pd.DataFrame) or len(sig) == 0 or "bottleneck" not in sig.columns:
        raise NothingToPlot("the run has no signals.csv: enable [signals.csig]")
    if types is not None and not sig["signal"].isin(types).any():
        raise NothingToPlot(f"signals.csv has no {' or '.join(types)} rows: set [signals.csig] type = \"abw\" or \"abw_c\"")
    return sig


def _fmt_ns(ns: float) -> str:
    """A duration as the largest unit that keeps it whole (``100us``)."""
    for name, size in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= size and abs(ns / size - round(ns / size)) < 1e-9:
            return f"{round(ns / size)}{name}"
    return f"{ns:g}ns"


def _abw_scale(unit: str) -> Tuple[float, str]:
    return (1e9, "Gb/s") if unit == "bps" else (0.01, "% of port rate")


def abw_heatmap(results: Any, groups: Any = "rack", *, window: Any = None, time_ns: Optional[float] = None) -> Figure:
    """Heatmaps of the reflected min(ABW) between groups of hosts (rows:
    source group, columns: destination group): the mean over the run (or one
    view window) and the minimum, side by side. ``groups`` as in
    :func:`csigsim.telemetry.host_groups`. Needs ``[signals.csig]`` with type
    ``abw`` or ``abw_c``."""
    from . import telemetry as tm

    run = _telemetry_run(results)
    _need_csig(run, tm.ABW_SIGNALS)
    unit = tm.abw_windows(run, None, groups)["unit"].iloc[0]
    div, uname = _abw_scale(unit)
    mats = [tm.abw_matrix(run, groups, stat=st, window=window, time_ns=time_ns) for st in ("mean", "min")]
    n = len(mats[0])
    fig = Figure(figsize=(5.5 + 0.25 * n * 2, 3.2 + 0.25 * n), layout="constrained")
    axes = fig.subplots(1, 2)
    vmax = np.nanmax([np.nanmax(m.to_numpy(dtype=float)) if np.isfinite(m.to_numpy(dtype=float)).any() else 0 for m in mats]) / div
    for ax, m, st in zip(axes, mats, ("mean", "min")):
        data = np.ma.masked_invalid(m.to_numpy(dtype=float) / div)
        im = ax.imshow(data, cmap="RdYlGn", vmin=0, vmax=vmax if vmax > 0 else 1, aspect="auto")
        ax.set_xticks(range(n), [str(c) for c in m.columns], rotation=90 if n > 6 else 0, fontsize="small")
        ax.set_yticks(range(n), [str(c) for c in m.index], fontsize="small")
        ax.set_xlabel("destination group")
        ax.set_ylabel("source group")
        ax.set_title(f"{st} min(ABW)")
        if n <= 12:
            for (i, j), v in np.ndenumerate(data.filled(np.nan)):
                if np.isfinite(v):
                    ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize="x-small")
        fig.colorbar(im, ax=ax, label=uname, shrink=0.8)
    span = "over the run" if window is None else f"{window} window at {_fmt_ns(float(time_ns or 0))}"
    fig.suptitle(_title(f"Available bandwidth between {groups if isinstance(groups, str) else 'groups'}s ({span})", run))
    return fig


def abw_timeline(results: Any, windows: Sequence[Any] = ("100us", "1s"), *, unit: Optional[str] = None) -> Figure:
    """The mean reflected min(ABW) of all the run's flows per view window,
    one line per window size (default 100 us and 1 s, side by side on one
    axis): fine windows show brief congestion that coarse ones average away.
    A window smaller than the run's ``monitor.window`` is left out."""
    from . import telemetry as tm

    run = _telemetry_run(results)
    _need_csig(run, tm.ABW_SIGNALS)
    mon = tm.monitor_window_ns(run)
    usable = [w for w in windows if tm.parse_time(w) >= mon and abs(tm.parse_time(w) / mon - round(tm.parse_time(w) / mon)) < 1e-6]
    if not usable:
        raise NothingToPlot(f"no window is a multiple of the monitor window ({mon:g} ns)")
    end = float(getattr(run, "summary", {}).get("sim_time_ns", 0) or 0)
    fig = Figure(figsize=(7, 4), layout="constrained")
    ax = fig.add_subplot()
    series = []
    for w in usable:
        v = tm.abw_windows(run, w, lambda h: "all")
        series.append((w, v))
        end = max(end, float(v["time_ns"].max()) + mon)
    div, uname = _time_unit(end, unit)
    vdiv, vname = _abw_scale(series[0][1]["unit"].iloc[0])
    for w, v in series:
        wn = tm.parse_time(w)
        t = v["time_ns"].to_numpy(float)
        x = np.concatenate([t, [min(t[-1] + wn, max(end, t[-1] + mon))]]) / div
        y = v["mean"].to_numpy(float) / vdiv
        ax.step(x, np.concatenate([y, y[-1:]]), where="post", label=f"{w} windows")
    ax.set_xlabel(f"time ({uname})")
    ax.set_ylabel(f"mean min(ABW) ({vname})")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    ax.set_title(_title("Available bandwidth per window", run))
    return fig


def bottleneck_map(results: Any, *, top: int = 12, window: Any = None, unit: Optional[str] = None) -> Figure:
    """Where the CSIG locator put the bottleneck: the ``top`` ports by samples
    over the run (bars, colored by tier and direction), and per view window
    (default the monitor window) each port's share of the window's samples,
    with the window's mode outlined. Needs ``[signals.csig]``."""
    from . import telemetry as tm

    run = _telemetry_run(results)
    _need_csig(run)
    total = tm.bottleneck_map(run)
    if total.empty:
        raise NothingToPlot("no ACK reflected a written CSIG tag")
    ports = list(total["port"].head(top))
    w = window if window is not None else _fmt_ns(tm.monitor_window_ns(run))
    per = tm.bottleneck_map(run, window=w)
    per = per[per["port"].isin(ports)]
    times = np.sort(per["time_ns"].unique())
    grid = np.full((len(ports), len(times)), np.nan)
    pi = {p: i for i, p in enumerate(ports)}
    ti = {t: j for j, t in enumerate(times)}
    for r in per.itertuples(index=False):
        grid[pi[r.port], ti[r.time_ns]] = r.share
    modes = tm.bottleneck_modes(run, w)
    div, uname = _time_unit(float(times.max()) if len(times) else 0.0, unit)

    fig = Figure(figsize=(10, 1.6 + 0.35 * len(ports)), layout="constrained")
    ax_bar, ax_map = fig.subplots(1, 2, width_ratios=[1, 2.2])
    shown = total.head(top).iloc[::-1]
    kinds = [f"tier {t} {d}" if pd.notna(t) else "?" for t, d in zip(shown["tier"], shown["direction"])]
    color = {k: f"C{i}" for i, k in enumerate(dict.fromkeys(sorted(kinds)))}
    ax_bar.barh(range(len(shown)), shown["samples"], color=[color[k] for k in kinds])
    ax_bar.set_yticks(range(len(shown)), list(shown["port"]), fontsize="small")
    ax_bar.set_xlabel("ACKs naming the port")
    for k, c in color.items():
        ax_bar.bar(0, 0, color=c, label=k)
    ax_bar.legend(fontsize="x-small", loc="lower right")
    ax_bar.set_title("Over the run")
    if len(times):
        wn = tm.parse_time(w)
        extent = (times[0] / div, (times[-1] + wn) / div, len(ports) - 0.5, -0.5)
        im = ax_map.imshow(np.ma.masked_invalid(grid), aspect="auto", cmap="viridis", vmin=0, vmax=1,
                           extent=extent, interpolation="nearest")
        fig.colorbar(im, ax=ax_map, label="share of the window's ACKs")
        m = modes[modes["port"].isin(ports)]
        ax_map.scatter((m["time_ns"].to_numpy(float) + wn / 2) / div, [pi[p] for p in m["port"]],
                       marker="s", facecolors="none", edgecolors="red", s=12, linewidths=0.8, label="mode")
        ax_map.legend(fontsize="x-small", loc="upper right")
    ax_map.set_yticks(range(len(ports)), ports, fontsize="small")
    ax_map.set_xlabel(f"time ({uname})")
    ax_map.set_title(f"Per {w} window")
    fig.suptitle(_title("Bottleneck location (CSIG locator)", run))
    return fig


def cct(results: Any, *, unit: Optional[str] = None, threshold: float = 10_000.0) -> Figure:
    """Collective completion time (CCT) per iteration, a group of bars per
    iteration and one bar per collective entry, labelled with the bus
    bandwidth. With links.csv, a bar is hatched when one of the iteration's
    steps crossed a queue episode (a queue of at least ``threshold`` bytes;
    :func:`csigsim.telemetry.episodes`), and the title counts them."""
    from . import telemetry as tm

    run = _telemetry_run(results)
    coll = _table(run, "collectives")
    _require(coll, "collectives", ["collective_id", "name", "iteration", "step", "time_ns"],
             "the run has no collective workload")
    totals = coll[pd.to_numeric(coll["step"]).isna()]
    if totals.empty:
        raise NothingToPlot("the collectives table has no totals rows")
    crossed: set = set()
    # Queue episodes need queues: none at flow level.
    queues = tm.queues_measured(run)
    if queues:
        for e in tm.episodes(run, "queue", threshold).itertuples():
            for name, _, it, _ in tm.step_keys(run, e.flows, e.start_ns, e.end_ns):
                crossed.add((name, it))
    t = _num(totals["time_ns"])
    div, uname = _time_unit(np.nanmax(np.concatenate([t, [0.0]])), unit)
    names = list(dict.fromkeys(totals["name"].astype(str)))
    its = sorted(set(pd.to_numeric(totals["iteration"]).astype(int)))
    width = 0.8 / len(names)
    fig = Figure(figsize=(max(5.0, 1.0 + 0.6 * len(its) * len(names)), 4), layout="constrained")
    ax = fig.add_subplot()
    for k, n in enumerate(names):
        rows = totals[totals["name"].astype(str) == n]
        x = pd.to_numeric(rows["iteration"]).to_numpy(int) + (k - (len(names) - 1) / 2) * width
        y = _num(rows["time_ns"]) / div
        hatch = ["//" if (n, int(i)) in crossed else "" for i in rows["iteration"]]
        bars = ax.bar(x, np.nan_to_num(y), width=width * 0.95, color=f"C{k}", label=n, hatch=hatch)
        bw = _num(rows["busbw_gbps"]) if "busbw_gbps" in rows.columns else np.full(len(rows), np.nan)
        ax.bar_label(bars, [f"{b:.0f} Gb/s" if np.isfinite(b) else "unfinished" for b in bw], fontsize="x-small")
    ax.set_xticks(its)
    ax.set_xlim(min(its) - 0.5, max(its) + 0.5)
    ax.set_xlabel("iteration")
    ax.set_ylabel(f"completion time ({uname})")
    hit = len([1 for n, i in crossed if n in names])
    ax.set_title(_title("Collective completion time per iteration", run), fontsize="medium")
    if queues:
        ax.text(0.01, 0.01, f"hatched ({hit}): a step crossed a queue >= {threshold / 1e3:g} KB",
                transform=ax.transAxes, fontsize="x-small", va="bottom")
    ax.legend(fontsize="small")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


# --- Reproductions -------------------------------------------------------------------


def _natural(name: str) -> List[Any]:
    """Sort key that orders ``max_4bits`` before ``max_16bits``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def repro(result: Any, metrics: Optional[Sequence[str]] = None) -> Figure:
    """The figures of one experiment of ``csigsim repro`` (its ``result.json``,
    as a path or the parsed dict): one panel per metric, a bar per variant
    (variants in natural order), the source's figure and csigsim's verdict
    in the title. ``metrics`` picks the panels (default: every numeric
    figure of the variants, at most six, in name order)."""
    if isinstance(result, (str, os.PathLike)):
        result = json.loads(Path(result).read_text())
    variants = result.get("variants") or {}
    if not variants:
        raise NothingToPlot(f"{result.get('id', 'the experiment')} has no variants")
    names = sorted(variants, key=_natural)
    if metrics is None:
        numeric = sorted({k for v in variants.values() for k, x in v.items() if isinstance(x, (int, float)) and not isinstance(x, bool)})
        metrics = numeric[:6]
    if not metrics:
        raise NothingToPlot(f"{result.get('id', 'the experiment')} has no numeric figure")
    width = max(3.0 * len(metrics), 6.0)
    fig = Figure(figsize=(width, 4.2), layout="constrained")
    axes = fig.subplots(1, len(metrics), squeeze=False)[0]
    for ax, m in zip(axes, metrics):
        values = [variants[n].get(m) for n in names]
        heights = [np.nan if v is None else float(v) for v in values]
        ax.bar(range(len(names)), heights, color="tab:blue")
        ax.set_xticks(range(len(names)), names, rotation=60 if len(names) > 3 else 0, ha="right" if len(names) > 3 else "center", fontsize=8)
        ax.set_title(m, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    verdict = "reproduced" if result.get("direction_reproduced") else "NOT reproduced"
    import textwrap

    # About 13 characters of 9-point text per inch of figure.
    source = textwrap.fill(textwrap.shorten("source: " + str(result.get("source_figure", "")), width=int(width * 26), placeholder="..."), width=int(width * 13))
    title = textwrap.fill(f"{result.get('id', '')}: {result.get('title', '')}", width=int(width * 13))
    fig.suptitle(f"{title}\n{source}\ndirection {verdict}", fontsize=9)
    return fig


def save_repro(repro_dir: Union[str, "os.PathLike[str]"], out_dir: Union[str, "os.PathLike[str]"], *, dpi: int = 90,
               metrics: Optional[Mapping[str, Sequence[str]]] = None,
               log: Optional[Callable[[str], None]] = None) -> List[Path]:
    """Writes ``<ID>.png`` of :func:`repro` for every experiment directory of
    ``repro_dir`` (the ``--out`` of ``csigsim repro``) that has a
    result.json; ``metrics`` maps an experiment id to its panels."""
    def experiments():
        for res in sorted(Path(repro_dir).glob("*/result.json"), key=lambda p: _natural(p.parent.name)):
            result = json.loads(res.read_text())
            exp = result.get("id", res.parent.name)
            yield exp, lambda result=result, exp=exp: repro(result, (metrics or {}).get(exp))

    return _save_figures(experiments(), out_dir, dpi, log)


def _save_figures(figures: Iterable[Tuple[str, Callable[[], Figure]]], out_dir: Union[str, "os.PathLike[str]"],
                  dpi: int, log: Optional[Callable[[str], None]]) -> List[Path]:
    """Draws each ``(name, draw)`` and writes it as ``<name>.png`` into
    ``out_dir``, skipping those with nothing to plot; returns the paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, draw in figures:
        try:
            fig = draw()
        except NothingToPlot as e:
            if log:
                log(f"skipped {name}: {e}")
            continue
        path = out / f"{name}.png"
        fig.savefig(path, dpi=dpi)
        written.append(path)
        if log:
            log(f"wrote {path}")
    return written


# --- Every plot of a run -------------------------------------------------------------

#: The plots :func:`save_all` tries, by file name.
PLOTS: Dict[str, Callable[[Any], Figure]] = {
    "fct_cdf": fct_cdf,
    "slowdown_by_size": slowdown_by_size,
    "queue": queue,
    "utilization": utilization,
    "pauses": pauses,
    "cc_state": cc_state,
    "collective_times": collective_times,
    "cct": cct,
    "abw_heatmap": abw_heatmap,
    "abw_timeline": abw_timeline,
    "bottleneck_map": bottleneck_map,
}


def save_all(results: Any, out_dir: Union[str, "os.PathLike[str]"], *, dpi: int = 120,
             log: Optional[Callable[[str], None]] = None) -> List[Path]:
    """Writes ``<plot>.png`` into ``out_dir`` for every plot that applies to
    the run (a plot whose table is empty or missing is skipped) and returns
    the paths written."""
    if isinstance(results, (str, os.PathLike)):
        results = read_run(results)
    return _save_figures(((name, lambda fn=fn: fn(results)) for name, fn in PLOTS.items()), out_dir, dpi, log)


_USAGE = "usage: python -m csigsim.plot RUN_DIR OUT_DIR | --repro REPRO_DIR OUT_DIR"


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help"):
        print(_USAGE + "\nWrites a PNG of every plot that applies to the run directory RUN_DIR into OUT_DIR;"
              "\nwith --repro, one PNG per experiment of a csigsim repro directory.")
        return 0
    if args and args[0] == "--repro":
        if len(args) != 3:
            print(_USAGE, file=sys.stderr)
            return 2
        if not any(Path(args[1]).glob("*/result.json")):
            print(f"error: {args[1]}: no experiment directory with a result.json (csigsim repro --out)", file=sys.stderr)
            return 2
        save_repro(args[1], args[2], metrics=REPRO_METRICS, log=print)
        return 0
    if len(args) != 2:
        print(_USAGE, file=sys.stderr)
        return 2
    try:
        run = read_run(args[0])
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    save_all(run, args[1], log=print)
    return 0


#: The panels ``python -m csigsim.plot --repro`` draws for experiments with
#: many figures (docs/reproductions.md shows these).
REPRO_METRICS: Dict[str, Sequence[str]] = {
    "S4": ("busbw_gbps", "tor_uplink_share", "uplink_util_1s", "uplink_util_100us_peak", "hot_pair_abw_c_1s", "hot_pair_abw_c_100us_min"),
    "S8": ("busbw_gbps",),
}


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    sys.exit(main())
