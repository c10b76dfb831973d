"""Reading a run directory back into the tables :class:`csigsim.Results`
has (``csigsim.read_run``, ``csigsim.plot.read_run``). Its own module so
that plot and telemetry both use it without importing each other."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Mapping, Union

import pandas as pd

from . import _core
from ._tables import TABLES as _TABLES
from ._tables import frame as _frame


class RunTables:
    """The tables of a run directory, with the attributes of :class:`csigsim.Results`
    that hold data: ``summary`` (dict), ``flows``, ``links``, ``signals``, ``cc``,
    ``collectives``, ``rpcs``, ``jobs``, ``job_links``, ``ops``, ``iterations`` (DataFrames; empty
    for a file the run did not write), ``scenario_toml`` (the scenario text; "" without scenario.toml)
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
        self.jobs: pd.DataFrame = tables["jobs"]
        self.job_links: pd.DataFrame = tables["job_links"]
        self.ops: pd.DataFrame = tables["ops"]
        self.iterations: pd.DataFrame = tables["iterations"]

    def __repr__(self) -> str:
        return f"<csigsim.plot.RunTables {self.summary.get('name', '')!r} from {str(self.out)!r}>"


def read_run(run_dir: Union[str, "os.PathLike[str]"], *, format: str = "csv") -> RunTables:
    """Reads a run directory (flows.csv, links.csv, ..., summary.json) into
    DataFrames with the columns, values and dtypes that :class:`csigsim.Results`
    has. The engine reads the files (``csigsim::output::read_run``, the reader
    ``csigsim compare`` uses) and hands over their columns; the frames are
    built from them as :class:`csigsim.Results` builds its own.
    ``format="parquet"`` reads the Parquet twins instead (``csigsim run
    --parquet``), into the same frames; ``"auto"`` reads each table's twin
    when there is one."""
    d = Path(run_dir)
    if format not in ("csv", "parquet", "auto"):
        raise ValueError(f"format must be 'csv', 'parquet' or 'auto', not {format!r}")
    need = "csv" if format == "auto" else format
    if not (d / f"flows.{need}").is_file() and not (format == "auto" and (d / "flows.parquet").is_file()):
        raise FileNotFoundError(f"{d} is not a run directory: it has no flows.{need}")
    raw = _core.read_run(d, format)
    summary: Dict[str, Any] = json.loads(raw.summary_json)
    tables = {name: _frame(raw.table(name)) for name in _TABLES}
    return RunTables(d, summary, tables, raw.scenario_toml)
