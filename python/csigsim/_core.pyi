# Type stubs for the compiled module csigsim._core (python/src/lib.rs).
import os
from pathlib import Path
from typing import Callable, Dict, List, Optional, Tuple, Union

import numpy as np

_Path = Union[str, "os.PathLike[str]"]

# A column's data: values; (values, valid) for whole numbers with empty cells
# (times in integer picoseconds); or (codes, names) for text.
_Column = Union[np.ndarray, Tuple[np.ndarray, np.ndarray], Tuple[np.ndarray, List[str]]]
# A table: (name, kind, data) per column in file order; kind is "int", "ns",
# "number", "decimals", "utilization" or "text".
_Table = List[Tuple[str, str, _Column]]

class Output:
    """The output of one run, kept in the engine's types."""

    @property
    def summary_json(self) -> str: ...
    @property
    def scenario_toml(self) -> str: ...
    def csv(self, table: str) -> str:
        """The text of TABLE.csv ("flows", "links", "signals", "cc"); "" when the run has no such table."""
    def table(self, table: str) -> Optional[_Table]:
        """The table's columns, from its declaration in the engine; None when the run has no such table."""
    def write_dir(self, dir: _Path) -> None:
        """Writes the run directory, byte for byte, locked, checked and published whole as the CLI does
        (a directory that is not a run's, or another run writing it, raises ScenarioError, key "dir")."""

class RunRead:
    """A run directory read back by the engine (csigsim::output::read_run)."""

    @property
    def summary_json(self) -> str: ...
    @property
    def scenario_toml(self) -> str: ...
    def table(self, table: str) -> Optional[_Table]:
        """The table's columns as Output.table gives them; None when the directory has no such file."""

class ScenarioError(ValueError):
    """A scenario could not be loaded; the message is "file:line:col: key `k`: msg"."""

    file: Optional[str]
    key: Optional[str]
    line: Optional[int]
    column: Optional[int]

def run_toml(
    text: str,
    source: str = "<string>",
    base_dir: Optional[_Path] = None,
    seed: Optional[int] = None,
    overrides: List[str] = ...,
    out: Optional[_Path] = None,
    on_progress: Optional[Callable[[int, Optional[int], int, int, int], None]] = None,
    threads: int = 1,
) -> Output: ...
def run_file(
    path: _Path,
    seed: Optional[int] = None,
    overrides: List[str] = ...,
    out: Optional[_Path] = None,
    on_progress: Optional[Callable[[int, Optional[int], int, int, int], None]] = None,
    threads: int = 1,
) -> Output: ...
def validate_toml(
    text: str,
    source: str = "<string>",
    base_dir: Optional[_Path] = None,
    overrides: List[str] = ...,
) -> None: ...
def validate_file(path: _Path, overrides: List[str] = ...) -> None: ...
def resolve_file(path: _Path, seed: Optional[int] = ..., overrides: List[str] = ...) -> str: ...
def version() -> str: ...

# --- Sweeps (csigsim::sweep; python/csigsim/sweep.py runs the points) ---

class SweepError(ValueError):
    """A sweep is invalid: "file:line:col: key `k`: msg" (no file for a sweep given as a dict)."""

    file: Optional[str]
    key: Optional[str]
    line: Optional[int]
    column: Optional[int]

class SweepPlan:
    """A sweep loaded and expanded into its points, every point's scenario checked."""

    @property
    def name(self) -> str: ...
    @property
    def out(self) -> Path: ...
    @property
    def scenario(self) -> Path: ...
    @property
    def retries(self) -> int: ...
    @property
    def workers(self) -> int: ...
    @property
    def timeout(self) -> Optional[float]: ...
    @property
    def index_json(self) -> str:
        """sweep.json as written: name, scenario, axes, and every point's id, seed, axes, overrides."""
    def describe(self, i: int) -> str: ...
    def point_scenario(self, i: int) -> str:
        """Point i's scenario as it runs (its run directory's scenario.toml)."""
    def prepare(self) -> None:
        """Creates the sweep directory, removes what dead sweeps left in tmp/, writes sweep.json."""

def sweep_plan(path: Optional[_Path] = None, base_dir: Optional[_Path] = None, replace: List[Tuple[str, str]] = ...) -> SweepPlan: ...
def sweep_states(out: _Path) -> List[str]: ...
def sweep_table(out: _Path) -> str: ...
def sweep_failures(out: _Path, id: str) -> str: ...
def sweep_next_attempt(out: _Path, id: str) -> int: ...
def sweep_owner() -> Tuple[str, int]: ...
def sweep_begin(out: _Path, id: str, attempt: int, owner_host: str, owner_pid: int) -> Path: ...
def sweep_complete(out: _Path, point: str, attempt: int, owner_pid: int, scenario: str, wall_s: float) -> Optional[str]: ...
def sweep_fail(out: _Path, point: str, attempt: int, owner_pid: int, reason: str, wall_s: Optional[float] = None) -> None: ...
def sweep_signal_reason(sig: int) -> str: ...
def sweep_time_limit_reason(seconds: float, how: str) -> str: ...
def read_run(dir: _Path, format: str = "csv") -> RunRead:
    """Reads a run directory from its CSV files ("csv"), Parquet twins ("parquet") or each table's twin when present ("auto")."""
def nearest_rank(values: np.ndarray, q: float) -> Optional[float]:
    """The q quantile of a float64 array by nearest rank, NaN left out; None when nothing is left."""
