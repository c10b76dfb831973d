"""Tests of the Python API (python/csigsim) on tiny two-host scenarios."""

import copy
from pathlib import Path
import json
import sys

import pandas as pd
import pytest

import csigsim

SCENARIO = {
    "name": "two hosts",
    "seed": 7,
    "topology": {
        "kind": "custom",
        "hosts": ["h0", "h1"],
        "switches": ["s0"],
        "links": [
            {"a": "h0", "b": "s0", "rate": "100Gbps", "delay": "1us"},
            {"a": "s0", "b": "h1", "rate": "100Gbps", "delay": "1us"},
        ],
    },
    "switch": {"buffer": "1MB", "mode": "lossy"},
    "transport": {"cc": "none", "mtu": 4096, "header": 64},
    "monitor": {"window": "5us"},
    "flow": [{"src": "h0", "dst": "h1", "size": "100KB", "name": "victim"}],
}

SUMMARY_KEYS = {
    "name", "seed", "version", "sim_time_ns", "wall_s", "events", "link_hops", "packets_delivered",
    "packets_dropped", "flows_total", "flows_completed", "invariants_ok",
}
FLOW_COLUMNS = ["flow_id", "name", "src", "dst", "size_bytes", "start_ns", "finish_ns", "fct_ns"]
LINK_COLUMNS = ["time_ns", "from", "to", "tx_bytes", "utilization", "max_queue_bytes", "drops", "ecn_marks", "pause_ns"]
# Wall-clock figures differ between two runs of the same scenario.
WALL_KEYS = {"wall_s", "link_hops_per_s"}


@pytest.fixture
def scenario_file(tmp_path):
    p = tmp_path / "two_hosts.toml"
    p.write_text(csigsim.to_toml(SCENARIO))
    return p


def check_results(res):
    assert SUMMARY_KEYS <= set(res.summary)
    assert res.summary["flows_completed"] == 1
    assert res.summary["flows_total"] == 1
    assert res.summary["invariants_ok"] is True
    assert res.summary["end_reason"] == "completed"
    assert res.summary["version"] == csigsim.__version__
    assert isinstance(res.flows, pd.DataFrame)
    assert list(res.flows.columns[: len(FLOW_COLUMNS)]) == FLOW_COLUMNS
    assert len(res.flows) == 1
    row = res.flows.iloc[0]
    assert row["fct_ns"] > 0
    assert (row["name"], row["src"], row["dst"]) == ("victim", "h0", "h1")
    assert set(LINK_COLUMNS) <= set(res.links.columns)
    assert len(res.links) > 0


def test_run_dict():
    res = csigsim.run(SCENARIO)
    check_results(res)
    assert res.out is None
    assert "two hosts" in repr(res)


def test_run_file(scenario_file):
    check_results(csigsim.run(scenario_file))
    check_results(csigsim.run(str(scenario_file)))


def test_run_toml_string(scenario_file):
    check_results(csigsim.run(scenario_file.read_text()))


def test_dict_and_file_agree(scenario_file):
    a, b = csigsim.run(SCENARIO), csigsim.run(scenario_file)
    assert a.flows_csv == b.flows_csv
    assert a.links_csv == b.links_csv


def test_deterministic():
    a, b = csigsim.run(SCENARIO, seed=3), csigsim.run(SCENARIO, seed=3)
    strip = lambda s: {k: v for k, v in s.items() if k not in WALL_KEYS}
    assert strip(a.summary) == strip(b.summary)
    assert a.summary["seed"] == 3
    assert a.flows_csv == b.flows_csv
    assert a.links_csv == b.links_csv
    assert a.scenario_toml == b.scenario_toml


def test_threads_give_the_same_results():
    # A leaf-spine the parallel mode cuts into two partitions.
    root = Path(__file__).resolve().parents[2]
    scenario = root / "scenarios" / "leaf_spine_spray_trim.toml"
    a, b = csigsim.run(scenario), csigsim.run(scenario, threads=2)
    strip = lambda s: {k: v for k, v in s.items() if k not in WALL_KEYS}
    assert strip(a.summary) == strip(b.summary)
    assert a.flows_csv == b.flows_csv
    assert a.links_csv == b.links_csv
    # Two hosts on one switch cannot be cut: one thread, the same results.
    assert csigsim.run(SCENARIO, threads=2).flows_csv == csigsim.run(SCENARIO).flows_csv
    # "auto": the cores the load leaves free, the same results.
    assert csigsim._core.free_cores() >= 1
    assert csigsim.run(scenario, threads="auto").flows_csv == a.flows_csv
    for bad in (0, 65, 1.5, True, "2", "Auto"):
        with pytest.raises(ValueError, match="threads"):
            csigsim.run(SCENARIO, threads=bad)


def test_out_dir(tmp_path):
    out = tmp_path / "run"
    res = csigsim.run(SCENARIO, out=out)
    assert res.out == out
    for f in ("summary.json", "flows.csv", "links.csv", "scenario.toml"):
        assert (out / f).is_file(), f
    assert json.loads((out / "summary.json").read_text()) == res.summary
    assert (out / "flows.csv").read_text() == res.flows_csv
    # Results.write gives the same bytes as the engine's own writer.
    again = res.write(tmp_path / "again")
    for f in ("summary.json", "flows.csv", "links.csv", "scenario.toml"):
        assert (again / f).read_bytes() == (out / f).read_bytes(), f


def test_overrides():
    base = csigsim.run(SCENARIO).summary["packets_delivered"]
    assert base == 25  # 100 KB in 4096-byte packets
    small = csigsim.run(SCENARIO, overrides={"transport.mtu": 1000}).summary["packets_delivered"]
    assert small == 100
    as_list = csigsim.run(SCENARIO, overrides=["transport.mtu=1000"]).summary["packets_delivered"]
    assert as_list == small
    res = csigsim.run(SCENARIO, overrides={"name": "renamed"})
    assert res.summary["name"] == "renamed"
    assert 'name = "renamed"' in res.scenario_toml


def test_links_off_gives_empty_frame(tmp_path):
    sc = copy.deepcopy(SCENARIO)
    sc["monitor"]["links"] = False
    res = csigsim.run(sc, out=tmp_path / "run")
    assert res.links.empty
    assert not (tmp_path / "run" / "links.csv").exists()


def test_unknown_host(scenario_file):
    sc = copy.deepcopy(SCENARIO)
    sc["flow"][0]["dst"] = "h9"
    with pytest.raises(csigsim.ScenarioError) as ei:
        csigsim.run(sc)
    e = ei.value
    assert isinstance(e, ValueError)
    assert e.key == "flow[0].dst"
    assert e.line is not None and e.column is not None
    assert e.file == "<dict>"
    assert "h9" in str(e)
    # The same problem in a file names the file and the line of the key.
    text = scenario_file.read_text().replace('dst = "h1"', 'dst = "h9"')
    scenario_file.write_text(text)
    with pytest.raises(csigsim.ScenarioError) as ei:
        csigsim.validate(scenario_file)
    e = ei.value
    assert e.key == "flow[0].dst"
    assert e.file == str(scenario_file)
    assert text.splitlines()[e.line - 1].startswith("dst = ")


def test_syntax_error():
    with pytest.raises(csigsim.ScenarioError) as ei:
        csigsim.run('name = "x"\n[topology\n')
    assert "syntax" in str(ei.value)
    assert ei.value.line == 2
    assert ei.value.key is None


def test_bad_override():
    with pytest.raises(csigsim.ScenarioError):
        csigsim.run(SCENARIO, overrides=["no-equals-sign"])
    with pytest.raises(csigsim.ScenarioError) as ei:
        csigsim.run(SCENARIO, overrides={"transport.mtu": 0})
    assert ei.value.key == "transport.mtu"


def test_missing_file(tmp_path):
    with pytest.raises(csigsim.ScenarioError):
        csigsim.run(tmp_path / "nope.toml")


def test_bad_arguments():
    with pytest.raises(ValueError):
        csigsim.run(SCENARIO, seed=-1)
    with pytest.raises(TypeError):
        csigsim.run(42)
    with pytest.raises(TypeError):
        csigsim.to_toml({"a": object()})


def test_validate_ok(scenario_file):
    assert csigsim.validate(SCENARIO) is None
    assert csigsim.validate(scenario_file, overrides={"transport.cc": "none"}) is None


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is new in 3.11")
def test_to_toml_round_trip():
    import tomllib

    doc = {
        "s": 'quote " backslash \\ newline \n tab \t bell \x07 é',
        "i": -3,
        "f": 0.1,
        "big": 1e300,
        "b": False,
        "skip": None,
        "empty": [],
        "nums": [1, 2, 3],
        "odd key": 1,
        "t": {"inline": [{"a": 1, "b": {"c": "d"}}], "sub": {"x": 1.5}},
        "arr": [{"k": 1, "nested": {"z": True}}, {"k": 2}],
    }
    back = tomllib.loads(csigsim.to_toml(doc))
    expected = {k: v for k, v in doc.items() if v is not None}
    assert back == expected


def test_signals_table_from_a_csig_scenario(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    res = csigsim.run(repo / "scenarios" / "chain_csig_delay.toml", out=tmp_path / "run")
    sig = res.signals
    assert {"time_ns", "flow_id", "signal", "unit", "samples", "mean", "min", "max", "locator", "bottleneck"} <= set(sig.columns)
    main = sig[(sig.flow_id == 0) & (sig.signal == "delay") & (sig.bottleneck != "")]
    assert len(main) > 0 and (main.bottleneck == "s1->s2").all()
    assert (tmp_path / "run" / "signals.csv").read_text() == res.signals_csv


def read_csv_file(path, text_columns):
    """A CSV file of a run directory read with pandas: names stay strings, an
    empty numeric cell is NaN (how users read the files, and how Results read
    the texts before it had columns)."""
    text = path.read_text()
    header = text.split("\n", 1)[0].split(",")
    return pd.read_csv(
        path,
        dtype={c: str for c in text_columns if c in header},
        keep_default_na=False,
        na_values={c: [""] for c in header if c not in text_columns},
    )


TEXT_COLUMNS = {
    "flows": ("name", "src", "dst"),
    "links": ("from", "to"),
    "signals": ("signal", "unit", "bottleneck"),
    "cc": ("cc",),
    "collectives": ("name", "op"),
    "rpcs": ("name", "class", "src", "dst"),
}


@pytest.mark.parametrize(
    "scenario, overrides",
    [
        ("chain_csig_delay.toml", {"monitor.cc": True}),
        # Unfinished flows: empty cells in flows.csv.
        ("chain_csig_delay.toml", {"monitor.cc": True, "stop": "150us", "transport.cc": "dctcp"}),
        # Signals and cc on, but no ACK yet: files with only a header.
        ("chain_csig_delay.toml", {"monitor.cc": True, "stop": "1ns"}),
        ("two_hosts.toml", {"monitor.links": False}),
        ("incast_fat_tree.toml", {"monitor.cc": True, "transport.cc": "dcqcn", "switch.mode": "pfc"}),
        # Collectives: steps and totals, and an unfinished one (empty cells).
        ("ring_allreduce.toml", {"workload.0.size": "4MB"}),
        ("ring_allreduce.toml", {"workload.0.size": "4MB", "stop": "100us"}),
        ("rpc_bursty_background.toml", {"workload.0.duration": "2ms", "stop": "1ms"}),
    ],
)
def test_frames_from_columns_equal_the_written_files(tmp_path, scenario, overrides):
    repo = Path(__file__).resolve().parents[2]
    out = tmp_path / "run"
    res = csigsim.run(repo / "scenarios" / scenario, overrides=overrides, out=out)
    for table, text_columns in TEXT_COLUMNS.items():
        frame = getattr(res, table)
        path = out / f"{table}.csv"
        if not path.exists():
            assert frame.empty and len(frame.columns) == 0, table
            assert getattr(res, f"{table}_csv") == ""
            continue
        assert getattr(res, f"{table}_csv") == path.read_text(), table
        pd.testing.assert_frame_equal(frame, read_csv_file(path, text_columns), check_exact=False, rtol=1e-12, obj=table)


def test_frames_have_numbers_and_names():
    repo = Path(__file__).resolve().parents[2]
    res = csigsim.run(repo / "scenarios" / "chain_csig_delay.toml", overrides={"stop": "150us"})
    f = res.flows
    assert f.flow_id.dtype == "int64" and f.size_bytes.dtype == "int64"
    unfinished = f[f.finish_ns.isna()]
    assert len(unfinished) > 0 and unfinished.fct_ns.isna().all() and unfinished.slowdown.isna().all()
    done = f[f.finish_ns.notna()]
    assert ((done.finish_ns - done.start_ns - done.fct_ns).abs() < 1e-6).all()
    assert f.name.iloc[0] == "main" and f.src.iloc[0] == "h0"
    assert set(res.links["from"]) >= {"h0", "s0", "s1", "s2"}


INCAST = Path(__file__).resolve().parents[2] / "scenarios" / "incast_fat_tree.toml"
# Four times the shipped incast's bytes: about four million events, so the
# engine reports progress three or four times.
BIG_INCAST = {"workload.0.size": "8MB", "monitor.links": False}


def test_progress_callable_sees_the_run_advance():
    seen = []
    res = csigsim.run(INCAST, overrides=BIG_INCAST, progress=seen.append)
    assert len(seen) >= 3
    assert all(isinstance(p, csigsim.Progress) for p in seen)
    times = [p.sim_time_ps for p in seen]
    assert times == sorted(times) and times[0] > 0
    assert [p.events for p in seen] == [(i + 1) * 2**20 for i in range(len(seen))]
    assert all(p.stop_ps is None and p.flows_total == 127 for p in seen)
    assert seen[-1].flows_completed <= res.summary["flows_completed"] == 127
    assert seen[-1].sim_time_ps <= res.summary["sim_time_ns"] * 1000


def test_progress_callable_that_raises_stops_the_run():
    calls = []

    def stop(p):
        calls.append(p)
        raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        csigsim.run(INCAST, overrides=BIG_INCAST, progress=stop)
    assert len(calls) == 1


def test_progress_bar_counts_flows_on_stderr(capsys):
    csigsim.run(INCAST, overrides=BIG_INCAST, progress=True)
    err = capsys.readouterr().err
    assert "flows done" in err and "/127" in err


def test_progress_bar_counts_simulated_time_against_the_stop(capsys):
    csigsim.run(INCAST, overrides={**BIG_INCAST, "stop": "30ms"}, progress=True)
    err = capsys.readouterr().err
    assert "simulated" in err and "/30.0k" in err


def test_progress_off_by_default_and_checked(capsys):
    csigsim.run(INCAST, overrides=BIG_INCAST)
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress"):
        csigsim.run(INCAST, overrides=BIG_INCAST, progress="yes")


def test_dir_lists_the_api_not_the_modules_it_uses():
    names = set(dir(csigsim))
    assert not names & {"Any", "np", "pd", "os", "re", "json", "math", "Path", "Mapping", "Union"}, names
    assert {"run", "validate", "read_run", "Results", "ScenarioError", "sweep", "__version__"} <= names
    assert set(csigsim.__all__) <= names


def test_read_run_is_at_the_top_level(tmp_path):
    res = csigsim.run(SCENARIO, out=tmp_path / "run")
    back = csigsim.read_run(tmp_path / "run")
    pd.testing.assert_frame_equal(back.flows, res.flows)
    assert back.summary["name"] == "two hosts"


def test_the_stub_has_the_native_functions_parameters():
    # _core.pyi names every parameter the compiled functions take, in order.
    import ast
    import inspect

    from csigsim import _core

    stub = ast.parse((Path(csigsim.__file__).parent / "_core.pyi").read_text())
    stubbed = {f.name: [a.arg for a in f.args.args] for f in stub.body if isinstance(f, ast.FunctionDef)}
    sweeps = [f.name for f in stub.body if isinstance(f, ast.FunctionDef) and f.name.startswith("sweep_")]
    assert "sweep_plan" in sweeps
    for name in ("run_toml", "run_file", "validate_toml", "validate_file", "resolve_file", *sweeps):
        native = list(inspect.signature(getattr(_core, name)).parameters)
        assert stubbed[name] == native, name
    assert "threads" in stubbed["run_file"] and "threads" in stubbed["run_toml"]
