"""DataFrames from the engine's columns: one function for every table, from
the table's one declaration in the engine (its column names and kinds come
with the columns), for the tables of a run and of a run directory read back.

The frames have the values and dtypes that reading the CSV file with pandas
gives: integer columns are int64; a column with empty cells is float64 with
NaN there; times are nanoseconds, int64 when every value is a whole number of
nanoseconds and float64 otherwise; numbers the file writes in shortest form
are int64 when every value is a whole number; the numbers the file rounds
(``slowdown``, ``utilization``, ``algbw_gbps``, ``busbw_gbps``) are the values
as written; text columns are strings (an empty name is ""); a table without
rows has object columns.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as _np
import pandas as _pd

#: The tables of a run, by file name.
TABLES = ("flows", "links", "signals", "cc", "collectives", "rpcs", "jobs", "job_links", "ops", "iterations")

_INT64_MAX = _np.iinfo(_np.int64).max


def _split(col: Any):
    """An engine column as (values, valid): valid is None when no cell is empty."""
    if isinstance(col, tuple) and not isinstance(col[1], list):
        values, valid = col
        return values, (None if valid.all() else valid)
    return col, None


def _int64(values: _np.ndarray) -> _np.ndarray:
    # Like pandas reading the file: int64, unless a value does not fit.
    if values.dtype == _np.uint64 and len(values) and values.max() > _INT64_MAX:
        return values
    return values.astype(_np.int64)


def _with_gaps(values: _np.ndarray, valid: _np.ndarray) -> _np.ndarray:
    out = values.astype(_np.float64)
    out[~valid] = _np.nan
    return out


def _column(kind: str, col: Any) -> Any:
    if kind == "text":
        codes, names = col
        return _pd.Series(_np.asarray(names, dtype=object)[codes], dtype=str)
    values, valid = _split(col)
    if kind == "int":
        return _int64(values) if valid is None else _with_gaps(values, valid)
    if kind == "ns":
        # The engine's times are integer picoseconds.
        if valid is None and not (values % 1000).any():
            return _int64(values // 1000)
        ns = values / 1000
        return ns if valid is None else _with_gaps(ns, valid)
    if kind == "utilization":
        # Written "0" when idle and with six decimals otherwise.
        return values.astype(_np.int64) if not values.any() else values
    if kind == "number":
        # Written with Rust's "{}", which gives whole numbers without a point.
        whole = _np.isfinite(values).all() and (values == _np.trunc(values)).all() and (_np.abs(values) <= _INT64_MAX).all()
        return values.astype(_np.int64) if whole else values
    return values  # "decimals": always written with a point


def frame(columns: Optional[Sequence[tuple]]) -> _pd.DataFrame:
    """The DataFrame of a table given as ``[(name, kind, data)]`` (the
    engine's ``table``); an empty DataFrame for None (no such file)."""
    if columns is None:
        return _pd.DataFrame()
    if not columns or len(_split(columns[0][2])[0]) == 0:
        # A file with only its header: pandas reads every number column as object.
        return _pd.DataFrame(
            {name: _pd.Series([], dtype=str) if kind == "text" else _pd.Series([], dtype=object) for name, kind, _ in columns}
        )
    return _pd.DataFrame({name: _column(kind, data) for name, kind, data in columns})
