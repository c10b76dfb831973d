"""Telemetry views of a run: what the CSIG slides show of a fabric, computed
from the run's tables (docs/telemetry.md).

- :func:`abw_windows` and :func:`abw_matrix`: the mean and the minimum of the
  reflected min(ABW) (or min(ABW/C)) between groups of hosts (racks, pods or
  groups you name), per window of any size or over the run;
- :func:`bottleneck_map` and :func:`bottleneck_modes`: where the CSIG locator
  put the bottleneck, counted by port, switch or tier, over the run or per
  window, and the most frequent location of each window;
- :func:`episodes`: congestion episodes (a link's queue, or a flow's signal,
  beyond a threshold for longer than a minimum time), attributed to the flows
  and, with collectives, to the operations and steps that crossed them.

Every view takes a :class:`csigsim.Results`, a run directory (read with
:func:`csigsim.plot.read_run`) or anything with the same table attributes,
and returns a pandas DataFrame. Views are aggregates of the monitor windows
(``monitor.window``, 100 us by default), so a view window must be a whole
number of monitor windows.
"""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np
import pandas as pd

from ._rundir import read_run

__all__ = [
    "parse_time",
    "monitor_window_ns",
    "host_groups",
    "abw_windows",
    "abw_matrix",
    "bottleneck_map",
    "bottleneck_modes",
    "episodes",
    "step_keys",
    "ABW_SIGNALS",
]

#: The CSIG signal series that carry available bandwidth, in the order tried.
ABW_SIGNALS = ("abw", "abw_c")
#: Series where a larger value is worse (the others: smaller is worse).
_HIGH_IS_BAD = ("delay", "nqd", "stamp_max", "stamp_sum", "stamp_sum_squ", "stamp_ind", "int_max_qlen")

_TIME = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*(ps|ns|us|ms|s)\s*$")
_TIME_NS = {"ps": 1e-3, "ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

GroupsLike = Union[str, Mapping[str, Sequence[str]], Callable[[str], Any]]


def parse_time(t: Union[str, int, float]) -> float:
    """A time as nanoseconds: a number (already ns) or a string with a unit
    as in scenarios (``"100us"``, ``"1s"``, ``"250ns"``)."""
    if isinstance(t, str):
        m = _TIME.match(t)
        if not m:
            raise ValueError(f"bad time {t!r}: expected a number and a unit (ps, ns, us, ms, s), like '100us'")
        return float(m.group(1)) * _TIME_NS[m.group(2)]
    v = float(t)
    if not np.isfinite(v) or v < 0:
        raise ValueError(f"bad time {t!r}: must be a finite number of ns >= 0")
    return v


# --- The run's scenario -----------------------------------------------------------


def _run(results: Any) -> Any:
    if isinstance(results, (str, os.PathLike)):
        return read_run(results)
    return results


def _scenario(results: Any) -> Dict[str, Any]:
    """The run's scenario as a dict ({} when it cannot be read)."""
    text = getattr(results, "scenario_toml", "") or ""
    if not text:
        return {}
    try:
        import tomllib  # Python >= 3.11
    except ImportError:  # pragma: no cover - older Pythons
        try:
            import tomli as tomllib  # type: ignore[no-redef]
        except ImportError:
            return {}
    try:
        return tomllib.loads(text)
    except Exception:
        return {}


def monitor_window_ns(results: Any) -> float:
    """The run's ``monitor.window`` in ns (100 us when the scenario does not set it)."""
    mon = _scenario(_run(results)).get("monitor", {})
    return parse_time(mon.get("window", "100us")) if isinstance(mon, Mapping) else 1e5


def _view_window(results: Any, window: Any) -> Optional[float]:
    """The view window in ns (None: the whole run), checked against the monitor window."""
    if window is None:
        return None
    w = parse_time(window)
    mon = monitor_window_ns(results)
    k = w / mon
    if w <= 0 or k < 1 - 1e-9 or abs(k - round(k)) > 1e-6:
        raise ValueError(
            f"window {window!r} must be a whole number of monitor windows ({mon:g} ns, monitor.window): "
            "set a finer monitor.window in the scenario"
        )
    return w


def _bin(time_ns: pd.Series, w: Optional[float]) -> np.ndarray:
    t = pd.to_numeric(time_ns).to_numpy(float)
    if w is None:
        return np.zeros(len(t))
    return np.floor(t / w + 1e-9) * w


# --- Host groups -------------------------------------------------------------------


def _adjacency(results: Any) -> Tuple[List[str], Dict[str, List[str]]]:
    """Hosts (in order of first appearance) and each node's neighbours, from
    links.csv, else from a custom topology's links."""
    edges: List[Tuple[str, str]] = []
    links = getattr(results, "links", None)
    if isinstance(links, pd.DataFrame) and len(links) and {"from", "to"} <= set(links.columns):
        pairs = links[["from", "to"]].astype(str).drop_duplicates()
        edges = list(zip(pairs["from"], pairs["to"]))
    else:
        topo = _scenario(results).get("topology", {})
        for link in topo.get("links", []) if isinstance(topo, Mapping) else []:
            if isinstance(link, Mapping) and "a" in link and "b" in link:
                edges.append((str(link["a"]), str(link["b"])))
                edges.append((str(link["b"]), str(link["a"])))
    nbrs: Dict[str, List[str]] = {}
    for a, b in edges:
        nbrs.setdefault(a, [])
        if b not in nbrs[a]:
            nbrs[a].append(b)
    # Hosts in host-index order: a custom topology names them; generated
    # topologies call them h0 .. h{N-1} (docs/topologies.md); then any other
    # flow endpoint.
    topo = _scenario(results).get("topology", {})
    named = topo.get("hosts") if isinstance(topo, Mapping) else None
    if isinstance(named, list):
        hosts = [str(h) for h in named]
    else:
        hosts = sorted((n for n in nbrs if re.fullmatch(r"h[0-9]+", n)), key=lambda n: int(n[1:]))
    flows = getattr(results, "flows", None)
    if isinstance(flows, pd.DataFrame) and len(flows):
        seen = set(hosts)
        for h in list(flows["src"].astype(str)) + list(flows["dst"].astype(str)):
            if h not in seen:
                hosts.append(h)
                seen.add(h)
    return hosts, nbrs


def host_groups(results: Any, groups: GroupsLike = "rack") -> Dict[str, str]:
    """Each host's group name.

    ``groups`` is ``"rack"`` (the switch a host is attached to, named after it),
    ``"pod"`` (racks whose switches have the same set of uplink neighbours
    form a pod, ``pod0``, ``pod1``, ... in order of their first host), ``"host"``
    (one group per host), a mapping ``{group: [host, ...]}`` (hosts not named
    are left out), or a function host name -> group name. Racks and pods come
    from links.csv (``monitor.links``) or a custom topology's ``links``."""
    results = _run(results)
    if isinstance(groups, Mapping):
        out: Dict[str, str] = {}
        for g, members in groups.items():
            for h in members:
                out[str(h)] = str(g)
        return out
    hosts, nbrs = _adjacency(results)
    if callable(groups):
        return {h: str(groups(h)) for h in hosts}
    if groups == "host":
        return {h: h for h in hosts}
    if groups not in ("rack", "pod"):
        raise ValueError(f"groups must be 'rack', 'pod', 'host', a mapping or a function, not {groups!r}")
    if not nbrs:
        raise ValueError("racks and pods need the topology's links: the run has no links.csv (monitor.links = false) "
                         "and no custom topology; name the groups instead")
    host_set = set(hosts)
    rack = {h: nbrs[h][0] for h in hosts if nbrs.get(h)}
    if groups == "rack":
        return rack
    pods: Dict[Tuple[str, ...], str] = {}
    out = {}
    for h in hosts:
        if h not in rack:
            continue
        ups = tuple(sorted(n for n in nbrs.get(rack[h], []) if n not in host_set))
        if ups not in pods:
            pods[ups] = f"pod{len(pods)}"
        out[h] = pods[ups]
    return out


def _group_order(mapping: Dict[str, str]) -> List[str]:
    return list(dict.fromkeys(mapping.values()))


# --- Available bandwidth between groups -------------------------------------------------


def _abw_rows(results: Any, signal: Optional[str]) -> Tuple[pd.DataFrame, str]:
    sig = getattr(results, "signals", None)
    if not isinstance(sig, pd.DataFrame) or len(sig) == 0 or "signal" not in sig.columns:
        raise ValueError("the run has no signals.csv: enable [signals.csig] with type = \"abw\" or \"abw_c\"")
    names = [signal] if signal else [s for s in ABW_SIGNALS if (sig["signal"] == s).any()]
    if not names or not (sig["signal"] == names[0]).any():
        raise ValueError(f"signals.csv has no {signal or 'abw or abw_c'} rows: set [signals.csig] type = \"abw\" or \"abw_c\"")
    return sig[sig["signal"] == names[0]], names[0]


def abw_windows(results: Any, window: Any = "100us", groups: GroupsLike = "rack", *,
                signal: Optional[str] = None) -> pd.DataFrame:
    """The reflected min(ABW) between groups of hosts per view window.

    One row per window and (source group, destination group) pair that had
    samples, with columns ``time_ns`` (start of the window; 0 for
    ``window=None``, the whole run), ``src_group``, ``dst_group``, ``samples``
    (ACKs), ``mean`` (the mean over those ACKs: signals.csv's window means
    weighted by their samples), ``min`` (the smallest value any ACK
    reflected) and ``unit`` (``bps`` for ``abw``, ``fraction`` for ``abw_c``).
    A flow belongs to the pair of its source's and destination's groups."""
    results = _run(results)
    w = _view_window(results, window)
    rows, name = _abw_rows(results, signal)
    g = host_groups(results, groups)
    flows = results.flows
    src = dict(zip(pd.to_numeric(flows["flow_id"]).astype(int), flows["src"].astype(str)))
    dst = dict(zip(pd.to_numeric(flows["flow_id"]).astype(int), flows["dst"].astype(str)))
    fid = pd.to_numeric(rows["flow_id"]).astype(int)
    df = pd.DataFrame({
        "time_ns": _bin(rows["time_ns"], w),
        "src_group": [g.get(src.get(f, ""), None) for f in fid],
        "dst_group": [g.get(dst.get(f, ""), None) for f in fid],
        "samples": pd.to_numeric(rows["samples"]).to_numpy(float),
        "weighted": pd.to_numeric(rows["mean"]).to_numpy(float) * pd.to_numeric(rows["samples"]).to_numpy(float),
        "min": pd.to_numeric(rows["min"]).to_numpy(float),
    })
    df = df.dropna(subset=["src_group", "dst_group"])
    out = df.groupby(["time_ns", "src_group", "dst_group"], sort=False).agg(
        samples=("samples", "sum"), weighted=("weighted", "sum"), min=("min", "min")).reset_index()
    out["mean"] = out["weighted"] / out["samples"]
    out["samples"] = out["samples"].astype("int64")
    out["unit"] = "bps" if name == "abw" else "fraction"
    order = {k: i for i, k in enumerate(_group_order(g))}
    out = out.sort_values(["time_ns", "src_group", "dst_group"],
                          key=lambda s: s.map(order) if s.name != "time_ns" else s, kind="stable")
    return out[["time_ns", "src_group", "dst_group", "samples", "mean", "min", "unit"]].reset_index(drop=True)


def abw_matrix(results: Any, groups: GroupsLike = "rack", *, stat: str = "mean", window: Any = None,
               time_ns: Optional[float] = None, signal: Optional[str] = None) -> pd.DataFrame:
    """The min(ABW) view as a matrix: rows are source groups, columns
    destination groups (every group of ``groups``, in order of their first
    host), cells the ``stat`` (``"mean"`` or ``"min"``) of the reflected
    values over the run, or with ``window`` and ``time_ns`` over the window
    that starts at ``time_ns``. A pair without samples is NaN."""
    if stat not in ("mean", "min"):
        raise ValueError(f"stat must be 'mean' or 'min', not {stat!r}")
    results = _run(results)
    v = abw_windows(results, window, groups, signal=signal)
    if window is not None:
        if time_ns is None:
            raise ValueError("give time_ns (the start of the window) with window")
        v = v[np.isclose(v["time_ns"], float(time_ns))]
    names = _group_order(host_groups(results, groups))
    m = v.pivot_table(index="src_group", columns="dst_group", values=stat, aggfunc="first")
    m = m.reindex(index=names, columns=names)
    m.index.name, m.columns.name = "src_group", "dst_group"
    return m


# --- Bottleneck locations --------------------------------------------------------------


def _locator_bits(results: Any) -> Optional[int]:
    csig = _scenario(results).get("signals", {}).get("csig", {})
    if not isinstance(csig, Mapping) or not csig:
        return None
    if "locator_bits" in csig:
        return int(csig["locator_bits"])
    return 16 if csig.get("size", "compact") == "wide" else 7


def _csig_rows(results: Any, signal: Optional[str]) -> pd.DataFrame:
    sig = getattr(results, "signals", None)
    if not isinstance(sig, pd.DataFrame) or len(sig) == 0 or "bottleneck" not in sig.columns:
        raise ValueError("the run has no CSIG signals: enable [signals.csig] (the locator names the bottleneck)")
    rows = sig[sig["bottleneck"].astype(str) != ""]
    if signal is not None:
        rows = rows[rows["signal"] == signal]
    return rows


def bottleneck_map(results: Any, by: str = "port", window: Any = None, *,
                   signal: Optional[str] = None) -> pd.DataFrame:
    """How often the CSIG locator named each bottleneck.

    Each row of signals.csv names the most frequent writer of a flow's
    window (``bottleneck``, ``locator``); the map counts them. ``by`` is
    ``"port"`` (the egress port ``from->to``), ``"switch"`` or ``"tier"``
    (with ``direction``, up or down, decoded from the locator). One row per
    location (per view window when ``window`` is given), most samples first,
    with ``time_ns`` (0 over the run), the location's columns, ``samples``
    (the ACKs of those flow-windows), ``flow_windows`` (rows of signals.csv),
    ``flows`` (distinct flows) and ``share`` (of the window's samples)."""
    if by not in ("port", "switch", "tier"):
        raise ValueError(f"by must be 'port', 'switch' or 'tier', not {by!r}")
    results = _run(results)
    w = _view_window(results, window)
    rows = _csig_rows(results, signal)
    bits = _locator_bits(results)
    bn = rows["bottleneck"].astype(str)
    parts = bn.str.split("->", n=1, expand=True)
    loc = pd.to_numeric(rows["locator"], errors="coerce").to_numpy(float)
    df = pd.DataFrame({
        "time_ns": _bin(rows["time_ns"], w),
        "port": bn.to_numpy(),
        "switch": parts[0].to_numpy() if len(rows) else np.array([], dtype=object),
        "tier": np.floor(loc / 2 ** (bits - 2)) if bits else np.nan,
        "direction": np.where(np.floor(loc / 2 ** (bits - 3)) % 2 == 1, "down", "up") if bits else "",
        "samples": pd.to_numeric(rows["samples"]).to_numpy(float),
        "flow_id": pd.to_numeric(rows["flow_id"]).to_numpy(int),
    })
    keys = {"port": ["port", "switch", "tier", "direction"], "switch": ["switch", "tier"], "tier": ["tier", "direction"]}[by]
    g = df.groupby(["time_ns"] + keys, sort=False, dropna=False).agg(
        samples=("samples", "sum"), flow_windows=("flow_id", "size"), flows=("flow_id", "nunique")).reset_index()
    g["samples"] = g["samples"].astype("int64")
    total = g.groupby("time_ns")["samples"].transform("sum")
    g["share"] = g["samples"] / total.where(total > 0, 1)
    if "tier" in g.columns:
        g["tier"] = g["tier"].astype("Int64")
    g = g.sort_values(["time_ns", "samples", keys[0]], ascending=[True, False, True], kind="stable")
    return g.reset_index(drop=True)


def bottleneck_modes(results: Any, window: Any = "100us", by: str = "port", *,
                     signal: Optional[str] = None) -> pd.DataFrame:
    """The most frequent bottleneck location (the mode, by samples) of each
    view window: the first row of :func:`bottleneck_map` per window."""
    m = bottleneck_map(results, by, window, signal=signal)
    return m.groupby("time_ns", sort=True).head(1).reset_index(drop=True)


# --- Congestion episodes ------------------------------------------------------------------


def _runs_of(idx: np.ndarray) -> List[Tuple[int, int]]:
    """Consecutive runs [first, last] in a sorted array of window indices."""
    if len(idx) == 0:
        return []
    breaks = np.nonzero(np.diff(idx) != 1)[0]
    starts = np.concatenate([[0], breaks + 1])
    ends = np.concatenate([breaks, [len(idx) - 1]])
    return [(int(idx[s]), int(idx[e])) for s, e in zip(starts, ends)]


def _steps_of(results: Any, flows: Sequence[int], start: float, end: float) -> List[str]:
    """The collective steps whose flows include any of ``flows`` and whose span
    overlaps [start, end), as ``name #collective_id itITERATION stepSTEP``."""
    return [f"{n} #{c} it{i} step{s}" for n, c, i, s in step_keys(results, flows, start, end)]


def step_keys(results: Any, flows: Sequence[int], start: float, end: float) -> List[Tuple[str, int, int, int]]:
    """The collective steps whose flows include any of ``flows`` and whose span
    overlaps [start, end), as ``(name, collective_id, iteration, step)``."""
    coll = getattr(results, "collectives", None)
    if not isinstance(coll, pd.DataFrame) or len(coll) == 0 or not flows:
        return []
    steps = coll[pd.to_numeric(coll["step"]).notna()]
    fl = np.asarray(sorted(flows))
    out = []
    for r in steps.itertuples(index=False):
        first, n = int(r.first_flow), int(r.flows)
        if not np.any((fl >= first) & (fl < first + n)):
            continue
        s = float(r.start_ns) if pd.notna(r.start_ns) else np.inf
        f = float(r.finish_ns) if pd.notna(r.finish_ns) else np.inf
        if s < end and f >= start:
            out.append((str(r.name), int(r.collective_id), int(r.iteration), int(r.step)))
    return out


def queues_measured(results: Any) -> bool:
    """Whether the run's links.csv has queues: False without a links table
    and at flow level (``engine.fidelity = "flow"``), whose links.csv leaves
    ``max_queue_bytes``, ``drops``, ``ecn_marks``, ``trims`` and
    ``pause_ns`` empty (NaN): the fluid has no queues."""
    links = getattr(_run(results), "links", None)
    if not isinstance(links, pd.DataFrame) or len(links) == 0 or "max_queue_bytes" not in links.columns:
        return False
    return bool(pd.to_numeric(links["max_queue_bytes"], errors="coerce").notna().any())


def episodes(results: Any, source: str = "queue", threshold: Any = None, min_duration: Any = 0, *,
             signal: Optional[str] = None, stat: str = "mean") -> pd.DataFrame:
    """Congestion episodes: consecutive monitor windows in which a value is
    beyond ``threshold``, lasting longer than ``min_duration``.

    ``source="queue"``: a directed link's ``max_queue_bytes`` (links.csv) at
    or above ``threshold`` bytes (default 10 KB); a ValueError at flow
    level, which measures no queue (:func:`queues_measured`). ``source="signal"``:
    a flow's reflected ``signal`` (default the run's CSIG type) with its
    window ``stat`` (``mean``, ``min`` or ``max``) at or above ``threshold``
    for delays and queue stamps, at or below it for ABW. Times are strings
    with units or ns; an episode's duration is its windows times the monitor
    window, so ``min_duration`` resolves to the monitor window.

    One row per episode, in start order: ``kind`` (``queue``/``signal``),
    ``where`` (``from->to`` for a queue; for a signal, the most frequent
    bottleneck of the episode), ``flow_id`` (signal episodes), ``start_ns``,
    ``end_ns``, ``duration_ns``, ``peak`` (the largest queue, or the worst
    value), ``flows`` (the flows that crossed it: for a queue, the flows whose
    CSIG bottleneck was the link in those windows and, for a link into a
    host, the flows to that host that were under way; for a signal, the
    flow), and ``steps`` (the collective steps whose flows those are and
    whose span overlaps the episode)."""
    results = _run(results)
    mon = monitor_window_ns(results)
    min_d = parse_time(min_duration)
    cols = ["kind", "where", "flow_id", "start_ns", "end_ns", "duration_ns", "peak", "flows", "steps"]
    out: List[Dict[str, Any]] = []
    flows = results.flows
    if source == "queue":
        thr = 10_000.0 if threshold is None else float(threshold)
        links = getattr(results, "links", None)
        if not isinstance(links, pd.DataFrame) or len(links) == 0:
            raise ValueError("queue episodes need links.csv (monitor.links = true)")
        if not queues_measured(results):
            raise ValueError("queue episodes need measured queues: links.csv's queue columns are empty at flow level "
                             "(engine.fidelity = \"flow\"), which has no queues")
        q = pd.to_numeric(links["max_queue_bytes"]).to_numpy(float)
        hot = links[q >= thr]
        sig = getattr(results, "signals", None)
        has_bn = isinstance(sig, pd.DataFrame) and len(sig) > 0 and "bottleneck" in sig.columns
        for (a, b), rows in hot.groupby([hot["from"].astype(str), hot["to"].astype(str)], sort=False):
            idx = np.unique(np.round(pd.to_numeric(rows["time_ns"]).to_numpy(float) / mon).astype(np.int64))
            for first, last in _runs_of(idx):
                start, end = first * mon, (last + 1) * mon
                if end - start <= min_d:
                    continue
                t = pd.to_numeric(rows["time_ns"]).to_numpy(float)
                sel = (t >= start - 1e-6) & (t < end)
                crossing: set = set()
                if has_bn:
                    st = pd.to_numeric(sig["time_ns"]).to_numpy(float)
                    m = (sig["bottleneck"].astype(str) == f"{a}->{b}").to_numpy() & (st >= start) & (st < end)
                    crossing |= set(pd.to_numeric(sig["flow_id"][m]).astype(int))
                to_host = flows["dst"].astype(str) == b
                if to_host.any():
                    s = pd.to_numeric(flows["start_ns"]).to_numpy(float)
                    f = pd.to_numeric(flows["finish_ns"]).fillna(np.inf).to_numpy(float)
                    active = to_host.to_numpy() & (s < end) & (f >= start)
                    crossing |= set(pd.to_numeric(flows["flow_id"][active]).astype(int))
                fl = sorted(int(x) for x in crossing)
                out.append({"kind": "queue", "where": f"{a}->{b}", "flow_id": pd.NA, "start_ns": start, "end_ns": end,
                            "duration_ns": end - start, "peak": float(pd.to_numeric(rows["max_queue_bytes"][sel]).max()),
                            "flows": fl, "steps": _steps_of(results, fl, start, end)})
    elif source == "signal":
        if stat not in ("mean", "min", "max"):
            raise ValueError(f"stat must be 'mean', 'min' or 'max', not {stat!r}")
        sig = getattr(results, "signals", None)
        if not isinstance(sig, pd.DataFrame) or len(sig) == 0:
            raise ValueError("signal episodes need signals.csv ([signals.csig] or [signals.stamp])")
        if signal is None:
            csig = sig[sig["bottleneck"].astype(str) != ""]["signal"] if "bottleneck" in sig.columns else sig["signal"]
            signal = str(csig.iloc[0]) if len(csig) else str(sig["signal"].iloc[0])
        rows = sig[sig["signal"] == signal]
        if threshold is None:
            raise ValueError("give the threshold of a signal episode, in the signal's unit (ns, bps, fraction, B)")
        thr = float(threshold) if not isinstance(threshold, str) else parse_time(threshold)
        high = signal in _HIGH_IS_BAD
        v = pd.to_numeric(rows[stat]).to_numpy(float)
        hot = rows[(v >= thr) if high else (v <= thr)]
        for fid, r in hot.groupby(pd.to_numeric(hot["flow_id"]).astype(int), sort=True):
            t = pd.to_numeric(r["time_ns"]).to_numpy(float)
            idx = np.round(t / mon).astype(np.int64)
            for first, last in _runs_of(idx):
                start, end = first * mon, (last + 1) * mon
                if end - start <= min_d:
                    continue
                part = r[(t >= start - 1e-6) & (t < end)]
                vals = pd.to_numeric(part[stat]).to_numpy(float)
                where = ""
                if "bottleneck" in part.columns:
                    bn = part[part["bottleneck"].astype(str) != ""]
                    if len(bn):
                        where = str(bn.groupby(bn["bottleneck"].astype(str))["samples"].sum().idxmax())
                out.append({"kind": "signal", "where": where, "flow_id": int(fid), "start_ns": start, "end_ns": end,
                            "duration_ns": end - start, "peak": float(vals.max() if high else vals.min()),
                            "flows": [int(fid)], "steps": _steps_of(results, [int(fid)], start, end)})
    else:
        raise ValueError(f"source must be 'queue' or 'signal', not {source!r}")
    df = pd.DataFrame(out, columns=cols)
    if len(df):
        df = df.sort_values(["start_ns", "where"], kind="stable").reset_index(drop=True)
        df["flow_id"] = df["flow_id"].astype("Int64")
    return df
