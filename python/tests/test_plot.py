"""Tests of csigsim.plot on runs of shipped scenarios: the figures draw the
tables' values, with the expected lines and labels."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import csigsim
import csigsim.plot as cp

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

# A small lossless incast (15 senders of 200KB into a small buffer), so PFC pauses.
INCAST = {"workload.0.count": 15, "workload.0.size": "200KB", "switch.buffer": "1MB", "monitor.window": "5us"}


@pytest.fixture(scope="module")
def incast(tmp_path_factory):
    out = tmp_path_factory.mktemp("incast")
    return csigsim.run(SCENARIOS / "incast_fat_tree.toml", overrides=INCAST, out=out)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    out = tmp_path_factory.mktemp("chain")
    return csigsim.run(SCENARIOS / "chain_csig_delay.toml", overrides={"monitor.cc": True, "transport.cc": "dctcp"}, out=out)


@pytest.fixture(scope="module")
def ring(tmp_path_factory):
    out = tmp_path_factory.mktemp("ring")
    return csigsim.run(SCENARIOS / "ring_allreduce.toml", overrides={"workload.0.size": "4MB", "workload.0.iterations": 3}, out=out)


def lines_of(ax):
    return [l for l in ax.get_lines()]


def legend_texts(ax):
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()] if leg else []


def test_fct_cdf_draws_the_sorted_fcts(incast):
    fig = cp.fct_cdf(incast, unit="us")
    assert isinstance(fig, Figure)
    (ax,) = fig.axes
    (line,) = lines_of(ax)
    fct = incast.flows.fct_ns.dropna().to_numpy(float)
    assert len(fct) == len(incast.flows) == 15
    np.testing.assert_allclose(line.get_xdata(), np.sort(fct) / 1000)
    y = line.get_ydata()
    assert y[-1] == 1.0 and np.all(np.diff(y) > 0) and y[0] == pytest.approx(1 / 15)
    assert ax.get_xlabel() == "flow completion time (us)"
    assert ax.get_ylabel() == "fraction of flows"
    assert "15 flows" in ax.get_title() and "incast 127 to 1" in ax.get_title()


def test_fct_cdf_units_groups_and_runs(incast, chain):
    # Milliseconds on request (and by default above 10 ms).
    (line,) = lines_of(cp.fct_cdf(incast, unit="ms").axes[0])
    np.testing.assert_allclose(line.get_xdata(), np.sort(incast.flows.fct_ns) / 1e6)
    # One line per flow name, each a CDF of its own flows.
    fig = cp.fct_cdf(chain, by="name")
    ax = fig.axes[0]
    names = sorted(set(chain.flows.name))
    assert len(lines_of(ax)) == len(names) > 1
    for line, name in zip(lines_of(ax), names):
        fct = chain.flows.fct_ns[chain.flows.name == name].dropna()
        np.testing.assert_allclose(line.get_xdata(), np.sort(fct) / 1000)
        assert line.get_ydata()[-1] == 1.0
    # Two runs compared: one line each, labelled.
    fig = cp.fct_cdf([("incast", incast), ("chain", chain.flows)])
    ax = fig.axes[0]
    assert len(lines_of(ax)) == 2
    assert legend_texts(ax) == [f"incast ({len(incast.flows)} flows)", f"chain ({len(chain.flows)} flows)"]


def test_fct_cdf_leaves_out_unfinished_flows():
    res = csigsim.run(SCENARIOS / "chain_csig_delay.toml", overrides={"stop": "500us"})
    done = res.flows.fct_ns.dropna()
    assert 0 < len(done) < len(res.flows)
    ax = cp.fct_cdf(res, unit="us").axes[0]
    (line,) = lines_of(ax)
    np.testing.assert_allclose(line.get_xdata(), np.sort(done) / 1000)
    assert f"{len(done)} of {len(res.flows)} flows finished" in ax.get_title()


def nearest(v, q):
    # The nearest rank written out: the value of rank ceil(n q) of the sorted values.
    s = np.sort(np.asarray(v, dtype=float))
    return s[max(1, int(np.ceil(len(s) * q))) - 1]


def test_slowdown_by_size_p50_and_p99_by_nearest_rank():
    res = csigsim.run(SCENARIOS / "websearch_poisson.toml", overrides={"workload.0.duration": "200us"})
    fig = cp.slowdown_by_size(res)
    ax = fig.axes[0]
    p50, p99 = lines_of(ax)
    flows = res.flows[res.flows.slowdown.notna()]
    bucket = cp.size_buckets(flows.size_bytes)
    g = flows.slowdown.groupby(bucket)
    used = sorted(set(bucket))
    assert len(used) >= 3
    np.testing.assert_array_equal(p50.get_ydata(), g.agg(lambda v: nearest(v, 0.5)).loc[used])
    np.testing.assert_array_equal(p99.get_ydata(), g.agg(lambda v: nearest(v, 0.99)).loc[used])
    np.testing.assert_array_equal(p50.get_xdata(), range(len(used)))
    labels = [t.get_text() for t in ax.get_xticklabels()]
    all_labels = ["<= 10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", "> 10MB"]
    assert [l.split("\n")[0] for l in labels] == [all_labels[i] for i in used]
    for label, b in zip(labels, used):
        n = int((bucket == b).sum())
        assert label.split("\n")[1] == f"{n} flow" + ("s" if n != 1 else "")
    assert ax.get_ylabel() == "slowdown (FCT / ideal FCT)" and ax.get_xlabel() == "flow size"
    assert legend_texts(ax) == ["p50", "p99"]
    # Buckets given as sizes: flows up to 1MB, and the larger ones.
    ax = cp.slowdown_by_size(res, buckets=["1MB"]).axes[0]
    small = flows.size_bytes <= 1_000_000
    assert [t.get_text() for t in ax.get_xticklabels()] == [f"<= 1MB\n{small.sum()} flows", f"> 1MB\n{(~small).sum()} flows"]
    np.testing.assert_array_equal(lines_of(ax)[0].get_ydata(), [nearest(flows.slowdown[small], 0.5), nearest(flows.slowdown[~small], 0.5)])


def test_size_buckets_bounds_are_inclusive():
    assert cp.size_buckets([1, 10_000, 10_001, 10**7, 10**7 + 1]).tolist() == [0, 0, 1, 3, 4]
    with pytest.raises(ValueError):
        cp.size_buckets([1], buckets=[100, 10])


def test_queue_and_utilization_of_chosen_links(incast):
    links = incast.links
    chosen = [("tor0", "h0"), ("h1", "tor0")]
    fig = cp.queue(incast, links=chosen, unit="us")
    ax = fig.axes[0]
    assert len(lines_of(ax)) == 2
    assert legend_texts(ax) == ["tor0->h0", "h1->tor0"]
    for line, (a, b) in zip(lines_of(ax), chosen):
        rows = links[(links["from"] == a) & (links["to"] == b)]
        np.testing.assert_allclose(line.get_xdata(), rows.time_ns / 1000)
        np.testing.assert_allclose(line.get_ydata(), rows.max_queue_bytes / 1000)
    assert ax.get_xlabel() == "time (us)" and ax.get_ylabel() == "max queue in window (KB)"
    # The incast's bottleneck has the deepest queue: first by default.
    assert legend_texts(cp.queue(incast).axes[0])[0] == "tor0->h0"
    assert len(lines_of(cp.queue(incast, top=3).axes[0])) == 3

    ax = cp.utilization(incast, links=["tor0->h0"]).axes[0]
    (line,) = lines_of(ax)
    rows = links[(links["from"] == "tor0") & (links["to"] == "h0")]
    np.testing.assert_allclose(line.get_ydata(), rows.utilization * 100)
    assert max(line.get_ydata()) > 90
    assert ax.get_ylabel() == "utilization (% of line rate)"
    with pytest.raises(ValueError, match="nope->h0"):
        cp.queue(incast, links=[("nope", "h0")])


def test_pauses_only_links_that_paused(incast):
    links = incast.links
    total = links.groupby(["from", "to"]).pause_ns.sum()
    paused = total[total > 0].sort_values(ascending=False, kind="stable")
    assert len(paused) > 0
    ax = cp.pauses(incast, top=100).axes[0]
    assert len(lines_of(ax)) == len(paused)
    assert set(legend_texts(ax)) == {f"{a}->{b}" for a, b in paused.index}
    for line, label in zip(lines_of(ax), legend_texts(ax)):
        a, b = label.split("->")
        rows = links[(links["from"] == a) & (links["to"] == b)]
        np.testing.assert_allclose(line.get_ydata(), rows.pause_ns / 1000)
        assert max(line.get_ydata()) > 0
    assert ax.get_ylabel() == "paused time in window (us)"
    ax = cp.pauses(incast, top=1).axes[0]
    assert len(lines_of(ax)) == 1
    # A lossy run never pauses.
    lossy = csigsim.run(SCENARIOS / "incast_fat_tree.toml", overrides={**INCAST, "switch.mode": "lossy"})
    with pytest.raises(cp.NothingToPlot, match="paused"):
        cp.pauses(lossy)


def test_cc_state_cwnd_and_rate(chain):
    cc = chain.cc
    fig = cp.cc_state(chain, flows=[0, 1])
    ax_w, ax_r = fig.axes
    assert len(lines_of(ax_w)) == len(lines_of(ax_r)) == 2
    for fid, lw, lr in zip([0, 1], lines_of(ax_w), lines_of(ax_r)):
        rows = cc[cc.flow_id == fid]
        np.testing.assert_allclose(lw.get_xdata(), rows.time_ns / 1000)
        np.testing.assert_allclose(lw.get_ydata(), rows.cwnd_bytes / 1000)
        np.testing.assert_allclose(lr.get_ydata(), rows.rate_bps / 1e9)
    assert legend_texts(ax_w) == ["flow 0 (main)", "flow 1 (cross s0-s1)"]
    assert ax_w.get_ylabel() == "cwnd (KB)" and ax_r.get_ylabel() == "rate (Gb/s)"
    assert ax_r.get_xlabel() == "time (us)"
    assert "dctcp" in ax_w.get_title()
    assert len(lines_of(cp.cc_state(chain).axes[0])) == min(8, cc.flow_id.nunique())


def test_cc_state_without_monitor_cc_names_the_key(incast):
    with pytest.raises(ValueError, match=r"monitor\.cc = true"):
        cp.cc_state(incast)


def test_collective_times(ring):
    coll = ring.collectives
    totals = coll[coll.step.isna()]
    steps = coll[coll.step.notna()]
    assert len(totals) == 3
    fig = cp.collective_times(ring, unit="us")
    ax_it, ax_st = fig.axes
    (line,) = lines_of(ax_it)
    np.testing.assert_array_equal(line.get_xdata(), [0, 1, 2])
    np.testing.assert_allclose(line.get_ydata(), totals.time_ns / 1000)
    assert ax_it.get_ylabel() == "completion time (us)" and ax_it.get_xlabel() == "iteration"
    assert len(lines_of(ax_st)) == 3
    for cid, l in zip(totals.collective_id, lines_of(ax_st)):
        rows = steps[steps.collective_id == cid]
        np.testing.assert_allclose(l.get_xdata(), rows.step)
        np.testing.assert_allclose(l.get_ydata(), rows.time_ns / 1000)
    assert ax_st.get_xlabel() == "step" and ax_st.get_ylabel() == "step time (us)"
    with pytest.raises(cp.NothingToPlot, match="collective"):
        cp.collective_times(pd.DataFrame())


def test_read_run_matches_results(incast, chain, ring):
    for res in (incast, chain, ring):
        tables = cp.read_run(res.out)
        assert tables.summary["name"] == res.summary["name"]
        for name in ("flows", "links", "signals", "cc", "collectives", "rpcs"):
            ours, theirs = getattr(tables, name), getattr(res, name)
            if theirs.empty and len(theirs.columns) == 0:
                assert ours.empty and len(ours.columns) == 0
                continue
            pd.testing.assert_frame_equal(ours, theirs, check_exact=False, rtol=1e-12, obj=name)
    # The plots of a run directory are the plots of its Results.
    a = lines_of(cp.fct_cdf(incast.out).axes[0])[0]
    b = lines_of(cp.fct_cdf(incast).axes[0])[0]
    np.testing.assert_array_equal(a.get_xdata(), b.get_xdata())


PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "fixture, expected",
    [
        ("incast", {"fct_cdf", "slowdown_by_size", "queue", "utilization", "pauses"}),
        ("chain", {"fct_cdf", "slowdown_by_size", "queue", "utilization", "cc_state", "bottleneck_map"}),
        ("ring", {"fct_cdf", "slowdown_by_size", "queue", "utilization", "collective_times", "cct"}),
    ],
)
def test_module_cli_writes_the_plots_that_apply(request, tmp_path, fixture, expected):
    res = request.getfixturevalue(fixture)
    if fixture == "ring":
        assert res.links.pause_ns.sum() == 0  # no pauses: pauses.png is not written
    out = tmp_path / "plots"
    proc = subprocess.run(
        [sys.executable, "-m", "csigsim.plot", str(res.out), str(out)], capture_output=True, text=True, env=None
    )
    assert proc.returncode == 0, proc.stderr
    files = {p.name for p in out.iterdir()}
    assert files == {f"{n}.png" for n in expected}
    for f in files:
        assert (out / f).read_bytes()[:8] == PNG
    assert proc.stdout.count("wrote ") == len(expected)
    assert "skipped" in proc.stdout


def test_importing_needs_no_pyplot():
    code = "import sys, csigsim.plot; print('matplotlib.pyplot' in sys.modules)"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "False", proc.stderr


def test_module_cli_usage(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "csigsim.plot"], capture_output=True, text=True)
    assert proc.returncode == 2 and "usage" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "csigsim.plot", str(tmp_path), str(tmp_path / "o")], capture_output=True, text=True)
    assert proc.returncode == 2 and "flows.csv" in proc.stderr


REPRO_RESULT = {
    "id": "S6b",
    "title": "bits per stamp",
    "source_figure": "4 bits may suffice",
    "direction_reproduced": False,
    "variants": {
        "max_16bits": {"main_gbps": 1.2, "rtt_mean_us": 25.0, "note": "text is not a panel"},
        "max_4bits": {"main_gbps": 0.42, "rtt_mean_us": 142.0},
        "max_2bits": {"main_gbps": 0.3, "rtt_mean_us": 197.0},
    },
}


def test_repro_draws_a_bar_per_variant_and_a_panel_per_figure():
    fig = cp.repro(REPRO_RESULT)
    axes = fig.get_axes()
    assert [ax.get_title() for ax in axes] == ["main_gbps", "rtt_mean_us"]
    # Variants in natural order: 2, 4, 16 bits.
    assert [t.get_text() for t in axes[0].get_xticklabels()] == ["max_2bits", "max_4bits", "max_16bits"]
    assert [p.get_height() for p in axes[1].patches] == [197.0, 142.0, 25.0]
    title = fig._suptitle.get_text()
    assert "S6b" in title and "4 bits may suffice" in title and "NOT reproduced" in title
    one = cp.repro(REPRO_RESULT, metrics=["rtt_mean_us"])
    assert [ax.get_title() for ax in one.get_axes()] == ["rtt_mean_us"]
    with pytest.raises(cp.NothingToPlot):
        cp.repro({"id": "S0", "variants": {}})


def test_module_cli_draws_each_experiment_of_a_repro_directory(tmp_path):
    import json

    for exp in ("S1", "S6b"):
        (tmp_path / "repro" / exp).mkdir(parents=True)
        (tmp_path / "repro" / exp / "result.json").write_text(json.dumps({**REPRO_RESULT, "id": exp}))
    r = subprocess.run([sys.executable, "-m", "csigsim.plot", "--repro", str(tmp_path / "repro"), str(tmp_path / "img")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in (tmp_path / "img").iterdir()) == ["S1.png", "S6b.png"]
    bad = subprocess.run([sys.executable, "-m", "csigsim.plot", "--repro", str(tmp_path / "img"), str(tmp_path / "x")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "result.json" in bad.stderr


def test_titles_name_the_run_not_only_the_scenario(tmp_path):
    # Two runs of one scenario: their plots' titles differ by the run directory.
    a = csigsim.run(SCENARIOS / "two_hosts.toml", out=tmp_path / "mtu4096")
    b = csigsim.run(SCENARIOS / "two_hosts.toml", overrides={"transport.mtu": 1024}, out=tmp_path / "mtu1024")
    ta, tb = (cp.fct_cdf(r).axes[0].get_title() for r in (a, b))
    assert ta != tb
    assert "two hosts" in ta and "mtu4096" in ta and "mtu1024" in tb
    # A run read back from its directory is named the same way.
    assert cp.queue(cp.read_run(tmp_path / "mtu1024")).axes[0].get_title().endswith("(mtu1024)")


def test_one_iteration_is_not_squeezed_onto_the_border(ring):
    from types import SimpleNamespace

    one = ring.collectives[ring.collectives.iteration == 0]
    run = SimpleNamespace(collectives=one, links=pd.DataFrame(), summary={})
    for fig in (cp.collective_times(one), cp.cct(run)):
        ax = fig.axes[0]
        lo, hi = ax.get_xlim()
        assert lo <= -0.5 and hi >= 0.5, (lo, hi)


def test_a_flat_queue_is_drawn_from_zero():
    # A queue at 4.0 to 4.1 KB all run long: the axis starts at 0, not at 4 KB.
    t = np.arange(20) * 1000
    links = pd.DataFrame({"time_ns": t, "from": "s0", "to": "h1", "max_queue_bytes": 4000 + (t % 2000) // 20,
                          "utilization": 0.5, "pause_ns": 0})
    ax = cp.queue(links).axes[0]
    lo, hi = ax.get_ylim()
    assert lo == 0 and hi >= 4.05
