"""One self-contained, interactive HTML page about one or more runs.

At the top, the scenario keys that differ between the runs and the leading
figures of ``csigsim compare`` (collectives' CCT, algbw and busbw, slowdown
per flow-size bucket, ...) with each run's ratio to the first and whether
it is better or worse; then the runs' summaries side by side, one overlaid
plot per figure (FCT CDF, slowdown by size, CCT per iteration, the busiest
links' utilisation and queues, PFC pauses, the ABW timeline), and per run
its scenario and telemetry tables. The plots are drawn by plotly.js, whose
code is embedded in the page: hover to read a value, drag to zoom, click a
legend entry to hide a run; the page loads nothing from the network.

>>> import csigsim.report
>>> csigsim.report.write_report(["runs/a", "runs/b"], "runs/a/report.html", labels=["a", "b"])

``python -m csigsim.report RUN [RUN ...] --out FILE [--compare JSON|-]``
does the same from a shell; ``csigsim report`` calls it with the figures
of ``csigsim compare`` (docs/telemetry.md).
"""

from __future__ import annotations

import argparse as _argparse
import html as _html
import json as _json
import math as _math
import os as _os
import sys as _sys
from pathlib import Path as _Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as _np
import pandas as _pd

from . import plot as _cp
from . import telemetry as _tm
from .stats import nearest_rank as _nearest

__all__ = ["render", "write_report", "main", "fmt_si", "key_differences", "run_labels"]

_PathLike = Union[str, "_os.PathLike[str]"]

#: summary.json fields of the side-by-side summary, in order.
SUMMARY_FIELDS = (
    "name", "seed", "topology", "hosts", "switches", "links", "cc", "switch_mode", "routing",
    "end_reason", "sim_time_ns", "wall_s", "flows_total", "flows_completed", "fct_p50_ns", "fct_p99_ns",
    "fct_max_ns", "slowdown_p50", "slowdown_p99", "throughput_min_gbps", "throughput_max_gbps",
    "packets_dropped", "packets_trimmed", "ecn_marks", "pauses_sent", "cnps_sent", "retransmits", "timeouts",
    "max_switch_buffer_bytes", "invariants_ok", "version",
)

_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")

_CSS = """
body { font-family: sans-serif; margin: 1.5em auto; max-width: 1250px; color: #222; padding: 0 1em; }
h1 { border-bottom: 2px solid #444; font-size: 1.6em; }
h2 { border-bottom: 1px solid #aaa; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; vertical-align: top; }
th { background: #f0f0f0; }
td.l, th.l { text-align: left; }
td.worse { background: #fde2e1; }
td.better { background: #e0f3e0; }
code { font-size: 0.85em; color: #555; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr)); gap: 1em; }
figure { margin: 0; border: 1px solid #eee; padding: 4px; }
figcaption { font-size: 0.85em; color: #555; }
.note { color: #666; font-size: 0.9em; }
"""

# --- Numbers ---------------------------------------------------------------------

_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"), (1e-9, "n"), (1e-12, "p"))


def fmt_si(value: Any, unit: str = "", digits: int = 4) -> str:
    """``value`` (in the base unit: s, b/s, B, ...) with an SI prefix and
    ``digits`` significant digits: ``fmt_si(0.002313, "s")`` is
    ``"2.313 ms"``, ``fmt_si(2.7e10, "b/s")`` ``"27 Gb/s"``, ``fmt_si(4100,
    "B")`` ``"4.1 KB"`` (KB = 1000 B, as scenarios write sizes). A count
    (``unit=""``) below 10,000 is written whole; None and NaN are ``-``."""
    if value is None or isinstance(value, bool):
        return "-" if value is None else ("yes" if value else "no")
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not _math.isfinite(v):
        return "-"
    if v == 0:
        return f"0 {unit}".strip()
    if unit == "" and v == int(v) and abs(v) < 10_000:
        return str(int(v))
    for factor, prefix in _PREFIXES:
        if unit in ("B", "") and factor < 1:
            # Bytes and counts have no fractional prefixes.
            factor, prefix = 1.0, ""
        if abs(v) >= factor * (1 - 0.5 * 10 ** (1 - digits)) or factor == _PREFIXES[-1][0]:
            m = v / factor
            text = f"{m:.{digits}g}"
            if "e" in text:
                text = f"{m:.0f}"
            if unit == "B" and prefix == "k":
                prefix = "K"  # sizes as scenarios write them: KB = 1000 B
            return f"{text} {prefix}{unit}".strip()
    return f"{v:.{digits}g} {unit}".strip()


#: Figures of compare by their name's unit suffix: (suffix, factor to the base unit, unit).
_UNITS = (("_us", 1e-6, "s"), ("_ns", 1e-9, "s"), ("_gbps", 1e9, "b/s"), ("_bytes", 1.0, "B"), ("_s", 1.0, "s"))

_WORDS = {"cct": "CCT", "fct": "FCT", "rpc": "RPC", "algbw": "algbw", "busbw": "busbw", "sim": "simulated",
          "ecn": "ECN", "cnps": "CNPs", "max": "max"}


def _figure_unit(metric: str) -> Tuple[str, str, float, str]:
    """A figure name of compare as (readable name, bracketed part, factor, unit)."""
    base, _, rest = metric.partition("[")
    inner = rest[:-1] if rest.endswith("]") else rest
    factor, unit = 1.0, ""
    for suffix, f, u in _UNITS:
        if base.endswith(suffix):
            base, factor, unit = base[: -len(suffix)], f, u
            break
    if base == "bottleneck_share":
        factor, unit = 100.0, "%"
    words = [_WORDS.get(w, w) for w in base.split("_")]
    return " ".join(words), inner, factor, unit


def _fmt_figure(metric: str, v: Any) -> str:
    _, _, factor, unit = _figure_unit(metric)
    if v is None:
        return "-"
    if unit == "%":
        return f"{float(v) * factor:.3g} %"
    if unit == "" and isinstance(v, float) and v != int(v):
        return f"{v:.4g}"
    return fmt_si(float(v) * factor, unit)


def _field_value(field: str, v: Any) -> str:
    """A summary.json field, readable."""
    if isinstance(v, str):
        return v
    for suffix, f, u in _UNITS:
        if field.endswith(suffix) and v is not None:
            return fmt_si(float(v) * f, u)
    if isinstance(v, float):
        return f"{v:.4g}"
    return fmt_si(v)


# --- Page pieces ---------------------------------------------------------------------


def _esc(x: Any) -> str:
    return _html.escape(str(x), quote=True)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]], left: int = 1, classes: Optional[Sequence[Sequence[str]]] = None,
           cls: str = "") -> str:
    """An HTML table; the first ``left`` columns are aligned left; cells are text (escaped)."""
    head = "".join(f'<th class="l">{_esc(h)}</th>' if i < left else f"<th>{_esc(h)}</th>" for i, h in enumerate(header))
    body = []
    for r, row in enumerate(rows):
        cells = []
        for i, c in enumerate(row):
            names = (["l"] if i < left else []) + ([classes[r][i]] if classes and classes[r][i] else [])
            attr = f' class="{" ".join(names)}"' if names else ""
            cells.append(f"<td{attr}>{c}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    c = f' class="{cls}"' if cls else ""
    return f"<table{c}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _flow_list(flows: Any, shown: int = 6) -> str:
    """A list of flow ids, its first few and its count (``0, 1, 2, ... (127 flows)``)."""
    ids = list(flows) if isinstance(flows, (list, tuple, _np.ndarray)) else []
    if not ids:
        return "-"
    head = ", ".join(str(x) for x in ids[:shown])
    return head if len(ids) <= shown else f"{head}, ... ({len(ids)} flows)"


def run_labels(runs: Sequence[Any]) -> List[str]:
    """Each run's name: its directory's name (the whole path where two
    share it), else ``run N``."""
    paths = []
    for i, r in enumerate(runs):
        p = r if isinstance(r, (str, _os.PathLike)) else getattr(r, "out", None)
        paths.append(_Path(p) if p is not None else None)
    names = [p.name if p is not None and p.name else None for p in paths]
    out = []
    for i, (p, n) in enumerate(zip(paths, names)):
        if n is None:
            out.append(f"run {i + 1}")
        elif names.count(n) > 1:
            out.append(str(p))
        else:
            out.append(n)
    return out


def _flatten(d: Any, prefix: str = "") -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    if isinstance(d, Mapping):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(d, list) and d and all(isinstance(x, Mapping) for x in d):
        for i, x in enumerate(d):
            out.update(_flatten(x, f"{prefix}[{i}]"))
    else:
        out[prefix] = d
    return out


def _parse_toml(text: str) -> Dict[str, Any]:
    try:
        import tomllib as toml_reader  # Python 3.11+
    except ImportError:  # pragma: no cover - depends on the Python version
        import tomli as toml_reader
    try:
        return toml_reader.loads(text)
    except Exception:
        return {}


def key_differences(runs: Sequence[Any]) -> List[Tuple[str, List[Any]]]:
    """The scenario keys (dotted, ``workload[0].size``) whose values differ
    between the runs' scenario.toml, with each run's value (None where a
    run does not set the key), in key order; the seed of summary.json too,
    which ``--seed`` sets outside the scenario."""
    flats = []
    for r in runs:
        flat = _flatten(_parse_toml(getattr(r, "scenario_toml", "") or ""))
        seed = (getattr(r, "summary", None) or {}).get("seed")
        if seed is not None:
            flat["seed"] = seed
        flats.append(flat)
    keys = sorted(set().union(*[set(f) for f in flats])) if flats else []
    out = []
    for k in keys:
        values = [f.get(k) for f in flats]
        if any(v != values[0] for v in values[1:]):
            out.append((k, values))
    return out


def _toml_value(v: Any) -> str:
    if v is None:
        return "(not set)"
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def _comparison_rows(cmp: Any, n: int) -> Optional[Dict[str, Any]]:
    """The comparison as ``{"runs", "rows"}``; the older list of pairs
    (``[{"a", "b", "rows": [{"metric", "a", "b", "ratio"}]}]``) is read too."""
    if cmp is None:
        return None
    if isinstance(cmp, Mapping):
        return dict(cmp)
    if isinstance(cmp, list) and cmp and isinstance(cmp[0], Mapping) and "rows" in cmp[0]:
        first = cmp[0]
        rows = [{"metric": r.get("metric"), "values": [r.get("a"), r.get("b")], "ratios": [None, r.get("ratio")],
                 "verdicts": [None, None], "better": None} for r in first.get("rows", [])]
        return {"runs": [first.get("a"), first.get("b")], "rows": rows}
    return None


def _figures_section(cmp: Mapping[str, Any], labels: Sequence[str]) -> str:
    rows = cmp.get("rows", [])
    n = len(labels)
    header = ["figure", "better"] + list(labels) + [f"{l} / {labels[0]}" for l in labels[1:]]
    cells, classes = [], []
    for r in rows:
        metric = str(r.get("metric", ""))
        name, inner, _, _ = _figure_unit(metric)
        title = f"{name} {inner}".strip()
        values = list(r.get("values") or [])[:n] + [None] * max(0, n - len(r.get("values") or []))
        ratios = list(r.get("ratios") or [None] * n)
        verdicts = list(r.get("verdicts") or [None] * n)
        row = [f"{_esc(title)} <code>{_esc(metric)}</code>", _esc(r.get("better") or "")]
        row += [_esc(_fmt_figure(metric, v)) for v in values]
        cls = ["", ""] + [""] * n
        for i in range(1, n):
            q = ratios[i] if i < len(ratios) else None
            v = verdicts[i] if i < len(verdicts) else None
            row.append(_esc("-" if q is None else f"{q:.3g}×" + (f" {v}" if v and v != "same" else "")))
            cls.append(v if v in ("better", "worse") else "")
        cells.append(row)
        classes.append(cls)
    return _table(header, cells, left=1, classes=classes, cls="figures")


# --- Plots ---------------------------------------------------------------------------


def _time_scale(max_s: float) -> Tuple[float, str]:
    """Divisor (from ns) and unit name of an axis whose largest value is ``max_s`` ns."""
    for div, name in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
        if max_s >= div:
            return div, name
    return 1.0, "ns"


def _layout(title: str, x_title: str, y_title: str, **extra: Any) -> Dict[str, Any]:
    layout = {
        "title": {"text": title, "font": {"size": 15}},
        "xaxis": {"title": {"text": x_title}, "zeroline": False},
        "yaxis": {"title": {"text": y_title}, "zeroline": False},
        "hovermode": "closest",
        "margin": {"l": 60, "r": 20, "t": 50, "b": 50},
        "legend": {"font": {"size": 11}},
        "height": 420,
        "template": "plotly_white",
    }
    for k, v in extra.items():
        if isinstance(v, dict) and isinstance(layout.get(k), dict):
            layout[k] = {**layout[k], **v}
        else:
            layout[k] = v
    return layout


def _thin(x: _np.ndarray, y: _np.ndarray, n: int = 2000) -> Tuple[_np.ndarray, _np.ndarray]:
    if len(x) <= n:
        return x, y
    idx = _np.unique(_np.linspace(0, len(x) - 1, n).round().astype(int))
    return x[idx], y[idx]


def _frame(run: Any, name: str) -> _pd.DataFrame:
    t = getattr(run, name, None)
    return t if isinstance(t, _pd.DataFrame) else _pd.DataFrame()


def _plot_fct(runs: Sequence[Any], labels: Sequence[str]) -> Optional[Tuple[Dict, str]]:
    lines = []
    for r, l in zip(runs, labels):
        f = _frame(r, "flows")
        if "fct_ns" not in f.columns or not len(f):
            continue
        fct = _pd.to_numeric(f["fct_ns"], errors="coerce").to_numpy(float)
        done = _np.sort(fct[_np.isfinite(fct)])
        if len(done):
            lines.append((l, done, len(fct) - len(done)))
    if not lines:
        return None
    div, unit = _time_scale(max(d.max() for _, d, _ in lines))
    traces = []
    for i, (l, done, unfinished) in enumerate(lines):
        y = _np.arange(1, len(done) + 1) / len(done)
        x, y = _thin(done / div, y)
        name = f"{l} ({len(done)} flows" + (f", {unfinished} unfinished)" if unfinished else ")")
        traces.append({"type": "scatter", "mode": "lines", "line": {"shape": "hv", "color": _COLORS[labels.index(l) % 10]},
                       "x": x.tolist(), "y": y.tolist(), "name": name,
                       "hovertemplate": f"FCT %{{x:.4g}} {unit}<br>%{{y:.3f}} of the flows<extra>{_esc(l)}</extra>"})
    allv = _np.concatenate([d for _, d, _ in lines])
    pos = allv[allv > 0]
    log = len(pos) > 0 and pos.max() / pos.min() > 100
    layout = _layout("Flow completion time CDF", f"flow completion time ({unit})", "fraction of the flows",
                     xaxis={"type": "log" if log else "linear"}, yaxis={"range": [0, 1.02]})
    return {"data": traces, "layout": layout}, ("The completion times of the finished flows of each run, as a CDF "
                                                "(unfinished flows are left out and counted in the legend).")


def _nearest_rank(v: _np.ndarray, q: float) -> float:
    # The one definition, as summary.json and compare (csigsim.stats).
    return _nearest(v, q)


def _plot_slowdown(runs: Sequence[Any], labels: Sequence[str]) -> Optional[Tuple[Dict, str]]:
    bounds = _cp.DEFAULT_BUCKETS
    names = _cp._bucket_labels([float(b) for b in bounds])
    traces, used = [], set()
    for r, l in zip(runs, labels):
        f = _frame(r, "flows")
        if not {"size_bytes", "slowdown"} <= set(f.columns) or not len(f):
            continue
        s = _pd.to_numeric(f["slowdown"], errors="coerce").to_numpy(float)
        size = _pd.to_numeric(f["size_bytes"], errors="coerce").to_numpy(float)
        ok = _np.isfinite(s)
        b = _cp.size_buckets(size[ok], bounds)
        xs, p50, p99, counts = [], [], [], []
        for k in sorted(set(b.tolist())):
            v = s[ok][b == k]
            xs.append(names[k])
            used.add(k)
            p50.append(_nearest_rank(v, 0.5))
            p99.append(_nearest_rank(v, 0.99))
            counts.append(len(v))
        if not xs:
            continue
        color = _COLORS[labels.index(l) % 10]
        for stat, ys, dash in (("p50", p50, "solid"), ("p99", p99, "dash")):
            traces.append({"type": "scatter", "mode": "lines+markers", "x": xs, "y": ys, "name": f"{l}: {stat}",
                           "line": {"color": color, "dash": dash}, "customdata": counts,
                           "hovertemplate": f"%{{x}}: {stat} slowdown %{{y:.4g}} (%{{customdata}} flows)<extra>{_esc(l)}</extra>"})
    if not traces:
        return None
    order = [names[k] for k in sorted(used)]
    allv = _np.array([y for t in traces for y in t["y"]], dtype=float)
    allv = allv[allv > 0]
    log = len(allv) > 0 and allv.max() / allv.min() > 10
    layout = _layout("Slowdown by flow size", "flow size", "slowdown (FCT / ideal FCT)",
                     xaxis={"type": "category", "categoryorder": "array", "categoryarray": order},
                     yaxis={"type": "log" if log else "linear"})
    return {"data": traces, "layout": layout}, ("The median (solid) and 99th percentile (dashed) slowdown of the finished "
                                                "flows in each flow-size bucket (nearest rank, as csigsim compare).")


def _plot_cct(runs: Sequence[Any], labels: Sequence[str]) -> Optional[Tuple[Dict, str]]:
    series = []
    for r, l in zip(runs, labels):
        c = _frame(r, "collectives")
        if not {"name", "iteration", "step", "time_ns"} <= set(c.columns) or not len(c):
            continue
        tot = c[_pd.to_numeric(c["step"], errors="coerce").isna()]
        for n in dict.fromkeys(tot["name"].astype(str)):
            rows = tot[tot["name"].astype(str) == n].sort_values("iteration")
            it = _pd.to_numeric(rows["iteration"]).to_numpy(int)
            t = _pd.to_numeric(rows["time_ns"], errors="coerce").to_numpy(float)
            bus = _pd.to_numeric(rows.get("busbw_gbps", _pd.Series([_np.nan] * len(rows))), errors="coerce").to_numpy(float)
            series.append((l, n, it, t, bus))
    if not series:
        return None
    finite = _np.concatenate([t[_np.isfinite(t)] for *_, t, _ in series] + [_np.array([0.0])])
    div, unit = _time_scale(finite.max())
    names = list(dict.fromkeys(n for _, n, *_ in series))
    dashes = ("solid", "dash", "dot", "dashdot")
    traces = []
    for l, n, it, t, bus in series:
        traces.append({"type": "scatter", "mode": "lines+markers", "x": it.tolist(), "y": (t / div).tolist(),
                       "name": f"{l}: {n}" if len(names) > 1 else l, "customdata": _np.nan_to_num(bus).tolist(),
                       "line": {"color": _COLORS[labels.index(l) % 10], "dash": dashes[names.index(n) % 4]},
                       "marker": {"size": 9},
                       "hovertemplate": f"{_esc(n)} iteration %{{x}}<br>CCT %{{y:.4g}} {unit}<br>busbw %{{customdata:.4g}} Gb/s<extra>{_esc(l)}</extra>"})
    its = sorted(set(int(x) for *_, it, _, _ in series for x in it))
    layout = _layout("Collective completion time per iteration", "iteration", f"completion time ({unit})",
                     xaxis={"tickmode": "array", "tickvals": its, "range": [min(its) - 0.5, max(its) + 0.5]},
                     yaxis={"rangemode": "tozero"})
    return {"data": traces, "layout": layout}, ("Each collective's completion time (CCT) per iteration, one line per "
                                                "run and collective; the hover gives the bus bandwidth.")


def _link_series(runs: Sequence[Any], labels: Sequence[str], column: str, how: str, top: int, scale: float,
                 keep: Any = None) -> List[Tuple[str, str, _np.ndarray, _np.ndarray]]:
    out = []
    for r, l in zip(runs, labels):
        links = _frame(r, "links")
        if not {"time_ns", "from", "to", column} <= set(links.columns) or not len(links):
            continue
        v = _pd.to_numeric(links[column], errors="coerce")
        if not v.notna().any():
            # Not measured (a flow-level run's queue columns).
            continue
        score = v.groupby([links["from"], links["to"]]).agg(how).sort_values(ascending=False, kind="stable")
        if keep is not None:
            score = score[score > keep]
        frm, to = links["from"].to_numpy(), links["to"].to_numpy()
        t = _pd.to_numeric(links["time_ns"]).to_numpy(float)
        vv = v.to_numpy(float)
        for (a, b) in list(score.index)[:top]:
            m = (frm == a) & (to == b)
            order = _np.argsort(t[m], kind="stable")
            out.append((l, f"{a}->{b}", t[m][order], vv[m][order] * scale))
    return out


def _plot_links(runs: Sequence[Any], labels: Sequence[str], column: str, how: str, title: str, ylabel: str, scale: float,
                unit_text: str, caption: str, keep: Any = None, top: int = 3) -> Optional[Tuple[Dict, str]]:
    series = _link_series(runs, labels, column, how, top, scale, keep)
    if not series:
        return None
    div, unit = _time_scale(max(float(t.max()) for _, _, t, _ in series if len(t)))
    dashes = ("solid", "dash", "dot", "dashdot")
    per_run: Dict[str, int] = {}
    traces = []
    for l, link, t, v in series:
        k = per_run[l] = per_run.get(l, -1) + 1
        x, y = _thin(t / div, v, 3000)
        traces.append({"type": "scatter", "mode": "lines", "x": x.tolist(), "y": y.tolist(), "name": f"{l}: {link}",
                       "line": {"shape": "hv", "color": _COLORS[labels.index(l) % 10], "dash": dashes[k % 4]},
                       "hovertemplate": f"{_esc(link)} at %{{x:.4g}} {unit}<br>%{{y:.4g}} {unit_text}<extra>{_esc(l)}</extra>"})
    layout = _layout(title, f"time ({unit})", ylabel, yaxis={"rangemode": "tozero"})
    return {"data": traces, "layout": layout}, caption


def _plot_abw(runs: Sequence[Any], labels: Sequence[str]) -> Optional[Tuple[Dict, str]]:
    series = []
    for r, l in zip(runs, labels):
        sig = _frame(r, "signals")
        if "signal" not in sig.columns or not sig["signal"].isin(_tm.ABW_SIGNALS).any():
            continue
        try:
            mon = _tm.monitor_window_ns(r)
            v = _tm.abw_windows(r, _cp._fmt_ns(mon), lambda h: "all")
        except (ValueError, KeyError):
            continue
        if len(v):
            series.append((l, v["time_ns"].to_numpy(float), v["mean"].to_numpy(float), str(v["unit"].iloc[0])))
    if not series:
        return None
    div, unit = _time_scale(max(float(t.max()) for _, t, _, _ in series))
    units = {u for *_, u in series}
    scale, yname = (1e-9, "Gb/s") if units == {"bps"} else ((100.0, "% of the port rate") if units == {"fraction"} else (1.0, "mixed units"))
    traces = [{"type": "scatter", "mode": "lines", "x": (t / div).tolist(), "y": (m * scale).tolist(), "name": l,
               "line": {"shape": "hv", "color": _COLORS[labels.index(l) % 10]},
               "hovertemplate": f"%{{x:.4g}} {unit}: min(ABW) %{{y:.4g}} {yname}<extra>{_esc(l)}</extra>"}
              for l, t, m, _ in series]
    layout = _layout("Available bandwidth per monitor window", f"time ({unit})", f"mean min(ABW) ({yname})",
                     yaxis={"rangemode": "tozero"})
    return {"data": traces, "layout": layout}, ("The mean of the min(ABW) CSIG tags the ACKs of all flows reflected, "
                                                "per monitor window.")


def _plots(runs: Sequence[Any], labels: Sequence[str]) -> List[Tuple[str, Dict, str]]:
    multi = len(runs) > 1
    which = "of each run" if multi else "of the run"
    figures = [
        ("fct_cdf", _plot_fct(runs, labels)),
        ("slowdown_by_size", _plot_slowdown(runs, labels)),
        ("cct", _plot_cct(runs, labels)),
        ("utilization", _plot_links(runs, labels, "utilization", "mean", "Utilisation of the busiest links",
                                    "utilisation (% of the line rate)", 100.0, "%",
                                    f"The 3 directed links with the highest mean utilisation {which}, per monitor window.")),
        ("queue", _plot_links(runs, labels, "max_queue_bytes", "max", "Queues of the deepest links", "largest queue in the window (KB)",
                              1e-3, "KB", f"The 3 directed links with the deepest egress queue {which}, per monitor window "
                              "(the axis starts at 0).")),
        ("pauses", _plot_links(runs, labels, "pause_ns", "sum", "PFC pauses", "paused time in the window (us)", 1e-3, "us",
                               f"The 3 most paused directed links {which}, per monitor window.", keep=0)),
        ("abw_timeline", _plot_abw(runs, labels)),
    ]
    return [(name, f[0], f[1]) for name, f in figures if f is not None]


def _figure_html(name: str, fig: Dict, caption: str) -> str:
    div = f"fig-{name}"
    spec = _json.dumps({"data": fig["data"], "layout": fig["layout"]}, allow_nan=False, default=float)
    config = _json.dumps({"displaylogo": False, "responsive": True})
    return (f'<figure><div id="{div}" class="plot" data-figure="{_esc(name)}"></div>'
            f"<script>(function(){{var f={spec};Plotly.newPlot('{div}',f.data,f.layout,{config});}})();</script>"
            f"<figcaption>{_esc(caption)}</figcaption></figure>")


def _clean(obj: Any) -> Any:
    """NaN and infinities as None, for JSON."""
    if isinstance(obj, float):
        return obj if _math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


# --- Telemetry tables ------------------------------------------------------------------


def _telemetry(run: Any) -> str:
    out: List[str] = []
    sig = _frame(run, "signals")
    has_csig = len(sig) > 0 and "bottleneck" in sig.columns and (sig["bottleneck"].astype(str) != "").any()
    if has_csig:
        m = _tm.bottleneck_map(run).head(15)
        out.append("<h4>Bottleneck locations over the run</h4>")
        cols = [c for c in m.columns if c != "time_ns"]
        rows = [[_esc(_field_value(c, v) if not isinstance(v, float) or c != "share" else f"{v * 100:.3g} %") for c, v in zip(cols, r)]
                for r in m[cols].itertuples(index=False)]
        out.append(_table(cols, rows, left=3))
    links = _frame(run, "links")
    if len(links) and not _tm.queues_measured(run):
        out.append('<p class="note">No congestion episodes: links.csv has no queues at flow level.</p>')
    elif len(links):
        mon = _tm.monitor_window_ns(run)
        ep = _tm.episodes(run, "queue", 10_000, mon)
        out.append(f"<h4>Congestion episodes: queues of 10 KB or more for longer than one monitor window ({len(ep)})</h4>")
        if len(ep):
            shown = ep.sort_values("duration_ns", ascending=False, kind="stable").head(20)
            rows = []
            for r in shown.itertuples(index=False):
                rows.append([_esc(r.where), _esc(fmt_si(r.start_ns * 1e-9, "s")), _esc(fmt_si(r.duration_ns * 1e-9, "s")),
                             _esc(fmt_si(r.peak, "B")), _esc(_flow_list(r.flows)),
                             _esc(_flow_list(r.steps, 3) if len(r.steps) else "-")])
            out.append(_table(["where", "start", "duration", "peak queue", "flows", "collective steps"], rows, left=1))
            if len(ep) > 20:
                out.append(f'<p class="note">The 20 longest of {len(ep)}.</p>')
    return "\n".join(out) if out else '<p class="note">No CSIG signals and no links table.</p>'


# --- The page --------------------------------------------------------------------------


def _plotly_js() -> str:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError as e:  # pragma: no cover - a dependency of the package
        raise ImportError("the report draws its plots with plotly: pip install plotly") from e
    # Inside a <script> element, a closing tag in a string would end it.
    return get_plotlyjs().replace("</script", "<\\/script")


def render(runs: Sequence[Any], *, comparisons: Any = None, labels: Optional[Sequence[str]] = None, dpi: int = 90) -> str:
    """The report's HTML text. ``runs`` are Results or run directories;
    ``labels`` name them (default: their directories' names).
    ``comparisons`` are the figures of ``csigsim compare`` as ``csigsim
    report`` passes them: ``{"runs": [...], "rows": [{"metric", "values",
    "ratios", "verdicts", "better"}, ...]}``; without them the page has no
    table of figures. ``dpi`` is kept for compatibility and unused."""
    del dpi
    loaded = [_cp.read_run(r) if isinstance(r, (str, _os.PathLike)) else r for r in runs]
    labels = list(labels) if labels is not None else run_labels(runs)
    if len(labels) != len(loaded):
        raise ValueError(f"{len(labels)} labels for {len(loaded)} runs")
    names = [str((r.summary or {}).get("name", "")) for r in loaded]
    scen = sorted(set(n for n in names if n))
    title = "csigsim report: " + ", ".join(labels) + (f" ({', '.join(scen)})" if scen else "")
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_esc(title)}</title>",
             f"<style>{_CSS}</style><script>{_plotly_js()}</script></head><body>", f"<h1>{_esc(title)}</h1>"]
    runs_rows = [[_esc(l), _esc(str(getattr(r, "out", "") or "")), _esc(n)] for l, r, n in zip(labels, loaded, names)]
    parts.append(_table(["run", "directory", "scenario"], runs_rows, left=3))

    if len(loaded) > 1:
        diffs = key_differences(loaded)
        parts.append('<section id="differences"><h2>Scenario keys that differ</h2>')
        if diffs:
            rows = [[f"<code>{_esc(k)}</code>"] + [_esc(_toml_value(v)) for v in vals] for k, vals in diffs]
            parts.append(_table(["key"] + labels, rows, left=1 + len(labels), cls="differences"))
        else:
            parts.append('<p class="note">None: the runs have the same scenario and seed.</p>')
        parts.append("</section>")

    cmp = _comparison_rows(comparisons, len(loaded))
    if cmp is not None and cmp.get("rows"):
        parts.append('<section id="figures"><h2>Figures</h2>')
        what = ("each run against the first (ratio, and whether it is better or worse, by the figure's better direction)"
                if len(loaded) > 1 else "the run")
        parts.append(f'<p class="note">The figures of <code>csigsim compare</code>, {what}: what the runs were for first '
                     "(collectives, slowdown per flow-size bucket), then flows, signals and totals.</p>")
        parts.append(_figures_section(cmp, labels))
        parts.append("</section>")

    parts.append('<section id="summary"><h2>Summary</h2>')
    rows = []
    for f in SUMMARY_FIELDS:
        vals = [(r.summary or {}).get(f) for r in loaded]
        if all(v is None for v in vals):
            continue
        rows.append([_esc(f)] + [_esc(_field_value(f, v)) for v in vals])
    parts.append(_table(["field"] + labels, rows, left=1))
    for l, r in zip(labels, loaded):
        s = r.summary or {}
        if s.get("invariant_violations"):
            parts.append(f"<p>{_esc(l)}: invariant violations:</p><ul>" + "".join(f"<li>{_esc(v)}</li>" for v in s["invariant_violations"]) + "</ul>")
        if isinstance(s.get("diagnosis"), Mapping):
            parts.append(f'<p class="note">{_esc(l)}: diagnosis: {_esc(s["diagnosis"].get("message", ""))}</p>')
    parts.append("</section>")

    plots = _plots(loaded, labels)
    parts.append('<section id="plots"><h2>Plots</h2>')
    parts.append('<p class="note">Hover to read a value, drag to zoom (double-click to reset), click a legend entry to hide it.</p>')
    parts.append('<div class="plots">')
    parts.extend(_figure_html(name, _clean(fig), caption) for name, fig, caption in plots)
    parts.append("</div></section>")

    for i, (l, r) in enumerate(zip(labels, loaded)):
        parts.append(f'<section id="run{i}"><h2>Run {_esc(l)}</h2>')
        text = getattr(r, "scenario_toml", "") or ""
        parts.append("<details><summary>Scenario as run</summary>"
                     + (f"<pre>{_esc(text)}</pre>" if text else '<p class="note">No scenario.toml in the run directory.</p>')
                     + "</details>")
        parts.append("<h3>Telemetry</h3>")
        parts.append(_telemetry(r))
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(runs: Sequence[Any], path: _PathLike, *, comparisons: Any = None,
                 labels: Optional[Sequence[str]] = None, dpi: int = 90) -> _Path:
    """Writes the page of :func:`render` to ``path`` (its directory is created) and returns the path."""
    p = _Path(path)
    text = render(runs, comparisons=comparisons, labels=labels, dpi=dpi)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = _argparse.ArgumentParser(prog="python -m csigsim.report",
                                  description="Write one self-contained HTML report of run directories.")
    ap.add_argument("runs", nargs="+", help="run directories")
    ap.add_argument("--out", "-o", required=True, help="the HTML file to write")
    ap.add_argument("--compare", help="JSON file (or - for stdin) with the figures, as csigsim report passes them")
    ap.add_argument("--label", action="append", help="a run's name (once per run, in order; default: the directories' names)")
    ap.add_argument("--dpi", type=int, default=90, help=_argparse.SUPPRESS)
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    comparisons = None
    if args.compare:
        try:
            text = _sys.stdin.read() if args.compare == "-" else _Path(args.compare).read_text(encoding="utf-8")
            comparisons = _json.loads(text)
        except (OSError, ValueError) as e:
            print(f"error: {args.compare}: {e}", file=_sys.stderr)
            return 2
    if args.label is not None and len(args.label) != len(args.runs):
        print(f"error: --label given {len(args.label)} times for {len(args.runs)} runs", file=_sys.stderr)
        return 2
    for r in args.runs:
        if not (_Path(r) / "flows.csv").is_file():
            print(f"error: {r} is not a run directory: it has no flows.csv", file=_sys.stderr)
            return 2
    path = write_report(args.runs, args.out, comparisons=comparisons, labels=args.label)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    _sys.exit(main())
