"""One self-contained HTML page about one or more runs: the scenario, the
summary, every plot that applies (PNG images embedded as data URIs), the
telemetry views and, given a comparison from ``csigsim compare``, the
figures of two runs side by side. The page loads nothing from anywhere and
runs no script.

>>> import csigsim.report
>>> csigsim.report.write_report(["runs/a"], "runs/a/report.html")

``python -m csigsim.report RUN [RUN ...] --out FILE [--compare JSON|-]`` does
the same from a shell; ``csigsim report`` calls it with the comparison of
``csigsim compare`` (docs/telemetry.md).
"""

from __future__ import annotations

import argparse
import base64
import html
import io
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import plot as cp
from . import telemetry as tm

__all__ = ["render", "write_report", "main"]

PathLike = Union[str, "os.PathLike[str]"]

#: summary.json fields shown in the summary table, in order.
SUMMARY_FIELDS = (
    "name", "seed", "version", "topology", "hosts", "switches", "links", "cc", "switch_mode", "routing",
    "end_reason", "sim_time_ns", "wall_s", "flows_total", "flows_completed", "fct_p50_ns", "fct_p99_ns",
    "fct_max_ns", "slowdown_p50", "slowdown_p99", "throughput_min_gbps", "throughput_max_gbps",
    "packets_dropped", "packets_trimmed", "ecn_marks", "pauses_sent", "cnps_sent", "retransmits", "timeouts",
    "max_switch_buffer_bytes", "invariants_ok",
)

_CSS = """
body { font-family: sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
h1 { border-bottom: 2px solid #444; }
h2 { border-bottom: 1px solid #aaa; margin-top: 2em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: right; }
th { background: #f0f0f0; }
td.l, th.l { text-align: left; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 0.5em; overflow-x: auto; font-size: 0.85em; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(540px, 1fr)); gap: 1em; }
figure { margin: 0; }
figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.85em; color: #555; }
.note { color: #666; font-size: 0.9em; }
"""


def _esc(x: Any) -> str:
    return html.escape(str(x), quote=True)


def _num(v: Any) -> str:
    if v is None or (isinstance(v, float) and v != v):
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.6g}"
    return str(v)


def _table(df: pd.DataFrame, left: Sequence[str] = ()) -> str:
    head = "".join(f'<th class="l">{_esc(c)}</th>' if c in left else f"<th>{_esc(c)}</th>" for c in df.columns)
    rows = []
    for r in df.itertuples(index=False):
        cells = []
        for c, v in zip(df.columns, r):
            if isinstance(v, (list, tuple)):
                v = ", ".join(str(x) for x in v) if v else "-"
            cls = ' class="l"' if c in left else ""
            cells.append(f"<td{cls}>{_esc(_num(v) if not isinstance(v, str) else v)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _png(fig: Any, dpi: int) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in s).strip("-").lower() or "run"


def _run_section(run: Any, label: str, idx: int, dpi: int) -> str:
    out: List[str] = []
    summary = run.summary or {}
    anchor = f"run{idx}-{_slug(label)}"
    out.append(f'<section id="{anchor}"><h2>Run {idx + 1}: {_esc(summary.get("name", ""))} ({_esc(label)})</h2>')

    out.append("<h3>Summary</h3>")
    rows = [(k, summary[k]) for k in SUMMARY_FIELDS if k in summary]
    out.append(_table(pd.DataFrame(rows, columns=["field", "value"]), left=("field", "value")))
    if summary.get("invariant_violations"):
        out.append("<p>Invariant violations:</p><ul>" + "".join(f"<li>{_esc(v)}</li>" for v in summary["invariant_violations"]) + "</ul>")
    if isinstance(summary.get("diagnosis"), Mapping):
        out.append(f'<p class="note">Diagnosis: {_esc(summary["diagnosis"].get("message", ""))}</p>')

    out.append("<h3>Scenario</h3>")
    text = getattr(run, "scenario_toml", "") or ""
    out.append(f"<pre>{_esc(text)}</pre>" if text else '<p class="note">No scenario.toml in the run directory.</p>')

    out.append("<h3>Plots</h3>")
    out.append('<div class="plots">')
    skipped = []
    for name, fn in cp.PLOTS.items():
        try:
            fig = fn(run)
        except cp.NothingToPlot as e:
            skipped.append((name, str(e)))
            continue
        doc = (fn.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        out.append(f'<figure id="{anchor}-{name}"><img alt="{_esc(name)}" src="{_png(fig, dpi)}">'
                   f"<figcaption><b>{_esc(name)}</b>: {_esc(doc)}</figcaption></figure>")
    out.append("</div>")
    if skipped:
        out.append('<p class="note">Not drawn:</p><ul class="note">'
                   + "".join(f"<li>{_esc(n)}: {_esc(why)}</li>" for n, why in skipped) + "</ul>")

    out.append("<h3>Telemetry</h3>")
    out.append(_telemetry(run))
    out.append("</section>")
    return "\n".join(out)


def _telemetry(run: Any) -> str:
    out: List[str] = []
    sig = getattr(run, "signals", None)
    has_csig = isinstance(sig, pd.DataFrame) and len(sig) > 0 and "bottleneck" in sig.columns and (sig["bottleneck"].astype(str) != "").any()
    if has_csig:
        m = tm.bottleneck_map(run)
        out.append("<h4>Bottleneck locations over the run</h4>")
        out.append(_table(m.drop(columns=["time_ns"]).head(15), left=("port", "switch", "direction")))
        if sig["signal"].isin(tm.ABW_SIGNALS).any():
            for groups in ("pod", "rack"):
                try:
                    mat = tm.abw_matrix(run, groups)
                except ValueError:
                    continue
                if len(mat) > 16:
                    continue
                unit = tm.abw_windows(run, None, groups)["unit"].iloc[0]
                scale, uname = (1e9, "Gb/s") if unit == "bps" else (1.0, "fraction of the port rate")
                shown = (mat / scale).reset_index()
                out.append(f"<h4>Mean min(ABW) between {groups}s ({uname}; rows: source, columns: destination)</h4>")
                out.append(_table(shown, left=("src_group",)))
                break
    else:
        out.append('<p class="note">No CSIG signals: enable [signals.csig] for the bottleneck map and the ABW views.</p>')
    links = getattr(run, "links", None)
    if isinstance(links, pd.DataFrame) and len(links):
        mon = tm.monitor_window_ns(run)
        ep = tm.episodes(run, "queue", 10_000, mon)
        out.append(f"<h4>Congestion episodes: queues of 10 KB or more for longer than one monitor window ({len(ep)})</h4>")
        if len(ep):
            shown = ep.sort_values("duration_ns", ascending=False, kind="stable").head(20)
            shown = shown.drop(columns=["kind", "flow_id"])
            if not shown["steps"].map(len).any():
                shown = shown.drop(columns=["steps"])
            out.append(_table(shown, left=("where", "flows", "steps")))
            if len(ep) > 20:
                out.append(f'<p class="note">The 20 longest of {len(ep)}.</p>')
    return "\n".join(out)


def _comparison(cmp: Mapping[str, Any]) -> str:
    rows = pd.DataFrame(
        [(r.get("metric"), r.get("a"), r.get("b"), r.get("ratio")) for r in cmp.get("rows", [])],
        columns=["figure", "A", "B", "B / A"],
    )
    return (f"<h3>A: {_esc(cmp.get('a', ''))} &mdash; B: {_esc(cmp.get('b', ''))}</h3>"
            + _table(rows, left=("figure",)))


def render(runs: Sequence[Any], *, comparisons: Optional[Sequence[Mapping[str, Any]]] = None,
           labels: Optional[Sequence[str]] = None, dpi: int = 90) -> str:
    """The report's HTML text. ``runs`` are Results or run directories;
    ``comparisons`` are objects ``{"a": label, "b": label, "rows": [{"metric",
    "a", "b", "ratio"}, ...]}`` as ``csigsim report`` passes them."""
    import matplotlib

    matplotlib.use("Agg")  # files only: no display
    loaded = [cp.read_run(r) if isinstance(r, (str, os.PathLike)) else r for r in runs]
    if labels is None:
        labels = [str(r) if isinstance(r, (str, os.PathLike)) else str(getattr(r, "out", "") or f"run {i + 1}")
                  for i, r in enumerate(runs)]
    names = [str((r.summary or {}).get("name", "")) for r in loaded]
    title = "csigsim report: " + ", ".join(n or l for n, l in zip(names, labels))
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{_esc(title)}</title>",
             f"<style>{_CSS}</style></head><body>", f"<h1>{_esc(title)}</h1>"]
    parts.append("<nav><ul>" + "".join(
        f'<li><a href="#run{i}-{_slug(l)}">Run {i + 1}: {_esc(n)} ({_esc(l)})</a></li>'
        for i, (n, l) in enumerate(zip(names, labels))) + ("<li><a href=\"#comparison\">Comparison</a></li>" if comparisons else "")
        + "</ul></nav>")
    if comparisons:
        parts.append('<section id="comparison"><h2>Comparison</h2>')
        parts.append('<p class="note">The figures of <code>csigsim compare</code>: each run B against run A, with B / A.</p>')
        parts.extend(_comparison(c) for c in comparisons)
        parts.append("</section>")
    for i, (r, l) in enumerate(zip(loaded, labels)):
        parts.append(_run_section(r, l, i, dpi))
    parts.append("</body></html>\n")
    return "\n".join(parts)


def write_report(runs: Sequence[Any], path: PathLike, *, comparisons: Optional[Sequence[Mapping[str, Any]]] = None,
                 labels: Optional[Sequence[str]] = None, dpi: int = 90) -> Path:
    """Writes :func:`render`'s page to ``path`` (its directory is created) and returns the path."""
    p = Path(path)
    text = render(runs, comparisons=comparisons, labels=labels, dpi=dpi)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m csigsim.report",
                                 description="Write one self-contained HTML report of run directories.")
    ap.add_argument("runs", nargs="+", help="run directories")
    ap.add_argument("--out", "-o", required=True, help="the HTML file to write")
    ap.add_argument("--compare", help="JSON file (or - for stdin) with the comparisons, as csigsim report passes them")
    ap.add_argument("--dpi", type=int, default=90)
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return int(e.code or 0)
    comparisons: Optional[List[Dict[str, Any]]] = None
    if args.compare:
        try:
            text = sys.stdin.read() if args.compare == "-" else Path(args.compare).read_text(encoding="utf-8")
            comparisons = json.loads(text)
        except (OSError, ValueError) as e:
            print(f"error: {args.compare}: {e}", file=sys.stderr)
            return 2
    for r in args.runs:
        if not (Path(r) / "flows.csv").is_file():
            print(f"error: {r} is not a run directory: it has no flows.csv", file=sys.stderr)
            return 2
    path = write_report(args.runs, args.out, comparisons=comparisons, dpi=args.dpi)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
