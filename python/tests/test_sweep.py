"""csigsim.sweep on each backend: local processes, a local Ray cluster,
submitit's local executor, and Slurm when one can be had."""

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

import csigsim
from csigsim import SweepError

REPO = Path(__file__).resolve().parents[2]
TWO_HOSTS = str(REPO / "scenarios" / "two_hosts.toml")


def spec(out, values=(1024, 2048), seeds=(1, 2), **more):
    d = {
        "scenario": TWO_HOSTS,
        "out": str(out),
        "seeds": list(seeds),
        "axis": [{"key": "transport.mtu", "values": list(values)}],
    }
    d.update(more)
    return d


def finished(sw, pid):
    return json.loads((sw.point_dir(pid) / "point.json").read_text())["attempts"][-1]["finished"]


def kill_first_attempt_of(mtu, seed):
    """A setup hook that SIGKILLs the worker running the point's first attempt."""

    def hook(task):
        if task["axes"]["transport.mtu"] == mtu and task["seed"] == seed and task["attempt"] == 1:
            os.kill(os.getpid(), signal.SIGKILL)

    return hook


def check_killed_and_rerun(sw, reason_part):
    t = sw.table
    assert list(t["status"]) == ["done"] * 4, t
    victim = t[(t["transport.mtu"] == 2048) & (t["seed"] == 1)].iloc[0]
    attempts = json.loads((sw.point_dir(victim["id"]) / "point.json").read_text())["attempts"]
    assert [a["status"] for a in attempts] == ["failed", "done"]
    assert reason_part in attempts[0]["reason"], attempts[0]
    assert victim["attempts"] == 2
    others = t[t["id"] != victim["id"]]
    assert set(others["attempts"]) == {1}
    assert not list((sw.out / "failed").iterdir())
    assert not list((sw.out / "tmp").iterdir())


def test_local_sweep_is_idempotent_and_reruns_only_changed_points(tmp_path):
    out = tmp_path / "sw"
    sw = csigsim.sweep(spec(out), workers=2)
    t = sw.table
    assert len(t) == 4 and list(t["status"]) == ["done"] * 4
    assert list(zip(t["transport.mtu"], t["seed"])) == [(1024, 1), (1024, 2), (2048, 1), (2048, 2)]
    # Each point ran its own scenario: the MTU changes the packet count.
    assert list(t["packets_delivered"]) == [-(-10_000_000 // mtu) for mtu in t["transport.mtu"]]
    stamps = {p: finished(sw, p) for p in t["id"]}

    again = csigsim.sweep(spec(out), workers=2)
    assert {p: finished(again, p) for p in t["id"]} == stamps, "a rerun runs nothing"

    changed = csigsim.sweep(spec(out, values=(1024, 3072)), workers=2).table
    assert list(changed["id"][:2]) == list(t["id"][:2])
    assert {p: finished(sw, p) for p in t["id"][:2]} == {p: stamps[p] for p in t["id"][:2]}
    assert set(changed["id"][2:]).isdisjoint(t["id"])
    assert list(changed["status"]) == ["done"] * 4


def test_results_table_flows_and_parquet(tmp_path):
    pytest.importorskip("pyarrow")
    sw = csigsim.sweep(spec(tmp_path / "sw", values=(1024, 4096), seeds=(1,)), progress=True)
    t = sw.table
    assert {"id", "status", "seed", "transport.mtu", "fct_p99_ns", "end_reason"} <= set(t.columns)
    f = sw.flows()
    assert len(f) == 2 and list(f["transport.mtu"]) == [1024, 4096]
    assert list(f.columns[:3]) == ["id", "seed", "transport.mtu"] and "fct_ns" in f.columns
    # The figures of the table are those of each run's own summary.
    for _, row in t.iterrows():
        s = json.loads((sw.point_dir(row["id"]) / "summary.json").read_text())
        assert row["fct_p99_ns"] == s["fct_p99_ns"]
    import pandas as pd

    back = pd.read_parquet(sw.to_parquet())
    assert list(back["id"]) == list(t["id"]) and list(back["fct_p99_ns"]) == list(t["fct_p99_ns"])
    assert csigsim.load_sweep(tmp_path / "sw").status() == {"done": 2, "running": 0, "failed": 0, "pending": 0}


def test_local_worker_killed_is_recorded_and_retried(tmp_path):
    sw = csigsim.sweep(spec(tmp_path / "sw"), workers=2, retries=1, setup=kill_first_attempt_of(2048, 1))
    check_killed_and_rerun(sw, "killed by signal 9 (SIGKILL)")


def test_without_retries_the_failure_stays_until_the_next_run(tmp_path):
    out = tmp_path / "sw"
    sw = csigsim.sweep(spec(out), workers=2, retries=0, setup=kill_first_attempt_of(2048, 1))
    assert sw.status() == {"done": 3, "running": 0, "failed": 1, "pending": 0}
    fails = sw.failures()
    assert len(fails) == 1 and fails["reason"][0] == "killed by signal 9 (SIGKILL)"
    check_killed_and_rerun(csigsim.sweep(spec(out), workers=2, retries=0), "killed by signal 9 (SIGKILL)")


def test_zip_range_and_bad_specs(tmp_path):
    d = spec(tmp_path / "sw", seeds=(1,), mode="zip")
    d["axis"] = [
        {"key": "transport.mtu", "range": {"start": 1024, "stop": 3072, "step": 1024}},
        {"key": "transport.ack_every", "values": [1, 2, 3]},
    ]
    plan = csigsim.sweep(d, run=False)
    assert plan.status() == {"done": 0, "running": 0, "failed": 0, "pending": 3}
    t = csigsim.sweep(d).table
    assert list(zip(t["transport.mtu"], t["transport.ack_every"])) == [(1024, 1), (2048, 2), (3072, 3)]
    with pytest.raises(SweepError) as e:
        csigsim.sweep(spec(tmp_path / "x", axis=[{"key": "transport.mtu"}]))
    assert e.value.key == "axis[0].values"
    with pytest.raises(SweepError) as e:
        csigsim.sweep(spec(tmp_path / "x", sedes=[1]))
    assert e.value.key == "sedes"
    with pytest.raises(csigsim.ScenarioError) as e:
        csigsim.sweep(spec(tmp_path / "x", values=(1024, 0)))
    assert e.value.key == "transport.mtu"
    assert not (tmp_path / "x").exists()


def _cli():
    for p in (os.environ.get("CSIGSIM_BIN"), REPO / "target" / "debug" / "csigsim", REPO / "target" / "release" / "csigsim"):
        if p and Path(p).is_file():
            return str(p)
    return None


def test_python_and_cli_agree_on_point_ids(tmp_path):
    cli = _cli()
    if cli is None:
        pytest.skip("no csigsim binary built (cargo build -p csigsim-cli)")
    f = tmp_path / "s.toml"
    f.write_text(
        f'scenario = {json.dumps(TWO_HOSTS)}\nout = {json.dumps(str(tmp_path / "cli"))}\nseeds = [3]\n'
        '[set]\n"monitor.window" = "20us"\n'
        '[[axis]]\nkey = "transport.mtu"\nrange = { start = 1000, stop = 3000, step = 1000 }\n'
        '[[axis]]\nkey = "switch.dt_alpha"\nrange = { start = 0.5, stop = 1.5, count = 3 }\n'
    )
    r = subprocess.run([cli, "sweep", str(f), "--quiet"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    cli_ids = [p["id"] for p in json.loads((tmp_path / "cli" / "sweep.json").read_text())["points"]]
    plan = csigsim.sweep(f, out=tmp_path / "py", run=False)
    assert [p["id"] for p in plan.points] == cli_ids and len(cli_ids) == 9
    # And Python resumes the CLI's sweep: nothing left to run.
    sw = csigsim.sweep(f)
    assert sw.status()["done"] == 9
    assert all(len(json.loads((sw.point_dir(p) / "point.json").read_text())["attempts"]) == 1 for p in cli_ids)


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def test_ray_backend(tmp_path, ray_cluster):
    sw = csigsim.sweep(spec(tmp_path / "sw"), backend="ray", retries=1, setup=kill_first_attempt_of(2048, 1))
    check_killed_and_rerun(sw, "WorkerCrashedError")


def test_submitit_local_backend(tmp_path):
    pytest.importorskip("submitit")
    sw = csigsim.sweep(spec(tmp_path / "sw"), backend="submitit-local", retries=1, setup=kill_first_attempt_of(2048, 1))
    check_killed_and_rerun(sw, "without a result: its process died")


SLURM_CONF = """ClusterName=csigsim-test
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SlurmctldPort=16817
SlurmdPort=16818
NodeName={host} CPUs={cpus} RealMemory=2000 State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def _sinfo_idle(env):
    try:
        r = subprocess.run(["sinfo", "-h", "-o", "%t"], capture_output=True, text=True, env=env, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0 and any(s in r.stdout for s in ("idle", "mix"))


def _kill_pidfile(path):
    try:
        os.kill(int(Path(path).read_text().split()[0]), signal.SIGTERM)
    except (OSError, ValueError, IndexError):
        pass


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running Slurm: the machine's, or a single-node one set up here from
    Debian's packages (as root); otherwise the test is skipped with the reason."""
    pytest.importorskip("submitit")
    if shutil.which("sinfo") and _sinfo_idle(os.environ):
        yield
        return
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        pytest.skip("no Slurm cluster here, and setting one up needs root and apt-get (Debian's slurmctld, slurmd, munge)")
    if shutil.which("slurmctld") is None or shutil.which("slurmd") is None or shutil.which("munged") is None:
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        try:
            subprocess.run(["apt-get", "update", "-qq"], capture_output=True, env=env, timeout=600)
            r = subprocess.run(
                ["apt-get", "install", "-y", "-qq", "slurmctld", "slurmd", "slurm-client", "munge"],
                capture_output=True, text=True, env=env, timeout=900,
            )
        except subprocess.TimeoutExpired:
            pytest.skip("installing Slurm from Debian's packages took too long")
        if r.returncode != 0:
            pytest.skip(f"Slurm does not install from Debian's packages here: {(r.stderr or r.stdout).strip()[-300:]}")
    d = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool"):
        (d / sub).mkdir()
    host = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip() or "localhost"
    conf = d / "slurm.conf"
    conf.write_text(SLURM_CONF.format(host=host, d=d, cpus=os.cpu_count() or 1))
    env = dict(os.environ, SLURM_CONF=str(conf))
    started_munge = False
    if not Path("/run/munge/munge.socket.2").exists():
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        r = subprocess.run(["munged", "--force"], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"munged does not start: {r.stderr.strip()[-300:]}")
        started_munge = True
    try:
        for daemon in ("slurmctld", "slurmd"):
            r = subprocess.run([daemon], capture_output=True, text=True, env=env)
            if r.returncode != 0:
                pytest.skip(f"{daemon} does not start: {r.stderr.strip()[-300:]}")
        deadline = 60
        while not _sinfo_idle(env) and deadline > 0:
            subprocess.run(["sleep", "0.5"])
            deadline -= 0.5
        if deadline <= 0:
            logs = " | ".join((d / f).read_text()[-200:] for f in ("slurmctld.log", "slurmd.log") if (d / f).exists())
            pytest.skip(f"the single-node Slurm set up here has no idle node: {logs}")
        old = os.environ.get("SLURM_CONF")
        os.environ["SLURM_CONF"] = str(conf)
        yield
        if old is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = old
    finally:
        # Let the last job steps end before their daemons do.
        subprocess.run(["scancel", "--full", "--quiet", "--partition=test"], capture_output=True, env=env)
        for _ in range(40):
            q = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=env)
            if q.returncode != 0 or not q.stdout.strip():
                break
            subprocess.run(["sleep", "0.5"])
        _kill_pidfile(d / "slurmd.pid")
        _kill_pidfile(d / "slurmctld.pid")
        if started_munge:
            _kill_pidfile("/run/munge/munged.pid")


def test_slurm_backend(tmp_path, slurm_cluster):
    # Slurm jobs read and write the sweep directory: a path every node sees (here, one node).
    sw = csigsim.sweep(
        spec(tmp_path / "sw"), backend="slurm", retries=1, slurm={"mem_gb": 1}, timeout="5m", setup=kill_first_attempt_of(2048, 1)
    )
    check_killed_and_rerun(sw, "job ")
