"""The csigsim command the tests run: CSIGSIM_BIN, else the release or
the debug build of this repository, else None (the tests that need it skip)."""

import os
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]


def csigsim_cli() -> Optional[str]:
    env = os.environ.get("CSIGSIM_BIN")
    if env:
        return env
    for p in (ROOT / "target" / "release" / "csigsim", ROOT / "target" / "debug" / "csigsim"):
        if p.is_file():
            return str(p)
    return None
