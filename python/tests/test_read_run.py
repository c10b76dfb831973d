"""csigsim.read_run reads a run directory with the engine's reader (the one
`csigsim compare` uses), and every percentile is the nearest rank: compare,
summary.json and csigsim.nearest_rank give a run one p99."""

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from binaries import csigsim_cli

import csigsim
import csigsim.plot

ROOT = Path(__file__).resolve().parents[2]
CLI = csigsim_cli()
needs_cli = pytest.mark.skipif(CLI is None, reason="no csigsim binary built (cargo build -p csigsim-cli)")


def cli_run(out, scenario, *sets, parquet=False):
    args = [CLI, "run", str(ROOT / "scenarios" / scenario), "--out", str(out), "--quiet"]
    if parquet:
        args.append("--parquet")
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True)
    return out


def test_nearest_rank_is_the_value_of_rank_ceil_n_q():
    v = np.arange(1, 101, dtype=float)
    assert [csigsim.nearest_rank(v, q) for q in (0.0, 0.5, 0.99, 0.991, 1.0)] == [1, 50, 99, 100, 100]
    assert csigsim.nearest_rank([10, 20, 30], 0.5) == 20 and csigsim.nearest_rank([30, 10, 20], 0.99) == 30
    # Unfinished flows (NaN) are left out; nothing left is NaN.
    assert csigsim.nearest_rank([np.nan, 3.0, 1.0], 0.5) == 1.0
    assert math.isnan(csigsim.nearest_rank([np.nan], 0.5)) and math.isnan(csigsim.nearest_rank([], 0.99))
    assert csigsim.nearest_rank(pd.Series([2, 1]), 1.0) == 2.0
    with pytest.raises(ValueError):
        csigsim.nearest_rank([1.0], 99)


@needs_cli
def test_compare_and_read_run_give_the_same_p99(tmp_path):
    sets = ['workload.0.duration="4ms"']
    a = cli_run(tmp_path / "a", "websearch_poisson.toml", *sets)
    b = cli_run(tmp_path / "b", "websearch_poisson.toml", *sets, 'transport.cc="dctcp"', parquet=True)
    out = subprocess.run([CLI, "compare", str(a), str(b), "--json"], check=True, capture_output=True, text=True)
    v = json.loads(out.stdout)
    for d, key in ((a, "a"), (b, "b")):
        for fmt in ("csv", "parquet") if d == b else ("csv",):
            t = csigsim.read_run(d, format=fmt)
            fct = t.flows.fct_ns.to_numpy(float)
            slow = t.flows.slowdown.to_numpy(float)
            assert (~np.isnan(fct)).sum() >= 100, "enough flows for a p99"
            for q, name in ((0.5, "p50"), (0.99, "p99")):
                assert v[f"fct_{name}_us"][key] == pytest.approx(csigsim.nearest_rank(fct, q) / 1000, rel=1e-12), (d, fmt, name)
                assert v[f"slowdown_{name}"][key] == csigsim.nearest_rank(slow, q), (d, fmt, name)
            # summary.json's p99 is the same figure.
            assert t.summary["fct_p99_ns"] == pytest.approx(csigsim.nearest_rank(fct, 0.99), rel=1e-12)
            # And so is compare's per size bucket.
            done = t.flows[t.flows.slowdown.notna()]
            bucket = csigsim.plot.size_buckets(done.size_bytes)
            for i, g in done.slowdown.groupby(bucket):
                label = ["<=10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">10MB"][i]
                assert v[f"slowdown_p99[{label}]"][key] == csigsim.nearest_rank(g, 0.99), (d, label)


@needs_cli
def test_read_run_gives_the_frames_of_the_csv_files(tmp_path):
    d = cli_run(tmp_path / "chain", "chain_csig_delay.toml", "monitor.cc=true", 'transport.cc="dctcp"', parquet=True)
    t, p = csigsim.read_run(d), csigsim.read_run(d, format="parquet")
    for name, text in (("flows", ("name", "src", "dst")), ("links", ("from", "to")), ("signals", ("signal", "unit", "bottleneck")), ("cc", ("cc",))):
        path = d / f"{name}.csv"
        header = path.read_text().splitlines()[0].split(",")
        theirs = pd.read_csv(path, dtype={c: str for c in text}, keep_default_na=False,
                             na_values={c: [""] for c in header if c not in text})
        pd.testing.assert_frame_equal(getattr(t, name), theirs, check_exact=False, rtol=1e-12, obj=name)
        # The twins read into the same frames, exactly.
        pd.testing.assert_frame_equal(getattr(p, name), getattr(t, name), obj=f"{name} from Parquet")
    assert t.collectives.empty and t.rpcs.empty and t.scenario_toml == (d / "scenario.toml").read_text()


def test_read_run_names_a_bad_file(tmp_path):
    res = csigsim.run(ROOT / "scenarios" / "two_hosts.toml", out=tmp_path / "r")
    flows = (tmp_path / "r" / "flows.csv")
    lines = flows.read_text().splitlines()
    lines[1] = "x" + lines[1]
    flows.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="flows.csv"):
        csigsim.read_run(res.out)


def test_jobs_tables_in_results_and_read_back(tmp_path):
    # Two jobs placed at random on an oversubscribed leaf-spine: jobs.csv's
    # rows and each job's links, the same from the run and from its files.
    r = csigsim.run(ROOT / "scenarios" / "two_jobs.toml", out=tmp_path / "jobs")
    assert list(r.jobs["job"]) == ["a", "b"] and (r.jobs["ranks"] == 8).all()
    assert (r.jobs["shared_links"] > 0).all() and set(r.job_links["job"]) == {"a", "b"}
    assert r.jobs_csv == (tmp_path / "jobs" / "jobs.csv").read_text()
    assert r.job_links_csv == (tmp_path / "jobs" / "job_links.csv").read_text()
    back = csigsim.read_run(tmp_path / "jobs")
    pd.testing.assert_frame_equal(back.jobs, r.jobs, obj="jobs")
    pd.testing.assert_frame_equal(back.job_links, r.job_links, obj="job_links")
    # Without jobs, the tables are empty.
    plain = csigsim.run(ROOT / "scenarios" / "two_hosts.toml")
    assert plain.jobs.empty and plain.job_links.empty and plain.jobs_csv == ""


def test_trace_ops_and_iterations_in_results_and_read_back(tmp_path):
    # The shipped Chakra trace: two iterations of 16 ranks, each rank's
    # compute the trace's own (2 x 20 + 3 x 30 us), the same tables from the
    # run and from its files; a run without a trace has none.
    r = csigsim.run(ROOT / "scenarios" / "chakra_data_parallel.toml", out=tmp_path / "dp")
    it = r.iterations
    ranks = it[it["rank"].notna()]
    assert sorted(set(it["iteration"])) == [0, 1] and len(ranks) == 32
    assert (ranks["compute_ns"] == 130_000).all()
    assert np.allclose(ranks["time_ns"] - ranks["compute_ns"], ranks["exposed_ns"], rtol=0, atol=1e-3)
    assert len(r.ops) == 16 * 14 and set(r.ops["kind"]) == {"compute", "collective"}
    assert r.ops_csv == (tmp_path / "dp" / "ops.csv").read_text()
    assert r.iterations_csv == (tmp_path / "dp" / "iterations.csv").read_text()
    back = csigsim.read_run(tmp_path / "dp")
    pd.testing.assert_frame_equal(back.ops, r.ops, obj="ops")
    pd.testing.assert_frame_equal(back.iterations, r.iterations, obj="iterations")
    plain = csigsim.run(ROOT / "scenarios" / "two_hosts.toml")
    assert plain.ops.empty and plain.iterations.empty and plain.ops_csv == ""
