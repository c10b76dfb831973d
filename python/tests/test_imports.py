"""No module of the csigsim package imports another in a cycle, counting
the imports inside functions (a cycle there still ties the modules together
and breaks as soon as one import moves to the top)."""

import ast
from pathlib import Path
from typing import Dict, List, Optional, Set

PACKAGE = Path(__file__).resolve().parents[1] / "csigsim"
NAME = "csigsim"


def imports(path: Path, modules: Set[str]) -> Set[str]:
    """The package's modules that one file imports ("__init__" for a name of the package itself)."""

    def target(sub: Optional[str], names: List[str]) -> Set[str]:
        if sub:  # from .mod import x, import csigsim.mod
            first = sub.split(".")[0]
            return {first} if first in modules else set()
        # from . import x: a module of the package, the compiled _core, or a name of __init__.
        return {n if n in modules else "__init__" for n in names if n != "_core"}

    found: Set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            if node.level == 1:
                found |= target(node.module, names)
            elif node.level == 0 and node.module and node.module.split(".")[0] == NAME:
                found |= target(node.module.partition(".")[2], names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == NAME:
                    found |= target(a.name.partition(".")[2], ["__init__"])
    found.discard(path.stem)
    return found


def graph() -> Dict[str, Set[str]]:
    files = {p.stem: p for p in PACKAGE.glob("*.py")}
    return {m: imports(p, set(files)) for m, p in files.items()}


def cycle(g: Dict[str, Set[str]]) -> Optional[List[str]]:
    """A cycle of the graph as the modules along it, or None."""
    state: Dict[str, int] = {}  # 1: on the path, 2: done
    path: List[str] = []

    def visit(m: str) -> Optional[List[str]]:
        state[m] = 1
        path.append(m)
        for n in sorted(g.get(m, ())):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(g):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_checker_sees_imports_and_cycles():
    g = graph()
    assert "sweep" in g["__init__"] and "_toml" in g["sweep"]
    assert "_rundir" in g["telemetry"] and "telemetry" in g["plot"]  # the latter inside functions
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_no_module_of_the_package_imports_another_in_a_cycle():
    found = cycle(graph())
    assert found is None, "import cycle: " + " -> ".join(found)
