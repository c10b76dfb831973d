"""Reading a run directory back into the tables :class:`csigsim.Results`
has (``csigsim.read_run``, ``csigsim.plot.read_run``). Its own module so
that plot and telemetry both use it without importing each other."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Mapping, Sequence, Union

import numpy as np
import pandas as pd

_TEXT_COLUMNS = {
    "flows": ("name", "src", "dst"),
    "links": ("from", "to"),
    "signals": ("signal", "unit", "bottleneck"),
    "cc": ("cc",),
    "collectives": ("name", "op"),
    "rpcs": ("name", "class", "src", "dst"),
}


class RunTables:
    """The tables of a run directory, with the attributes of :class:`csigsim.Results`
    that hold data: ``summary`` (dict), ``flows``, ``links``, ``signals``, ``cc``,
    ``collectives``, ``rpcs`` (DataFrames; empty for a file the run did not
    write), ``scenario_toml`` (the scenario text; "" without scenario.toml)
    and ``out`` (the directory)."""

    def __init__(self, out: Path, summary: Dict[str, Any], tables: Mapping[str, pd.DataFrame],
                 scenario_toml: str = "") -> None:
        self.out = out
        self.summary = summary
        self.scenario_toml = scenario_toml
        self.flows: pd.DataFrame = tables["flows"]
        self.links: pd.DataFrame = tables["links"]
        self.signals: pd.DataFrame = tables["signals"]
        self.cc: pd.DataFrame = tables["cc"]
        self.collectives: pd.DataFrame = tables["collectives"]
        self.rpcs: pd.DataFrame = tables["rpcs"]

    def __repr__(self) -> str:
        return f"<csigsim.plot.RunTables {self.summary.get('name', '')!r} from {str(self.out)!r}>"


def _read_table(path: Path, text_columns: Sequence[str]) -> pd.DataFrame:
    if not path.exists():
        return pd.DataFrame()
    with open(path, encoding="utf-8") as f:
        header = f.readline().rstrip("\r\n").split(",")
    # Text columns stay strings ("" for an empty name); an empty numeric cell
    # is NaN: the dtypes Results gives (docs/outputs.md, Python).
    return pd.read_csv(
        path,
        dtype={c: str for c in text_columns if c in header},
        keep_default_na=False,
        na_values={c: [""] for c in header if c not in text_columns},
    )


#: Number columns the CSV writes with fixed decimals (read back as float64).
_FIXED_DECIMALS = ("slowdown", "utilization", "algbw_gbps", "busbw_gbps")


def _np_all_whole(x: np.ndarray) -> bool:
    return bool(np.isfinite(x).all() and (x == np.trunc(x)).all() and (np.abs(x) < 2**63).all())


def _read_parquet(path: Path, text_columns: Sequence[str]) -> pd.DataFrame:
    """A Parquet twin (``csigsim run --parquet``) as the CSV file reads: the
    same column names; times in ns are int64 when every value is a whole
    number of nanoseconds, else float64; nulls NaN; text columns strings."""
    if not path.exists():
        return pd.DataFrame()
    try:
        import pyarrow.parquet as pq
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("reading Parquet needs pyarrow: pip install 'csigsim[parquet]'") from e
    table = pq.read_table(path)
    df = table.to_pandas()
    out = {}
    for c in df.columns:
        v = df[c]
        if c in text_columns:
            out[c] = v.astype(str)
        elif c.endswith("_ns") and v.dtype.kind == "f":
            # Times in ns, as the CSV: int64 when every value is a whole
            # number of nanoseconds (and none is missing), else float64.
            ns = v.to_numpy(dtype=float)
            whole = len(ns) and _np_all_whole(ns)
            out[c] = ns.astype(np.int64) if whole else ns
        elif c.endswith("_ps"):
            # Twins written before the Parquet files named times as the CSV.
            ps = v.to_numpy(dtype=float)
            ns = ps / 1000.0
            whole = np.isfinite(ns).all() and (np.asarray(v.dropna(), dtype=np.int64) % 1000 == 0).all()
            out[c[:-3] + "_ns"] = (np.asarray(v, dtype=np.int64) // 1000) if whole else ns
        elif v.dtype.kind == "f" and c not in _FIXED_DECIMALS and len(v) and np.isfinite(v).all() and (v == np.trunc(v)).all():
            # The CSV writes these in shortest form: whole values read back as int64.
            out[c] = v.astype(np.int64)
        else:
            out[c] = v
    frame = pd.DataFrame(out, index=range(len(df)))
    if len(frame) == 0:
        frame = frame.astype(object)
    return frame


def read_run(run_dir: Union[str, "os.PathLike[str]"], *, format: str = "csv") -> RunTables:
    """Reads a run directory (flows.csv, links.csv, ..., summary.json) into
    DataFrames with the columns and dtypes that :class:`csigsim.Results` has.
    ``format="parquet"`` reads the Parquet twins instead (``csigsim run
    --parquet``; needs pyarrow); ``slowdown`` and ``utilization`` are then
    unrounded."""
    d = Path(run_dir)
    if format not in ("csv", "parquet"):
        raise ValueError(f"format must be 'csv' or 'parquet', not {format!r}")
    if not (d / f"flows.{format}").is_file():
        raise FileNotFoundError(f"{d} is not a run directory: it has no flows.{format}")
    summary: Dict[str, Any] = {}
    if (d / "summary.json").is_file():
        summary = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    if format == "csv":
        tables = {name: _read_table(d / f"{name}.csv", cols) for name, cols in _TEXT_COLUMNS.items()}
    else:
        tables = {name: _read_parquet(d / f"{name}.parquet", cols) for name, cols in _TEXT_COLUMNS.items()}
    scenario = d / "scenario.toml"
    return RunTables(d, summary, tables, scenario.read_text(encoding="utf-8") if scenario.is_file() else "")
