# Type stubs for the compiled module csigsim._core (python/src/lib.rs).
import os
from typing import Dict, List, Optional, Union

_Path = Union[str, "os.PathLike[str]"]

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
) -> Dict[str, str]: ...
def run_file(
    path: _Path,
    seed: Optional[int] = None,
    overrides: List[str] = ...,
    out: Optional[_Path] = None,
) -> Dict[str, str]: ...
def validate_toml(
    text: str,
    source: str = "<string>",
    base_dir: Optional[_Path] = None,
    overrides: List[str] = ...,
) -> None: ...
def validate_file(path: _Path, overrides: List[str] = ...) -> None: ...
def version() -> str: ...
