"""The Python blocks of README.md and docs/*.md (docs/cc/ and docs/decisions/
included) run as written (the Rust
test crates/csigsim-cli/tests/docs.rs runs the others; the convention is in
docs/robustness.md): each block, unless preceded by
`<!-- docs: not run, REASON -->`, is executed in a scratch directory where
`scenarios/` is the repository's."""

import re
from pathlib import Path

import pytest

csigsim = pytest.importorskip("csigsim")

ROOT = Path(__file__).resolve().parents[2]


def python_blocks():
    docs = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "cc").glob("*.md")), *sorted((ROOT / "docs" / "decisions").glob("*.md"))]
    for doc in docs:
        lines = doc.read_text().splitlines()
        i = 0
        while i < len(lines):
            if lines[i].strip() == "```python":
                start = i
                i += 1
                while lines[i].strip() != "```":
                    i += 1
                before = lines[start - 1].strip() if start > 0 else ""
                if not re.match(r"<!-- docs: not run", before):
                    yield pytest.param("\n".join(lines[start + 1 : i]), id=f"{doc.relative_to(ROOT)}:{start + 1}")
            i += 1


BLOCKS = list(python_blocks())


def test_the_docs_have_python_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS)
def test_python_block_runs(code, tmp_path, monkeypatch):
    (tmp_path / "scenarios").symlink_to(ROOT / "scenarios")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "<docs>", "exec"), {"__name__": "__docs__"})
