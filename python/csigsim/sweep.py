"""Parameter sweeps: a base scenario with axes of ``--set`` values and seeds.

>>> import csigsim
>>> sw = csigsim.sweep("scenarios/sweeps/timely_bits.toml")              # every core
>>> sw = csigsim.sweep(scenario="scenarios/two_hosts.toml",
...                    axes={"transport.mtu": [1024, 4096]}, seeds=[1, 2], backend="ray")
>>> sw.table            # one row per point: id, status, seed, axes, summary figures
>>> sw.flows()          # every point's flows.csv, with its axes
>>> sw.to_parquet()     # results.parquet (needs pyarrow)

The sweep file, the directory layout and the point ids are the same as the
CLI's ``csigsim sweep`` (docs/sweeps.md): a sweep started from one can be
resumed, inspected or aggregated from the other.
"""

from __future__ import annotations

import hashlib
import json
import math
import multiprocessing as mp
import numbers
import os
import shutil
import signal
import socket
import struct
import sys
import threading
import time
from multiprocessing.connection import wait as _wait
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _core

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on old interpreters only
    import tomli as tomllib

__all__ = ["sweep", "load_sweep", "Sweep", "SweepError"]

PathLike = Union[str, "os.PathLike[str]"]

BACKENDS = ("local", "ray", "slurm", "submitit-local")
_KEYS = ("scenario", "name", "out", "seeds", "mode", "retries", "workers", "timeout", "wrapper", "set", "axis")
_AXIS_KEYS = ("key", "values", "range", "group")
_ID_VERSION = b"csigsim sweep point 1\n"
_MAX_POINTS = 1_000_000


class SweepError(ValueError):
    """A sweep specification is invalid; ``key`` names the offending key."""

    def __init__(self, msg: str, key: Optional[str] = None, file: Optional[str] = None) -> None:
        where = f"{file}: " if file else ""
        what = f"key `{key}`: " if key else ""
        super().__init__(where + what + msg)
        self.key = key
        self.file = file


# --- The specification -------------------------------------------------------


class _Axis:
    def __init__(self, key: str, values: List[str], group: str) -> None:
        self.key, self.values, self.group = key, values, group


class _Spec:
    def __init__(self) -> None:
        self.file: Optional[str] = None
        self.name = "sweep"
        self.scenario = Path()
        self.out = Path()
        self.seeds: Optional[List[int]] = None
        self.set: List[Tuple[str, str]] = []
        self.axes: List[_Axis] = []
        self.retries = 1
        self.workers = 0
        self.timeout: Optional[float] = None


def _toml(v: Any, where: str) -> str:
    from . import _value  # the package's TOML writer

    return _value(v, where)


def _flatten(t: Mapping[str, Any], prefix: str, out: List[Tuple[str, str]]) -> None:
    for k, v in t.items():
        key = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, Mapping):
            _flatten(v, key, out)
        else:
            out.append((key, _toml(v, key)))


def _float_text(f: float) -> str:
    return _toml(float(f), "range")


def _range(r: Any, key: str, err) -> List[str]:
    if not isinstance(r, Mapping):
        raise err(key, "expected { start, stop, step } or { start, stop, count }")
    for k in r:
        if k not in ("start", "stop", "step", "count"):
            raise err(f"{key}.{k}", "unknown key; a range has start, stop and step or count")

    def num(k: str) -> Any:
        v = r.get(k)
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or (isinstance(v, float) and not math.isfinite(v)):
            raise err(f"{key}.{k}", "expected a finite number" if v is not None else "missing number")
        return v

    start, stop = num("start"), num("stop")
    if ("step" in r) == ("count" in r):
        raise err(key, "give exactly one of step and count")
    if "step" in r:
        step = num("step")
        if step == 0 or (stop - start) * step < 0:
            raise err(f"{key}.step", "step must be non-zero and go from start towards stop")
        if all(isinstance(x, numbers.Integral) for x in (start, stop, step)):
            n = (int(stop) - int(start)) // int(step) + 1
            if n > _MAX_POINTS:
                raise err(f"{key}.step", "more than a million values")
            return [str(int(start) + k * int(step)) for k in range(n)]
        start, stop, step = float(start), float(stop), float(step)
        # The same arithmetic as the CLI, so both give the same values.
        n = math.floor((stop - start) / step + 1e-9) + 1
        if n > _MAX_POINTS:
            raise err(f"{key}.step", "more than a million values")
        return [_float_text(start + k * step) for k in range(n)]
    n = r["count"]
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 1 <= n <= _MAX_POINTS:
        raise err(f"{key}.count", "count must be from 1 to 1000000")
    start, stop = float(start), float(stop)
    if n == 1:
        return [_float_text(start)]
    return [_float_text(start + k * (stop - start) / (n - 1)) for k in range(n)]


def _seeds(v: Any, err) -> List[int]:
    bad = "expected a list of seeds [1, 2, 3] or { start = 1, count = 3 }"

    def seed(x: Any) -> int:
        if isinstance(x, bool) or not isinstance(x, numbers.Integral) or not 0 <= x < 2**63:
            raise err("seeds", bad)
        return int(x)

    if isinstance(v, range):
        v = list(v)
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = [v]
    if isinstance(v, Mapping):
        if set(v) - {"start", "count"} or "start" not in v or "count" not in v:
            raise err("seeds", bad)
        c = v["count"]
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or not 1 <= c <= _MAX_POINTS:
            raise err("seeds", "count must be from 1 to 1000000")
        s = seed(v["start"])
        return [(s + k) % 2**64 for k in range(int(c))]
    if not isinstance(v, (list, tuple)) or not v:
        raise err("seeds", bad)
    out = [seed(x) for x in v]
    for i, x in enumerate(out):
        if x in out[:i]:
            raise err("seeds", f"seed {x} is listed twice")
    return out


def _duration(v: Any) -> Optional[float]:
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v) if v > 0 else None
    if not isinstance(v, str):
        return None
    s = v.strip()
    for suffix, mult in (("ms", 0.001), ("s", 1.0), ("m", 60.0), ("h", 3600.0)):
        if s.endswith(suffix):
            s, m = s[: -len(suffix)], mult
            break
    else:
        m = 1.0
    try:
        f = float(s) * m
    except ValueError:
        return None
    return f if f > 0 and math.isfinite(f) else None


def _parse(d: Mapping[str, Any], base: Path, file: Optional[str], stem: str) -> _Spec:
    def err(key: str, msg: str) -> SweepError:
        return SweepError(msg, key, file)

    for k in d:
        if k not in _KEYS:
            raise err(k, f"unknown key; the keys of a sweep file are {', '.join(_KEYS)}")
    sp = _Spec()
    sp.file = file
    sc = d.get("scenario")
    if sc is None:
        raise err("scenario", "missing: the path of the base scenario, relative to the sweep file")
    if not isinstance(sc, (str, os.PathLike)):
        raise err("scenario", "expected a string")
    sp.scenario = base / Path(sc)
    if not sp.scenario.is_file():
        raise err("scenario", f"no scenario file {sp.scenario}")
    sp.name = d.get("name", stem)
    if not isinstance(sp.name, str):
        raise err("name", "expected a string")
    out = d.get("out", os.path.join("runs", "sweeps", stem))
    if not isinstance(out, (str, os.PathLike)):
        raise err("out", "expected a string")
    sp.out = Path(out)
    for k, hi in (("retries", 100), ("workers", 4096)):
        v = d.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral) or not 0 <= v <= hi):
            raise err(k, f"expected an integer from 0 to {hi}")
    sp.retries = int(d.get("retries", 1))
    sp.workers = int(d.get("workers", 0) or 0)
    if d.get("timeout") is not None:
        sp.timeout = _duration(d["timeout"])
        if sp.timeout is None:
            raise err("timeout", 'expected a duration such as "90s", "30m" or "2h"')
    if "wrapper" in d:
        w = d["wrapper"]
        if not isinstance(w, (list, tuple)) or not w or not all(isinstance(x, str) for x in w):
            raise err("wrapper", "expected a non-empty list of strings: the command and its arguments")
        # The wrapper applies to the CLI's child processes; Python backends run in-process.
    if d.get("seeds") is not None:
        sp.seeds = _seeds(d["seeds"], err)
    mode = d.get("mode", "cross")
    if mode not in ("cross", "zip"):
        raise err("mode", f'unknown mode "{mode}": cross or zip')
    s = d.get("set", {})
    if not isinstance(s, Mapping):
        raise err("set", "expected a table of KEY = VALUE overrides")
    _flatten(s, "", sp.set)
    axes = d.get("axis", [])
    if isinstance(axes, Mapping):  # the Python form {key: values}
        axes = [{"key": k, "values": v} if not isinstance(v, (Mapping, range)) else {"key": k, "range": v} for k, v in axes.items()]
    if not isinstance(axes, (list, tuple)):
        raise err("axis", "expected [[axis]] tables")
    for n, a in enumerate(axes):
        at = lambda k: f"axis[{n}].{k}"  # noqa: E731
        if not isinstance(a, Mapping):
            raise err(f"axis[{n}]", "expected a table")
        for k in a:
            if k not in _AXIS_KEYS:
                raise err(at(k), f"unknown key; the keys of an axis are {', '.join(_AXIS_KEYS)}")
        key = a.get("key")
        if not isinstance(key, str) or not key.strip():
            raise err(at("key"), 'expected a scenario key such as "transport.cc"')
        key = key.strip()
        if key == "seed":
            raise err(at("key"), "the seed is swept with the top-level `seeds` key")
        for j, b in enumerate(sp.axes):
            if b.key == key:
                raise err(at("key"), f'axis[{j}] already sweeps "{key}"')
        vals, rng = a.get("values"), a.get("range")
        if isinstance(vals, range):
            vals = list(vals)
        if vals is not None and rng is not None:
            raise err(at("values"), "give either values or range, not both")
        if vals is not None:
            if not isinstance(vals, (list, tuple)) or not vals:
                raise err(at("values"), "expected a non-empty list of values")
            values = [_toml(v, at("values")) for v in vals]
        elif rng is not None:
            values = _range(rng, at("range"), err)
        else:
            raise err(at("values"), "missing: give values = [...] or range = { start, stop, step | count }")
        if mode == "zip":
            group = "zip"
        elif a.get("group") is None:
            group = f"\0{n}"
        elif isinstance(a["group"], str):
            group = a["group"]
        else:
            raise err(at("group"), "expected a string: axes with the same group are zipped")
        for b in sp.axes:
            if b.group == group and len(b.values) != len(values):
                raise err(
                    at("values"),
                    f'zipped with "{b.key}" ({len(b.values)} values) but has {len(values)} values: '
                    "zipped axes need as many values each",
                )
        sp.axes.append(_Axis(key, values, group))
    return sp


# --- The point id (the same bytes as crates/csigsim-cli/src/sweep.rs) --------


def _canon_str(s: str, h) -> None:
    b = s.encode()
    h.update(f"{len(b)}:".encode())
    h.update(b)


def _canon(v: Any, base: Path, h) -> None:
    if isinstance(v, dict):
        h.update(b"{")
        # Sorting str by code point is sorting their UTF-8 bytes, as the CLI does.
        for k in sorted(v):
            _canon_str(k, h)
            _canon(v[k], base, h)
        h.update(b"}")
    elif isinstance(v, list):
        h.update(b"[")
        for x in v:
            _canon(x, base, h)
        h.update(b"]")
    elif isinstance(v, bool):
        h.update(b"b1" if v else b"b0")
    elif isinstance(v, int):
        h.update(f"i{v};".encode())
    elif isinstance(v, float):
        h.update(f"f{struct.unpack('>Q', struct.pack('>d', v))[0]:016x};".encode())
    elif isinstance(v, str):
        h.update(b"s")
        _canon_str(v, h)
        p = base / v
        if v and p.is_file():
            try:
                h.update(b"#" + hashlib.sha256(p.read_bytes()).hexdigest().encode())
            except OSError:
                pass
    else:  # dates and times: never in a scenario
        h.update(b"d")
        _canon_str(str(v), h)


def point_id(resolved_toml: str, base: Path) -> str:
    """The id of a point: a hash of its resolved scenario (docs/sweeps.md)."""
    h = hashlib.sha256(_ID_VERSION)
    _canon(tomllib.loads(resolved_toml), base, h)
    return h.hexdigest()[:16]


def _axis_value(text: str) -> Any:
    return tomllib.loads(f"v = {text}")["v"]


def _points(sp: _Spec) -> List[Dict[str, Any]]:
    def overrides(axes: List[Tuple[str, str]]) -> List[str]:
        keys = {k for k, _ in axes}
        return [f"{k}={v}" for k, v in sp.set if k not in keys] + [f"{k}={v}" for k, v in axes]

    seeds = sp.seeds
    if seeds is None:
        doc = tomllib.loads(_core.resolve_file(sp.scenario, None, overrides([])))
        seeds = [int(doc.get("seed", 1))]
    groups: List[Tuple[str, List[int]]] = []
    for n, a in enumerate(sp.axes):
        for g in groups:
            if g[0] == a.group:
                g[1].append(n)
                break
        else:
            groups.append((a.group, [n]))
    sizes = [len(sp.axes[g[1][0]].values) for g in groups]
    combos = math.prod(sizes)
    if combos * len(seeds) > _MAX_POINTS:
        raise SweepError("the sweep has more than a million points", "axis", sp.file)
    points: List[Dict[str, Any]] = []
    seen: Dict[str, int] = {}
    base = sp.scenario.parent
    for c in range(combos):
        pick, rest = [0] * len(groups), c
        for g in reversed(range(len(groups))):
            pick[g], rest = rest % sizes[g], rest // sizes[g]
        chosen = {a: sp.axes[a].values[pick[g]] for g, (_, members) in enumerate(groups) for a in members}
        axes = [(sp.axes[a].key, chosen[a]) for a in sorted(chosen)]
        for seed in seeds:
            ov = overrides(axes)
            described = " ".join([f"{k}={v}" for k, v in axes] + [f"seed={seed}"])
            try:
                resolved = _core.resolve_file(sp.scenario, seed, ov)
            except _core.ScenarioError as e:
                e.args = (f"{e.args[0]} (in sweep {sp.file or sp.name}, point {described})",)
                raise
            pid = point_id(resolved, base)
            if pid in seen:
                raise SweepError(
                    f"point {len(points)} ({described}) resolves to the same scenario as point {seen[pid]}: a value is listed twice",
                    "axis",
                    sp.file,
                )
            seen[pid] = len(points)
            points.append(
                {
                    "id": pid,
                    "seed": seed,
                    "axes": {k: _axis_value(v) for k, v in axes},
                    "overrides": ov,
                    "described": described,
                }
            )
    return points


# --- The sweep directory ------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner_alive(tmp: Path) -> bool:
    try:
        o = json.loads((tmp / "owner.json").read_text())
    except (OSError, ValueError):
        return False
    if o.get("host") != socket.gethostname():
        return True  # another machine's: cannot tell, so assume it runs
    return isinstance(o.get("pid"), int) and _alive(o["pid"])


def _failures(out: Path, pid: str) -> List[Dict[str, Any]]:
    try:
        return list(json.loads((out / "failed" / f"{pid}.json").read_text()).get("attempts", []))
    except (OSError, ValueError):
        return []


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f"{path.name}.tmp{os.getpid()}")
    tmp.write_text(text)
    os.replace(tmp, path)


def _states(out: Path, points: Sequence[Mapping[str, Any]]) -> List[str]:
    running = set()
    tmpdir = out / "tmp"
    if tmpdir.is_dir():
        for e in tmpdir.iterdir():
            if _owner_alive(e):
                running.add(e.name.split(".")[0])
    st = []
    for p in points:
        if (out / "points" / p["id"] / "summary.json").is_file():
            st.append("done")
        elif p["id"] in running:
            st.append("running")
        elif (out / "failed" / f"{p['id']}.json").is_file():
            st.append("failed")
        else:
            st.append("pending")
    return st


def _clean_stale(out: Path) -> None:
    tmpdir = out / "tmp"
    if tmpdir.is_dir():
        for e in tmpdir.iterdir():
            if not _owner_alive(e):
                shutil.rmtree(e, ignore_errors=True)


# --- One point, in whatever process runs it -----------------------------------


def _run_point(task: Dict[str, Any]) -> Dict[str, Any]:
    """Runs one point into tmp/ and renames it into points/ when complete.

    Runs in the worker (a forked process, a Ray worker, a Slurm job); returns
    {"status": "done"} or {"status": "failed", "reason", "retry"}.
    """
    from . import run, ScenarioError

    out = Path(task["out"])
    tmp = out / "tmp" / f"{task['id']}.{task['attempt']}.{task['owner']['pid']}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    (tmp / "owner.json").write_text(json.dumps(dict(task["owner"], attempt=task["attempt"], started=time.time())))
    started = time.monotonic()
    try:
        if task.get("setup") is not None:
            task["setup"](dict(task))
        # The run directory inside the temporary one, beside owner.json (a
        # run directory holds only a run's files).
        run(task["scenario"], seed=task["seed"], overrides=task["overrides"], out=tmp / "run")
    except ScenarioError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        return {"status": "failed", "reason": f"bad input: {e}", "retry": False}
    except Exception as e:  # noqa: BLE001 - any error of the point is recorded
        shutil.rmtree(tmp, ignore_errors=True)
        return {"status": "failed", "reason": f"{type(e).__name__}: {e}", "retry": True}
    wall = time.monotonic() - started
    attempts = list(task["attempts"]) + [
        {"attempt": task["attempt"], "status": "done", "host": socket.gethostname(), "wall_s": wall, "finished": time.time()}
    ]
    point = {
        "id": task["id"],
        "seed": task["seed"],
        "axes": task["axes"],
        "overrides": task["overrides"],
        "scenario": str(task["scenario"]),
        "version": _core.version(),
        "attempts": attempts,
    }
    dest = out / "points" / task["id"]
    try:
        (tmp / "run" / "point.json").write_text(json.dumps(point, indent=2) + "\n")
        os.rename(tmp / "run", dest)
    except OSError as e:
        if not (dest / "summary.json").is_file():
            shutil.rmtree(tmp, ignore_errors=True)
            return {"status": "failed", "reason": f"cannot move the run into {dest}: {e}", "retry": True}
    shutil.rmtree(tmp, ignore_errors=True)
    return {"status": "done", "wall_s": wall}


def _die_with_parent(parent: int) -> None:
    """Makes this forked worker die with the sweep that forked it.

    On Linux, prctl(PR_SET_PDEATHSIG, SIGKILL): the kernel kills the worker
    when the thread that forked it ends, which it outlives only if the
    driver is killed (the loop waits for its workers). Where that is not
    available, a daemon thread checks every 0.5 s that the parent is still
    the one that forked it. A driver that died before this ran is noticed by
    the parent process id having changed.
    """
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(1, signal.SIGKILL, 0, 0, 0) == 0:  # 1: PR_SET_PDEATHSIG
                if os.getppid() != parent:
                    os._exit(1)
                return
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(0.5)

    threading.Thread(target=watch, name="csigsim-sweep-parent-watch", daemon=True).start()


def _fork_child(task: Dict[str, Any], conn, parent: int) -> None:
    _die_with_parent(parent)
    try:
        res = _run_point(task)
    except BaseException as e:  # noqa: BLE001
        res = {"status": "failed", "reason": f"{type(e).__name__}: {e}", "retry": True}
    conn.send(res)
    conn.close()


_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}


def _signal_reason(sig: int) -> str:
    return f"killed by signal {sig} ({_SIGNALS.get(sig, 'signal')})"


# --- Backends -----------------------------------------------------------------
#
# A backend takes the tasks to run and calls report(task, result) once per
# attempt; the driver decides about retries and hands new tasks back through
# the `more` callable.


class _Progress:
    def __init__(self, total: int, done: int, show: bool) -> None:
        self.total, self.done, self.show = total, done, show
        self.start_done, self.t0 = done, time.monotonic()
        self.tty = sys.stderr.isatty()

    def update(self, failed: int) -> None:
        if not self.show:
            return
        ran = self.done - self.start_done
        el = time.monotonic() - self.t0
        left = self.total - self.done
        eta = f"{el / ran * left:.0f} s" if ran else "?"
        line = f"points done {self.done}/{self.total}, {failed} failed, {el:.0f} s elapsed, ETA {eta}"
        if self.tty:
            sys.stderr.write("\r" + line + "   ")
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.show and self.tty:
            sys.stderr.write("\n")


def _local(tasks: List[Dict], workers: int, timeout: Optional[float], report, more) -> None:
    # One forked process per point, no threads in this process (forking a
    # threaded process is unsafe): the loop waits on the children's sentinels.
    methods = mp.get_all_start_methods()
    ctx = mp.get_context("fork" if sys.platform.startswith("linux") and "fork" in methods else "spawn")
    queue = list(tasks)
    running: Dict[int, Tuple[Any, Any, Dict, float]] = {}
    while queue or running:
        while queue and len(running) < workers:
            t = queue.pop(0)
            r, w = ctx.Pipe(duplex=False)
            p = ctx.Process(target=_fork_child, args=(t, w, os.getpid()), daemon=True)
            p.start()
            w.close()
            running[p.sentinel] = (p, r, t, time.monotonic())
        wait_for = 1.0 if timeout is not None else None
        ready = _wait(list(running), timeout=wait_for)
        now = time.monotonic()
        for s in list(running):
            p, r, t, t0 = running[s]
            timed_out = False
            if s not in ready:
                if timeout is not None and now - t0 > timeout:
                    p.kill()
                    timed_out = True
                else:
                    continue
            res = None
            try:
                if r.poll():
                    res = r.recv()
            except (EOFError, OSError):
                res = None
            p.join()
            r.close()
            del running[s]
            if timed_out:
                res = {"status": "failed", "reason": f"time limit of {timeout:g} s exceeded (killed)", "retry": True}
            elif res is None:
                code = p.exitcode
                reason = _signal_reason(-code) if code is not None and code < 0 else f"the worker exited with status {code} without a result"
                res = {"status": "failed", "reason": reason, "retry": True}
            report(t, res)
            queue.extend(more())


def _ray(tasks: List[Dict], workers: int, timeout: Optional[float], report, more, address: Optional[str], init_kwargs) -> None:
    import ray

    started_here = False
    if not ray.is_initialized():
        ray.init(address=address, **(init_kwargs or {}))
        started_here = True
    try:
        # No Ray retries: a dead worker is recorded here and retried by the driver.
        remote = ray.remote(num_cpus=1, max_retries=0)(_run_point)
        limit = workers or int(ray.cluster_resources().get("CPU", 1))
        queue = list(tasks)
        inflight: Dict[Any, Tuple[Dict, float]] = {}
        while queue or inflight:
            while queue and len(inflight) < limit:
                t = queue.pop(0)
                inflight[remote.remote(t)] = (t, time.monotonic())
            ready, _ = ray.wait(list(inflight), num_returns=1, timeout=1.0 if timeout else None)
            now = time.monotonic()
            if timeout:
                for ref, (t, t0) in list(inflight.items()):
                    if ref not in ready and now - t0 > timeout:
                        ray.cancel(ref, force=True)
                        del inflight[ref]
                        report(t, {"status": "failed", "reason": f"time limit of {timeout:g} s exceeded (cancelled)", "retry": True})
            for ref in ready:
                t, _ = inflight.pop(ref)
                try:
                    res = ray.get(ref)
                except ray.exceptions.RayError as e:
                    first = str(e).strip().splitlines()[0] if str(e).strip() else ""
                    res = {"status": "failed", "reason": f"{type(e).__name__}: {first}", "retry": True}
                report(t, res)
            queue.extend(more())
    finally:
        if started_here:
            ray.shutdown()


def _submitit(
    tasks: List[Dict], workers: int, timeout: Optional[float], report, more, out: Path, options: Mapping[str, Any], local: bool
) -> None:
    import submitit

    folder = out / "submitit" / "%j"
    opts = dict(options or {})
    if local:
        ex = submitit.LocalExecutor(folder=folder)
    else:
        ex = submitit.AutoExecutor(folder=folder, cluster=opts.pop("cluster", "slurm"))
    params: Dict[str, Any] = {}
    if timeout is not None:
        params["timeout_min"] = max(1, math.ceil(timeout / 60))
    if not local:
        params["slurm_array_parallelism"] = workers or 256
        params.setdefault("cpus_per_task", 1)
    params.update(opts)
    ex.update_parameters(**params)
    batch = list(tasks)
    gone_since: Dict[str, float] = {}
    while batch:
        # One job array per round; the points that failed go into the next.
        jobs = ex.map_array(_run_point, batch)
        pending = dict(zip(jobs, batch))
        while pending:
            for job in [j for j in pending if j.done()]:
                t = pending.pop(job)
                res = _local_job_death(job) if local else None
                if res is None:
                    try:
                        res = job.result()
                    except submitit.core.utils.UncompletedJobError:
                        # The job ended without a result: killed, timed out, node lost, out of memory.
                        res = {"status": "failed", "reason": f"job {job.job_id} ended {_job_state(job)} without a result", "retry": True}
                    except Exception as e:  # noqa: BLE001 - FailedJobError and the like
                        last = [ln for ln in str(e).strip().splitlines() if ln.strip()]
                        reason = f"job {job.job_id} {_job_state(job)}: {last[-1] if last else type(e).__name__}"
                        res = {"status": "failed", "reason": reason, "retry": True}
                report(t, res)
            if pending and not local:
                for job in _left_the_queue(list(pending), gone_since):
                    t = pending.pop(job)
                    reason = f"job {job.job_id} left the queue without a result (its state is unknown: sacct gave none)"
                    report(t, {"status": "failed", "reason": reason, "retry": True})
            if pending:
                time.sleep(0.2)
        batch = more()


_SQUEUE_EVERY = 5.0
_last_squeue = [0.0]


def _left_the_queue(jobs: List[Any], gone_since: Dict[str, float]) -> List[Any]:
    """Jobs that squeue no longer lists and that have left no result for 30 s.

    submitit learns a job's end from sacct; where accounting is off, a job
    that died without a result would never be done. squeue still says
    whether it is queued or running.
    """
    import subprocess

    now = time.monotonic()
    if now - _last_squeue[0] < _SQUEUE_EVERY:
        return []
    _last_squeue[0] = now
    arrays = sorted({str(j.job_id).split("_")[0] for j in jobs})
    try:
        r = subprocess.run(["squeue", "-h", "-r", "-o", "%i", "-j", ",".join(arrays)], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if r.returncode != 0:
        return []
    listed = set(r.stdout.split())
    out = []
    for j in jobs:
        jid = str(j.job_id)
        if jid in listed or j.paths.result_pickle.exists():
            gone_since.pop(jid, None)
            continue
        first = gone_since.setdefault(jid, now)
        if now - first > 30.0:
            out.append(j)
    return out


def _local_job_death(job: Any) -> Optional[Dict[str, Any]]:
    """A local job that ended without a result: its process died.

    submitit's local controller does not pass on how its task ended, and
    ``job.result()`` would first wait 15 s for the result file (which on a
    cluster may be late on a network file system).
    """
    if job.paths.result_pickle.exists():
        return None
    reason = f"job {job.job_id} ended without a result: its process died (killed, or out of memory)"
    return {"status": "failed", "reason": reason, "retry": True}


def _job_state(job: Any) -> str:
    try:
        return str(job.state)
    except Exception:  # noqa: BLE001
        return "UNKNOWN"


# --- The driver -----------------------------------------------------------------


def sweep(
    spec: Union[PathLike, Mapping[str, Any], None] = None,
    *,
    scenario: Optional[PathLike] = None,
    axes: Union[Mapping[str, Any], Sequence[Mapping[str, Any]], None] = None,
    seeds: Any = None,
    mode: Optional[str] = None,
    set: Optional[Mapping[str, Any]] = None,  # noqa: A002 - the sweep file's own key
    out: Optional[PathLike] = None,
    backend: str = "local",
    workers: Optional[int] = None,
    retries: Optional[int] = None,
    timeout: Union[str, float, None] = None,
    progress: bool = False,
    ray_address: Optional[str] = None,
    ray_init: Optional[Mapping[str, Any]] = None,
    slurm: Optional[Mapping[str, Any]] = None,
    setup: Optional[Callable[[Dict[str, Any]], None]] = None,
    run: bool = True,
) -> "Sweep":
    """Runs the points of a sweep that are not complete and returns the :class:`Sweep`.

    ``spec`` is a sweep file (TOML, the CLI's format) or a dict of its keys;
    keyword arguments set or replace them: ``scenario`` the base scenario,
    ``axes`` ``{key: [values]}`` (or ``{key: {"start", "stop", "step"}}``, or
    a list of ``{"key", "values"|"range", "group"}``), ``seeds`` a list or
    ``{"start", "count"}``, ``mode`` "cross" or "zip", ``set`` fixed overrides,
    ``out`` the sweep directory, ``retries`` retries of a failed point,
    ``timeout`` a point's time limit ("30m" or seconds), ``workers`` points
    at once (0 or None: every core; on Slurm the array parallelism).

    ``backend``: "local" (one forked process per point), "ray" (on
    ``ray_address``, or a local Ray started here; ``ray_init`` more
    ``ray.init`` arguments), "slurm" (job arrays through submitit; ``slurm``
    holds submitit's parameters, e.g. ``{"mem_gb": 4, "slurm_partition":
    "cpu"}``) or "submitit-local" (submitit's local executor). ``setup`` is
    called in the worker with the point's task before the point runs.
    ``progress`` prints points done of the total with an ETA on stderr.
    With ``run=False`` nothing runs (sweep.json is written): the result
    shows the sweep's state, like ``csigsim sweep --status``.
    Raises :class:`SweepError` (or ``ScenarioError`` for a point whose
    scenario does not load) before running anything.
    """
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: {', '.join(BACKENDS)}")
    file: Optional[str] = None
    if spec is None:
        d: Dict[str, Any] = {}
        base, stem = Path.cwd(), "sweep"
    elif isinstance(spec, Mapping):
        d, base, stem = dict(spec), Path.cwd(), "sweep"
    else:
        path = Path(spec)
        file = str(path)
        try:
            with open(path, "rb") as f:
                d = tomllib.load(f)
        except OSError as e:
            raise SweepError(f"cannot read the file: {e}", None, file) from None
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"TOML syntax error: {e}", None, file) from None
        base, stem = path.parent, path.stem
    given = {"axis": axes, "seeds": seeds, "mode": mode, "set": set, "out": out, "retries": retries, "workers": workers, "timeout": timeout}
    for k, v in given.items():
        if v is not None:
            d[k] = v
    if scenario is not None:
        # A scenario given here is relative to the working directory.
        d["scenario"] = os.path.abspath(scenario)
    sp = _parse(d, base, file, stem)
    if workers is not None:
        sp.workers = workers
    points = _points(sp)
    _prepare(sp, points)
    if run:
        _drive(sp, points, backend, progress, ray_address, ray_init, slurm, setup)
    return Sweep(sp.out)


def _prepare(sp: _Spec, points: List[Dict]) -> None:
    out = sp.out
    if out.is_file():
        raise SweepError(f"{out} is an existing file", "out", sp.file)
    for sub in ("points", "tmp", "failed"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    _clean_stale(out)
    index = {
        "name": sp.name,
        "scenario": str(sp.scenario),
        "axes": [a.key for a in sp.axes],
        "points": [{k: p[k] for k in ("id", "seed", "axes", "overrides")} for p in points],
    }
    _write_atomic(out / "sweep.json", json.dumps(index, indent=2) + "\n")


def _drive(sp: _Spec, points: List[Dict], backend: str, progress: bool, ray_address, ray_init, slurm, setup) -> None:
    out = sp.out
    states = _states(out, points)
    owner = {"host": socket.gethostname(), "pid": os.getpid()}
    scenario = str(sp.scenario.resolve())

    def task(p: Dict, attempt: int, prior: List[Dict]) -> Dict:
        return {
            "out": str(out.resolve()),
            "id": p["id"],
            "attempt": attempt,
            "seed": p["seed"],
            "axes": p["axes"],
            "overrides": p["overrides"],
            "scenario": scenario,
            "owner": owner,
            "attempts": prior,
            "setup": setup,
        }

    tasks = []
    first: Dict[str, int] = {}
    for p, s in zip(points, states):
        if s in ("failed", "pending"):
            prior = _failures(out, p["id"])
            first[p["id"]] = len(prior) + 1
            tasks.append(task(p, len(prior) + 1, prior))
    by_id = {p["id"]: p for p in points}
    bar = _Progress(len(points), states.count("done"), progress)
    retry_queue: List[Dict] = []
    failed: Dict[str, str] = {}
    host = socket.gethostname()

    def report(t: Dict, res: Dict) -> None:
        pid = t["id"]
        if res.get("status") == "done":
            (out / "failed" / f"{pid}.json").unlink(missing_ok=True)
            failed.pop(pid, None)
            bar.done += 1
        else:
            # Whatever the worker left behind is not a result.
            for e in (out / "tmp").glob(f"{pid}.{t['attempt']}.*"):
                shutil.rmtree(e, ignore_errors=True)
            attempts = list(t["attempts"]) + [
                {"attempt": t["attempt"], "status": "failed", "reason": res.get("reason", "?"), "host": host, "finished": time.time()}
            ]
            p = by_id[pid]
            _write_atomic(
                out / "failed" / f"{pid}.json",
                json.dumps({"id": pid, "seed": p["seed"], "axes": p["axes"], "attempts": attempts}),
            )
            if res.get("retry", True) and t["attempt"] < first[pid] + sp.retries:
                retry_queue.append(task(p, t["attempt"] + 1, attempts))
            else:
                failed[pid] = res.get("reason", "?")
        bar.update(len(failed))

    def more() -> List[Dict]:
        batch = list(retry_queue)
        retry_queue.clear()
        return batch

    workers = sp.workers or (os.cpu_count() or 1)
    bar.update(0)
    try:
        if not tasks:
            pass
        elif backend == "local":
            _local(tasks, workers, sp.timeout, report, more)
        elif backend == "ray":
            _ray(tasks, sp.workers, sp.timeout, report, more, ray_address, ray_init)
        else:
            _submitit(tasks, sp.workers, sp.timeout, report, more, out, slurm or {}, backend == "submitit-local")
    finally:
        bar.close()


# --- Results --------------------------------------------------------------------


class Sweep:
    """A sweep directory: its points, their state and their results."""

    def __init__(self, out: PathLike) -> None:
        self.out = Path(out)
        try:
            self.index = json.loads((self.out / "sweep.json").read_text())
        except OSError:
            raise FileNotFoundError(f"{self.out} is not a sweep directory (no sweep.json)") from None
        self.points: List[Dict[str, Any]] = self.index["points"]
        self.axes: List[str] = self.index["axes"]

    def states(self) -> List[str]:
        """Each point's state: done, running, failed or pending."""
        return _states(self.out, self.points)

    def status(self) -> Dict[str, int]:
        """Counts of points done, running, failed and pending."""
        st = self.states()
        return {k: st.count(k) for k in ("done", "running", "failed", "pending")}

    def failures(self) -> pd.DataFrame:
        """The failed attempts of every point that has not completed: id, attempt, reason."""
        rows = []
        for p, s in zip(self.points, self.states()):
            if s != "done":
                for a in _failures(self.out, p["id"]):
                    rows.append({"id": p["id"], **p["axes"], "seed": p["seed"], "attempt": a.get("attempt"), "reason": a.get("reason")})
        return pd.DataFrame(rows)

    def point_dir(self, point: Union[str, Mapping[str, Any]]) -> Path:
        pid = point if isinstance(point, str) else point["id"]
        return self.out / "points" / pid

    @property
    def table(self) -> pd.DataFrame:
        """One row per point: id, status, seed, the axes, and summary.json's scalar figures."""
        rows = []
        for p, s in zip(self.points, self.states()):
            row: Dict[str, Any] = {"id": p["id"], "status": s, "seed": p["seed"], **p["axes"]}
            if s == "done":
                summary = json.loads((self.point_dir(p) / "summary.json").read_text())
                for k, v in summary.items():
                    if k not in row and not isinstance(v, (dict, list)):
                        row[k] = v
                try:
                    attempts = json.loads((self.point_dir(p) / "point.json").read_text()).get("attempts", [])
                    row["attempts"] = len(attempts)
                except (OSError, ValueError):
                    pass
            rows.append(row)
        return pd.DataFrame(rows)

    def flows(self, points: Optional[Iterable[Union[str, Mapping[str, Any]]]] = None) -> pd.DataFrame:
        """flows.csv of every complete point (or of ``points``), with id, seed and axes columns first."""
        wanted = None if points is None else {p if isinstance(p, str) else p["id"] for p in points}
        frames = []
        for p, s in zip(self.points, self.states()):
            if s != "done" or (wanted is not None and p["id"] not in wanted):
                continue
            f = pd.read_csv(self.point_dir(p) / "flows.csv")
            head = pd.DataFrame({"id": p["id"], "seed": p["seed"], **{k: [v] * len(f) for k, v in p["axes"].items()}}, index=f.index)
            frames.append(pd.concat([head, f], axis=1))
        return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

    def to_parquet(self, path: Optional[PathLike] = None) -> Path:
        """Writes :attr:`table` as Parquet (default ``OUT/results.parquet``); needs pyarrow."""
        dest = Path(path) if path is not None else self.out / "results.parquet"
        t = self.table
        # Axis values may mix types across points (e.g. a table and a string): Parquet wants one type per column.
        for c in self.axes:
            if c in t and t[c].map(type).nunique() > 1:
                t[c] = t[c].map(lambda v: json.dumps(v) if not isinstance(v, str) else v)
        t.to_parquet(dest, index=False)
        return dest

    def __repr__(self) -> str:
        s = self.status()
        return f"<csigsim.Sweep {self.index.get('name', '')!r}: {len(self.points)} points, " + ", ".join(f"{v} {k}" for k, v in s.items()) + ">"


def load_sweep(out: PathLike) -> Sweep:
    """Opens a sweep directory written by :func:`sweep` or ``csigsim sweep``."""
    return Sweep(out)
