# Type stubs for the compiled module csigsim._core (python/src/lib.rs).
import os
from typing import Callable, Dict, List, Optional, Tuple, Union

import numpy as np

_Path = Union[str, "os.PathLike[str]"]

# A column: values; text; (values, valid) for a column with empty cells; or
# (codes, names) for text coded as indices into names.
_Column = Union[np.ndarray, List[str], Tuple[np.ndarray, np.ndarray], Tuple[np.ndarray, List[str]]]

class Output:
    """The output of one run, kept in the engine's types."""

    @property
    def summary_json(self) -> str: ...
    @property
    def scenario_toml(self) -> str: ...
    def csv(self, table: str) -> str:
        """The text of TABLE.csv ("flows", "links", "signals", "cc"); "" when the run has no such table."""
    def columns(self, table: str) -> Optional[Dict[str, _Column]]:
        """The table's columns (times in integer picoseconds, *_ps); None when the run has no such table."""
    def write_dir(self, dir: _Path) -> None:
        """Writes the run directory, byte for byte, locked, checked and published whole as the CLI does
        (a directory that is not a run's, or another run writing it, raises ScenarioError, key "dir")."""

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
