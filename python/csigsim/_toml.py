"""A small TOML writer: dict scenarios, ``--set`` values and sweep keys
given as Python values. Its own module so that the package and its
submodules can import it without importing each other."""

from __future__ import annotations

import math as _math
import numbers as _numbers
import os as _os
import re as _re
from typing import Any, List, Mapping

_BARE_KEY = _re.compile(r"^[A-Za-z0-9_-]+$")
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
    if isinstance(v, _numbers.Integral):
        return str(int(v))
    if isinstance(v, _numbers.Real):
        f = float(v)
        if _math.isnan(f):
            return "nan"
        if _math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, _os.PathLike):
        return _str(_os.fspath(v))
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
