"""The one percentile definition of csigsim: the nearest rank, as
``summary.json`` (``fct_p99_ns``), ``csigsim compare`` and the report compute
it: the q quantile of n values is the value of rank ceil(n q) among them
sorted, counting from 1 (the smallest for q = 0). It is always one of the
values, never an interpolation between two (pandas' ``quantile`` interpolates,
and would give a run a second p99). The engine computes it
(``csigsim::stats::nearest_rank``), so every figure is the same one.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _core

__all__ = ["nearest_rank"]


def nearest_rank(values: Any, q: float) -> float:
    """The ``q`` quantile (0 <= q <= 1) of ``values`` by nearest rank; NaN
    values (unfinished flows) are left out; NaN when none is left.

    >>> nearest_rank([10, 20, 30], 0.5), nearest_rank([10, 20, 30], 0.99)
    (20.0, 30.0)
    """
    if not 0.0 <= float(q) <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q!r}")
    v = np.ascontiguousarray(np.asarray(values, dtype=np.float64).ravel())
    r = _core.nearest_rank(v, float(q))
    return math.nan if r is None else r
