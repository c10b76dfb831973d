"""Parameter sweeps: a base scenario with axes of ``--set`` values and seeds.

>>> import csigsim
>>> sw = csigsim.sweep("scenarios/sweeps/timely_bits.toml")              # every core
>>> sw = csigsim.sweep(scenario="scenarios/two_hosts.toml",
...                    axes={"transport.mtu": [1024, 4096]}, seeds=[1, 2], backend="ray")
>>> sw.table            # one row per point: id, status, seed, axes, summary figures
>>> sw.flows()          # every point's flows.csv, with its axes
>>> sw.to_parquet()     # results.parquet (needs pyarrow)

The sweep file, its points and their ids, the sweep directory and the
records of every attempt are the engine's (``csigsim._core``, the code of
the CLI's ``csigsim sweep``, docs/sweeps.md): a sweep started from one can
be resumed, inspected or aggregated from the other. This module runs the
points: in forked local processes, on Ray, or on Slurm through submitit.
"""

from __future__ import annotations

import json
import math
import multiprocessing as mp
import numbers
import os
import signal
import sys
import threading
import time
from multiprocessing.connection import wait as _wait
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _core
from ._toml import _value

__all__ = ["sweep", "load_sweep", "Sweep", "SweepError"]

PathLike = Union[str, "os.PathLike[str]"]

BACKENDS = ("local", "ray", "slurm", "submitit-local")

#: A sweep is invalid (a ``ValueError`` with ``file``, ``key``, ``line`` and
#: ``column``; ``file`` is None for a sweep given as a dict).
SweepError = _core.SweepError


# --- The sweep's keys, as TOML text for the engine -----------------------------


def _plain(v: Any) -> Any:
    """Python values TOML has no form for, as the ones it has."""
    if isinstance(v, (range, tuple, list)):
        return [_plain(x) for x in v]
    if isinstance(v, Mapping):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, os.PathLike):
        return os.fspath(v)
    return v


def _keys(d: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """The top-level keys of a sweep, each with its value as TOML text."""
    out = []
    for k, v in d.items():
        if v is None:
            continue
        if k == "axis" and isinstance(v, Mapping):  # the Python form {key: values or range}
            v = [{"key": a, ("range" if isinstance(x, Mapping) else "values"): x} for a, x in v.items()]
        if k == "seeds" and isinstance(v, numbers.Integral) and not isinstance(v, bool):
            v = [v]
        out.append((str(k), _value(_plain(v), str(k))))
    return out


# --- One point, in whatever process runs it -----------------------------------


def _run_point(task: Dict[str, Any]) -> Dict[str, Any]:
    """Runs one point into its temporary directory; the engine records it
    complete and moves it into points/.

    Runs in the worker (a forked process, a Ray worker, a Slurm job); returns
    {"status": "done"} or {"status": "failed", "reason", "retry"} (the
    driver records a failure).
    """
    owner = task["owner"]
    try:
        tmp = Path(_core.sweep_begin(task["out"], task["id"], task["attempt"], owner["host"], owner["pid"]))
    except OSError as e:
        return {"status": "failed", "reason": str(e), "retry": True}
    started = time.monotonic()
    try:
        if task.get("setup") is not None:
            task["setup"](dict(task))
        _core.run_file(task["scenario"], task["seed"], task["overrides"], tmp / "run")
    except _core.ScenarioError as e:
        return {"status": "failed", "reason": f"bad input: {e}", "retry": False}
    except Exception as e:  # noqa: BLE001 - any error of the point is recorded
        return {"status": "failed", "reason": f"{type(e).__name__}: {e}", "retry": True}
    wall = time.monotonic() - started
    reason = _core.sweep_complete(task["out"], task["point"], task["attempt"], owner["pid"], task["recorded_scenario"], wall)
    if reason is not None:
        return {"status": "failed", "reason": reason, "retry": True}
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
                res = {"status": "failed", "reason": _core.sweep_time_limit_reason(timeout, "killed"), "retry": True}
            elif res is None:
                code = p.exitcode
                reason = _core.sweep_signal_reason(-code) if code is not None and code < 0 else f"the worker exited with status {code} without a result"
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
                        report(t, {"status": "failed", "reason": _core.sweep_time_limit_reason(timeout, "cancelled"), "retry": True})
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
    keys: Dict[str, Any] = {}
    path: Optional[str] = None
    if isinstance(spec, Mapping):
        keys.update(spec)
    elif spec is not None:
        path = os.fspath(spec)
    given = {"axis": axes, "seeds": seeds, "mode": mode, "set": set, "out": out, "retries": retries, "workers": workers, "timeout": timeout}
    keys.update({k: v for k, v in given.items() if v is not None})
    if scenario is not None:
        # A scenario given here is relative to the working directory.
        keys["scenario"] = os.path.abspath(scenario)
    # The engine loads the sweep and every point (the same code as the CLI's).
    plan = _core.sweep_plan(path, os.getcwd(), _keys(keys))
    plan.prepare()
    if run:
        _drive(plan, backend, progress, ray_address, ray_init, slurm, setup)
    return Sweep(plan.out)


def _drive(plan: Any, backend: str, progress: bool, ray_address, ray_init, slurm, setup) -> None:
    out = Path(plan.out)
    index = json.loads(plan.index_json)
    points = index["points"]
    states = _core.sweep_states(out)
    host, pid = _core.sweep_owner()
    owner = {"host": host, "pid": pid}
    # Workers elsewhere (Ray, Slurm) have another working directory.
    where = {"out": str(out.resolve()), "scenario": str(Path(plan.scenario).resolve()), "recorded_scenario": index["scenario"]}
    by_id = {p["id"]: i for i, p in enumerate(points)}

    def task(i: int, attempt: int) -> Dict[str, Any]:
        p = points[i]
        return {
            **where,
            "id": p["id"],
            "attempt": attempt,
            "seed": p["seed"],
            "axes": p["axes"],
            "overrides": p["overrides"],
            "point": json.dumps(p),
            "owner": owner,
            "setup": setup,
        }

    tasks = []
    first: Dict[str, int] = {}
    for i, (p, s) in enumerate(zip(points, states)):
        if s in ("failed", "pending"):
            first[p["id"]] = _core.sweep_next_attempt(out, p["id"])
            tasks.append(task(i, first[p["id"]]))
    bar = _Progress(len(points), states.count("done"), progress)
    retry_queue: List[Dict] = []
    failed: Dict[str, str] = {}

    def report(t: Dict, res: Dict) -> None:
        pid = t["id"]
        if res.get("status") == "done":
            failed.pop(pid, None)
            bar.done += 1
        else:
            reason = res.get("reason", "?")
            # Also removes whatever the worker left in tmp/: it is not a result.
            _core.sweep_fail(t["out"], t["point"], t["attempt"], owner["pid"], reason)
            if res.get("retry", True) and t["attempt"] < first[pid] + plan.retries:
                retry_queue.append(task(by_id[pid], t["attempt"] + 1))
            else:
                failed[pid] = reason
        bar.update(len(failed))

    def more() -> List[Dict]:
        batch = list(retry_queue)
        retry_queue.clear()
        return batch

    workers = plan.workers or (os.cpu_count() or 1)
    bar.update(0)
    try:
        if not tasks:
            pass
        elif backend == "local":
            _local(tasks, workers, plan.timeout, report, more)
        elif backend == "ray":
            _ray(tasks, plan.workers, plan.timeout, report, more, ray_address, ray_init)
        else:
            _submitit(tasks, plan.workers, plan.timeout, report, more, out, slurm or {}, backend == "submitit-local")
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
        return list(_core.sweep_states(self.out))

    def status(self) -> Dict[str, int]:
        """Counts of points done, running, failed and pending."""
        st = self.states()
        return {k: st.count(k) for k in ("done", "running", "failed", "pending")}

    def failures(self) -> pd.DataFrame:
        """The failed attempts of every point that has not completed: id, attempt, reason."""
        rows = []
        for p, s in zip(self.points, self.states()):
            if s != "done":
                for a in json.loads(_core.sweep_failures(self.out, p["id"])):
                    rows.append({"id": p["id"], **p["axes"], "seed": p["seed"], "attempt": a.get("attempt"), "reason": a.get("reason")})
        return pd.DataFrame(rows)

    def point_dir(self, point: Union[str, Mapping[str, Any]]) -> Path:
        pid = point if isinstance(point, str) else point["id"]
        return self.out / "points" / pid

    @property
    def table(self) -> pd.DataFrame:
        """One row per point: id, status, seed, the axes, summary.json's scalar figures (by name) and attempts."""
        t = json.loads(_core.sweep_table(self.out))
        return pd.DataFrame(t["rows"], columns=t["columns"])

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
