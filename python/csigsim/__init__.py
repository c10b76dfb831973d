"""csigsim: a deterministic packet-level simulator of datacenter and AI fabrics.

>>> import csigsim
>>> res = csigsim.run("scenarios/incast.toml", seed=2, overrides={"transport.cc": "dctcp"})
>>> res.summary["fct_p99_ns"], res.flows.head()

A scenario is a path to a TOML file, a TOML string, or a dict with the same
structure as the TOML file (see the "Scenario core" in the docs).
"""

from __future__ import annotations

import io
import json
import math
import numbers
import os
import re
from functools import cached_property
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

import pandas as pd

from . import _core
from ._core import ScenarioError

__version__: str = _core.version()

__all__ = ["run", "validate", "Results", "ScenarioError", "to_toml", "__version__"]

ScenarioLike = Union[str, "os.PathLike[str]", Mapping[str, Any]]
OverridesLike = Union[Mapping[str, Any], Sequence[str], None]


class Results:
    """The outputs of one run: the summary, per-flow and per-link tables."""

    def __init__(self, raw: Mapping[str, str], out: Optional[Path] = None) -> None:
        #: The raw texts, exactly as the engine writes them to a run directory.
        self.summary_json: str = raw["summary_json"]
        self.flows_csv: str = raw["flows_csv"]
        self.links_csv: str = raw["links_csv"]
        #: Reflected signals per flow and window (empty when no signal is enabled).
        self.signals_csv: str = raw.get("signals_csv", "")
        #: Congestion-control state per flow and window (empty unless monitor.cc is on).
        self.cc_csv: str = raw.get("cc_csv", "")
        #: The scenario as run (after overrides).
        self.scenario_toml: str = raw["scenario_toml"]
        #: The run directory written by ``run(..., out=...)``, or None.
        self.out: Optional[Path] = out
        self.summary: Dict[str, Any] = json.loads(self.summary_json)

    # Parsed lazily: a large run's links table can be big and many callers
    # only want the summary.
    @cached_property
    def flows(self) -> pd.DataFrame:
        """One row per flow (columns described in docs/outputs.md)."""
        return _read_csv(self.flows_csv, text_columns=("name", "src", "dst"))

    @cached_property
    def links(self) -> pd.DataFrame:
        """One row per directed link per monitor window (empty if monitor.links is off)."""
        return _read_csv(self.links_csv, text_columns=("from", "to"))

    @cached_property
    def signals(self) -> pd.DataFrame:
        """Reflected signals per flow and monitor window (empty when no signal is on)."""
        return _read_csv(self.signals_csv, text_columns=("signal", "unit", "bottleneck"))

    @cached_property
    def cc(self) -> pd.DataFrame:
        """Congestion-control state per flow and monitor window (empty unless monitor.cc is on)."""
        return _read_csv(self.cc_csv, text_columns=("cc",))

    def write(self, dir: Union[str, "os.PathLike[str]"]) -> Path:
        """Writes the run directory (the same files, byte for byte, as ``out=``)."""
        d = Path(dir)
        d.mkdir(parents=True, exist_ok=True)
        _write_text(d / "summary.json", self.summary_json + "\n")
        _write_text(d / "flows.csv", self.flows_csv)
        # Like the engine: optional files are written when present and a stale
        # copy from an earlier run in the same directory is removed.
        for name, text in (("links.csv", self.links_csv), ("signals.csv", self.signals_csv), ("cc.csv", self.cc_csv)):
            if text:
                _write_text(d / name, text)
            elif (d / name).exists():
                (d / name).unlink()
        _write_text(d / "scenario.toml", self.scenario_toml)
        return d

    def __repr__(self) -> str:
        s = self.summary
        sim_us = s.get("sim_time_ns", 0.0) / 1000.0
        out = f", out={str(self.out)!r}" if self.out is not None else ""
        return (
            f"<csigsim.Results {s.get('name', '')!r}: {s.get('flows_completed')}/{s.get('flows_total')} flows completed, "
            f"{sim_us:g} us simulated, {s.get('end_reason')}{out}>"
        )


def run(
    scenario: ScenarioLike,
    *,
    seed: Optional[int] = None,
    overrides: OverridesLike = None,
    out: Union[str, "os.PathLike[str]", None] = None,
) -> Results:
    """Runs a scenario and returns its :class:`Results`.

    ``scenario`` is a path to a TOML file, a TOML string (anything containing a
    newline), or a dict shaped like the TOML file. ``seed`` replaces the
    scenario's seed. ``overrides`` is a dict ``{"transport.cc": "dctcp"}`` or a
    list of ``"KEY=VALUE"`` strings, like the CLI's ``--set``. With ``out``, the
    run directory (summary.json, flows.csv, links.csv, scenario.toml) is
    written there too. Raises :class:`ScenarioError` on bad input; Ctrl-C
    stops the run and raises KeyboardInterrupt.
    """
    seed = _check_seed(seed)
    ov = _overrides(overrides)
    out_path = Path(out) if out is not None else None
    kind, arg, source = _source(scenario)
    if kind == "file":
        raw = _core.run_file(arg, seed, ov, out_path)
    else:
        raw = _core.run_toml(arg, source, os.getcwd(), seed, ov, out_path)
    return Results(raw, out_path)


def validate(scenario: ScenarioLike, overrides: OverridesLike = None) -> None:
    """Loads and checks a scenario without running it; raises :class:`ScenarioError`."""
    ov = _overrides(overrides)
    kind, arg, source = _source(scenario)
    if kind == "file":
        _core.validate_file(arg, ov)
    else:
        _core.validate_toml(arg, source, os.getcwd(), ov)


def _source(scenario: ScenarioLike):
    """Classifies a scenario argument as ("file", path, None) or ("text", toml, name)."""
    if isinstance(scenario, Mapping):
        return "text", to_toml(scenario), "<dict>"
    if isinstance(scenario, str):
        # A path never contains a newline; any real scenario text does.
        if "\n" in scenario:
            return "text", scenario, "<string>"
        return "file", Path(scenario), None
    if isinstance(scenario, os.PathLike):
        return "file", Path(scenario), None
    raise TypeError(f"scenario must be a path, a TOML string or a dict, not {type(scenario).__name__}")


def _check_seed(seed: Any) -> Optional[int]:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or not 0 <= int(seed) < 2**64:
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


def _read_csv(text: str, text_columns: Sequence[str]) -> pd.DataFrame:
    if not text.strip():
        return pd.DataFrame()
    header = text.split("\n", 1)[0].split(",")
    # Names stay strings (a host called "7" is not a number) and an empty name
    # is "", while empty numeric cells (an unfinished flow's fct_ns) are NaN.
    return pd.read_csv(
        io.StringIO(text),
        dtype={c: str for c in text_columns if c in header},
        keep_default_na=False,
        na_values={c: [""] for c in header if c not in text_columns},
    )


def _write_text(path: Path, text: str) -> None:
    # newline="" keeps the engine's "\n" on every platform.
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)


# --- A small TOML writer for dict scenarios -------------------------------

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _str(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _key(k: Any) -> str:
    if not isinstance(k, str):
        raise TypeError(f"TOML keys must be strings, got {k!r}")
    return k if _BARE_KEY.match(k) else _str(k)


def _value(v: Any, where: str) -> str:
    if isinstance(v, bool):  # before int: bool is an int subclass
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, os.PathLike):
        return _str(os.fspath(v))
    if isinstance(v, Mapping):
        items = [f"{_key(k)} = {_value(x, f'{where}.{k}')}" for k, x in v.items() if x is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(v, (list, tuple)):
        vals = [_value(x, f"{where}[{i}]") for i, x in enumerate(v)]
        if v and all(isinstance(x, Mapping) for x in v):
            # One inline table per line, like topology.links in the docs.
            return "[\n" + "".join(f"  {x},\n" for x in vals) + "]"
        return "[" + ", ".join(vals) + "]"
    if v is None:
        raise TypeError(f"{where}: None has no TOML form (leave the key out instead)")
    raise TypeError(f"{where}: cannot write a {type(v).__name__} as TOML")


def _is_table_array(v: Any) -> bool:
    return isinstance(v, (list, tuple)) and len(v) > 0 and all(isinstance(x, Mapping) for x in v)


def _table(d: Mapping[str, Any], path: List[str], lines: List[str]) -> None:
    sub, arrays = [], []
    for k, v in d.items():
        if v is None:
            continue  # None means "not set": the engine's default applies
        if isinstance(v, Mapping):
            sub.append((k, v))
        elif not path and _is_table_array(v):
            arrays.append((k, v))  # top-level lists of tables: [[flow]], [[workload]]
        else:
            lines.append(f"{_key(k)} = {_value(v, '.'.join(path + [k]))}")
    # TOML needs a table's plain keys before its sub-tables.
    for k, v in sub:
        p = path + [k]
        lines += ["", "[" + ".".join(_key(x) for x in p) + "]"]
        _table(v, p, lines)
    for k, arr in arrays:
        for el in arr:
            lines += ["", f"[[{_key(k)}]]"]
            _table(el, [k], lines)


def to_toml(scenario: Mapping[str, Any]) -> str:
    """Writes a scenario dict as TOML text (None values are left out)."""
    if not isinstance(scenario, Mapping):
        raise TypeError(f"expected a dict, got {type(scenario).__name__}")
    lines: List[str] = []
    _table(scenario, [], lines)
    return "\n".join(lines).lstrip("\n") + "\n"
