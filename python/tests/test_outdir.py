"""``run(..., out=DIR)`` and ``Results.write`` own their run directory as the
CLI does: locked, published whole, never onto a directory that is not a
run's or onto the scenario's own files; and a local sweep's workers die
with their driver."""

import fcntl
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import csigsim
from csigsim import ScenarioError

REPO = Path(__file__).resolve().parents[2]
TWO_HOSTS = REPO / "scenarios" / "two_hosts.toml"
SMALL = {"flow[0].size": "10KB"}


def contents(d: Path):
    """Every entry of a directory with a hash of its bytes (hidden ones too)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir" for p in sorted(d.iterdir())}


def test_out_refuses_a_directory_that_is_not_a_run(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "links.csv").write_text("my own links\n")
    before = contents(mine)
    with pytest.raises(ScenarioError) as e:
        csigsim.run(str(TWO_HOSTS), overrides=SMALL, out=mine)
    assert e.value.key == "out"
    assert str(mine) in str(e.value) and "not a csigsim run directory" in str(e.value) and "links.csv" in str(e.value)
    assert contents(mine) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"], "nothing created beside it"
    # Results.write likewise.
    res = csigsim.run(str(TWO_HOSTS), overrides=SMALL)
    with pytest.raises(ScenarioError) as e:
        res.write(mine)
    assert e.value.key == "dir"
    assert contents(mine) == before


def test_out_never_overwrites_the_scenario(tmp_path, monkeypatch):
    (tmp_path / "scenario.toml").write_text(TWO_HOSTS.read_text())
    before = contents(tmp_path)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ScenarioError) as e:
        csigsim.run("scenario.toml", overrides={"transport.cc": "dctcp"}, out=".")
    assert e.value.key == "out" and "the scenario scenario.toml lies inside the run directory" in str(e.value)
    assert contents(tmp_path) == before
    # A trace file inside the run directory, the scenario given as text.
    traces = tmp_path / "traces"
    traces.mkdir()
    (traces / "t.csv").write_text("src,dst,size,start\nh0,h1,10KB,0us\n")
    head = TWO_HOSTS.read_text().split("[[flow]]")[0]
    text = head + '[[workload]]\nkind = "trace"\nfile = "traces/t.csv"\n'
    with pytest.raises(ScenarioError) as e:
        csigsim.run(text, out=traces)
    assert "workload[0].file" in str(e.value)
    assert sorted(p.name for p in traces.iterdir()) == ["t.csv"]
    assert csigsim.run(text, out=tmp_path / "runs" / "traced").summary["flows_completed"] == 1


def test_out_replaces_an_earlier_run_whole(tmp_path):
    out = tmp_path / "run"
    csigsim.run(str(TWO_HOSTS), overrides=SMALL, out=out)
    assert sorted(p.name for p in out.iterdir()) == ["flows.csv", "links.csv", "scenario.toml", "summary.json"]
    csigsim.run(str(TWO_HOSTS), overrides=dict(SMALL, **{"monitor.links": False}), seed=5, out=out)
    assert sorted(p.name for p in out.iterdir()) == ["flows.csv", "scenario.toml", "summary.json"]
    assert json.loads((out / "summary.json").read_text())["seed"] == 5
    assert sorted(p.name for p in tmp_path.iterdir()) == [".run.lock", "run"], "no staging directory left"


def test_out_locked_by_another_process_is_refused_naming_it(tmp_path):
    out = tmp_path / "run"
    with open(tmp_path / ".run.lock", "w") as f:
        f.write("4242\n")
        f.flush()
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(ScenarioError) as e:
            csigsim.run(str(TWO_HOSTS), overrides=SMALL, out=out)
    assert "another csigsim run (process 4242) is writing the run directory" in str(e.value)
    assert not out.exists()
    csigsim.run(str(TWO_HOSTS), overrides=SMALL, out=out)
    assert (out / "summary.json").is_file()


def test_out_removes_stale_staging_and_keeps_a_live_one(tmp_path):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".run.partial-{dead.pid}"
    live = tmp_path / f".run.partial-{os.getppid()}"
    for d in (stale, live):
        d.mkdir()
        (d / "links.csv").write_text("half")
    csigsim.run(str(TWO_HOSTS), overrides=SMALL, out=tmp_path / "run")
    assert not stale.exists()
    assert (live / "links.csv").is_file()


def _children(parent: int):
    kids = []
    for e in Path("/proc").iterdir():
        if not e.name.isdigit():
            continue
        try:
            stat = (e / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent:
            kids.append(int(e.name))
    return kids


def _running(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sweep_workers_die_with_their_driver(tmp_path):
    spec = {"scenario": str(TWO_HOSTS), "out": str(tmp_path / "sw"), "seeds": [1, 2], "workers": 2, "set": {"flow[0].size": "1000GB"}}
    driver = subprocess.Popen(
        [sys.executable, "-c", f"import csigsim; csigsim.sweep({spec!r}, progress=False)"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        t0 = time.monotonic()
        while len(workers := _children(driver.pid)) < 2:
            assert time.monotonic() - t0 < 60, "the workers never started"
            time.sleep(0.02)
        time.sleep(0.3)
        assert all(_running(p) for p in workers), "the workers ended early"
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        killed = time.monotonic()
        while any(_running(p) for p in workers):
            assert time.monotonic() - killed < 2, f"workers {workers} still running 2 s after their driver was killed"
            time.sleep(0.01)
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for p in _children(driver.pid):
            os.kill(p, signal.SIGKILL)
