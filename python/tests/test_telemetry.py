"""Tests of csigsim.telemetry: the ABW matrix between host groups, windows of
any size, the bottleneck-location map and congestion episodes, on runs whose
congestion is known by construction or documented."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import csigsim
import csigsim.plot as cp
import csigsim.telemetry as tm

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

# Fat tree k = 4: 4 pods of 2 ToRs of 2 hosts. Every host sends one flow,
# capped at 25 Gb/s, to the host four further on (the next pod); in pod 1,
# every host also sends at line rate to h8 (pod 2): an incast whose paths
# only pod 1's flows take, so pod 1's row of the matrix is the congested one.
CONGESTED_POD = """
name = "one congested pod"
stop = "1500us"
[topology]
kind = "fat_tree"
k = 4
[transport]
cc = "none"
[signals.csig]
type = "abw_c"
size = "wide"
abw_interval = "20us"
""" + "".join(
    f'[[flow]]\nsrc = "h{i}"\ndst = "h{(i + 4) % 16}"\nsize = "100MB"\nrate = "25Gbps"\n' for i in range(16)
) + "".join(f'[[flow]]\nsrc = "h{i}"\ndst = "h8"\nsize = "100MB"\n' for i in range(4, 8))

# One switch, three hosts: a 25 Gb/s background flow h0 -> h2 for the whole
# run and, at 1 ms, a line-rate burst h1 -> h2 of 2.8 MB (about 300 us).
BURST = """
name = "one burst"
stop = "3ms"
[topology]
kind = "custom"
hosts = ["h0", "h1", "h2"]
switches = ["s0"]
links = [
  { a = "h0", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h1", b = "s0", rate = "100Gbps", delay = "1us" },
  { a = "h2", b = "s0", rate = "100Gbps", delay = "1us" },
]
[transport]
cc = "none"
[signals.csig]
type = "abw_c"
size = "wide"
abw_interval = "20us"
[[flow]]
name = "background"
src = "h0"
dst = "h2"
size = "100MB"
rate = "25Gbps"
[[flow]]
name = "burst"
src = "h1"
dst = "h2"
size = "2.8MB"
start = "1ms"
"""


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    return csigsim.run(CONGESTED_POD, out=tmp_path_factory.mktemp("pod"))


@pytest.fixture(scope="module")
def burst():
    return csigsim.run(BURST)


@pytest.fixture(scope="module")
def clos(tmp_path_factory):
    # The documented incast + victim, with CSIG max(Delay) tags to locate the bottleneck.
    return csigsim.run(SCENARIOS / "clos_incast_victim.toml", overrides={"signals.csig.type": "delay"},
                       out=tmp_path_factory.mktemp("clos"))


@pytest.fixture(scope="module")
def parking_lot():
    return csigsim.run(SCENARIOS / "nscc_parking_lot.toml", overrides={"stop": "1ms"})


@pytest.fixture(scope="module")
def chain():
    return csigsim.run(SCENARIOS / "chain_csig_delay.toml")


def test_parse_time():
    assert tm.parse_time("100us") == 1e5
    assert tm.parse_time("1s") == 1e9
    assert tm.parse_time(250) == 250.0
    with pytest.raises(ValueError):
        tm.parse_time("100 parsecs")


def test_pods_and_racks_from_the_links(pod):
    pods = tm.host_groups(pod, "pod")
    racks = tm.host_groups(pod, "rack")
    assert pods == {f"h{i}": f"pod{i // 4}" for i in range(16)}
    assert racks == {f"h{i}": f"tor{i // 2}" for i in range(16)}
    named = tm.host_groups(pod, {"left": ["h0", "h1"], "right": ["h2"]})
    assert named == {"h0": "left", "h1": "left", "h2": "right"}


def test_congested_pod_has_the_lowest_row(pod):
    m = tm.abw_matrix(pod, "pod")
    assert list(m.index) == list(m.columns) == ["pod0", "pod1", "pod2", "pod3"]
    rows = m.mean(axis=1)
    assert rows.idxmin() == "pod1"
    assert rows["pod1"] < 0.5 * rows.drop("pod1").min()
    # Flows only go to the next pod: the other cells have no samples.
    for i in range(4):
        assert m.notna().sum(axis=1).iloc[i] == 1 and np.isfinite(m.iloc[i, (i + 1) % 4])
    # The minimum is never above the mean, and values are fractions.
    mins = tm.abw_matrix(pod, "pod", stat="min")
    assert (mins.fillna(0) <= m.fillna(0) + 1e-12).all().all()
    vals = m.to_numpy()[np.isfinite(m.to_numpy())]
    assert len(vals) == 4 and ((vals >= 0) & (vals <= 1)).all()
    # The same view by rack: both of pod 1's racks are the two lowest rows.
    r = tm.abw_matrix(pod, "rack").mean(axis=1).sort_values()
    assert set(r.index[:2]) == {"tor2", "tor3"}


def test_window_means_are_sample_weighted(pod):
    w = tm.abw_windows(pod, "100us", "pod")
    whole = tm.abw_windows(pod, None, "pod")
    for _, row in whole.iterrows():
        part = w[(w.src_group == row.src_group) & (w.dst_group == row.dst_group)]
        assert part.samples.sum() == row.samples
        assert np.isclose((part["mean"] * part.samples).sum() / part.samples.sum(), row["mean"])
        assert part["min"].min() == row["min"]
    assert set(w.time_ns) == {i * 1e5 for i in range(15)}
    # A window must be a whole number of monitor windows.
    with pytest.raises(ValueError, match="monitor.window"):
        tm.abw_windows(pod, "150us", "pod")


def test_100us_windows_resolve_a_300us_burst_that_1s_windows_average_away(burst):
    fine = tm.abw_windows(burst, "100us", "host")
    coarse = tm.abw_windows(burst, "1s", "host")
    background = fine[(fine.src_group == "h0") & (fine.dst_group == "h2")].set_index("time_ns")["mean"]
    # At 100 us the burst shows: windows in which the background flow saw its
    # bottleneck port (almost) full, between 1 and 1.4 ms, around windows at
    # the background's own load (75% available).
    low = background[background < 0.2]
    assert 2 <= len(low) <= 4
    assert low.index.min() >= 1.0e6 and low.index.max() < 1.4e6
    assert (background[background.index < 0.9e6] > 0.7).all()
    # One 1 s window averages it away: the mean stays near the background's.
    (cell,) = coarse[(coarse.src_group == "h0") & (coarse.dst_group == "h2")]["mean"]
    assert cell > 0.6
    assert list(coarse.time_ns.unique()) == [0.0]


def test_bottleneck_map_of_the_clos_incast_names_the_shared_uplink(clos):
    m = tm.bottleneck_map(clos)
    assert set(m.port) <= {"tor0->agg0", "agg0->spine0"}
    assert "tor0->agg0" in set(m.port)
    # The victim F3 (flow 4) shares tor0's first uplink with F0 and F1: its
    # bottleneck is that uplink in every window it was named.
    sig = clos.signals[clos.signals.bottleneck != ""]
    assert set(sig[sig.flow_id == 4].bottleneck) == {"tor0->agg0"}
    row = m[m.port == "tor0->agg0"].iloc[0]
    assert row.tier == 0 and row.direction == "up" and row.switch == "tor0"
    # Shares add up to 1 over the run.
    assert m.share.sum() == pytest.approx(1.0)
    assert m.samples.sum() == sig.samples.sum()


def test_bottleneck_map_of_the_parking_lot_names_both_congested_queues(parking_lot):
    m = tm.bottleneck_map(parking_lot)
    # The documented congested queues: ToR 0's uplink and Agg 2's downlink to ToR 5.
    assert set(m.port) == {"tor0->agg0", "agg2->tor5"}
    up = m.set_index("port")
    assert up.loc["tor0->agg0", "direction"] == "up" and up.loc["agg2->tor5", "direction"] == "down"
    # A custom topology puts every switch in tier 0 (docs/topologies.md).
    assert (m.tier == 0).all()
    by_tier = tm.bottleneck_map(parking_lot, by="tier")
    assert set(zip(by_tier.tier, by_tier.direction)) == {(0, "up"), (0, "down")}
    assert by_tier.samples.sum() == m.samples.sum()


def test_bottleneck_modes_per_window_of_the_chain(chain):
    modes = tm.bottleneck_modes(chain, "100us")
    # The deeper hop s1 -> s2 is the most frequent bottleneck in every window
    # while the three cross flows on it run (docs/signals.md).
    assert (modes[modes.time_ns < 500_000].port == "s1->s2").all()
    assert len(modes) == len(set(modes.time_ns))
    per_window = tm.bottleneck_map(chain, window="100us")
    assert set(per_window.port) == {"s1->s2", "s0->s1"}
    shares = per_window.groupby("time_ns").share.sum()
    assert np.allclose(shares, 1.0)


def test_queue_episodes_are_attributed_to_the_flows_that_crossed_them(clos):
    ep = tm.episodes(clos, "queue", threshold=100_000, min_duration="200us")
    up = ep[ep["where"] == "tor0->agg0"]
    assert len(up) >= 1
    # F0, F1 and the victim F3 cross tor0's uplink; F4 and F8 do not.
    crossed = set().union(*up.flows)
    assert {0, 1, 4} <= crossed and not crossed & {2, 3}
    assert (ep.duration_ns > 200_000).all()
    assert (ep.end_ns - ep.start_ns == ep.duration_ns).all()
    # A longer minimum keeps a subset.
    longer = tm.episodes(clos, "queue", threshold=100_000, min_duration="2ms")
    assert len(longer) < len(ep) and (longer.duration_ns > 2e6).all()


def test_signal_episodes_of_a_flow(burst):
    ep = tm.episodes(burst, "signal", threshold=0.2, min_duration="150us")
    assert len(ep) >= 1
    assert set(ep.flow_id) <= {0, 1}
    first = ep.iloc[0]
    assert first.start_ns >= 1e6 and first.end_ns <= 1.5e6 and first["where"] == "s0->h2"
    assert first.peak <= 0.2


def test_episodes_name_the_collective_steps_that_crossed_them(tmp_path):
    # A ring AllReduce plus a line-rate flow into h1, which every step's
    # flow h0 -> h1 also enters: tor0's port to h1 congests during the steps.
    res = csigsim.run(SCENARIOS / "ring_allreduce.toml",
                      overrides={"workload.0.size": "4MB", "workload.0.iterations": 2})
    extra = res.scenario_toml + '\n[[flow]]\nname = "bg"\nsrc = "h2"\ndst = "h1"\nsize = "2MB"\n'
    res = csigsim.run(extra, out=tmp_path)
    ep = tm.episodes(res, "queue", threshold=50_000)
    into_h1 = ep[ep["where"] == "tor0->h1"]
    assert len(into_h1) >= 1
    coll = res.collectives
    steps = coll[coll.step.notna()]
    for e in into_h1.itertuples():
        assert 0 in e.flows  # the background flow is flow 0 ([[flow]] entries come first)
        expected = []
        for s in steps.itertuples():
            ids = range(int(s.first_flow), int(s.first_flow + s.flows))
            to_h1 = res.flows[res.flows.flow_id.isin(ids) & (res.flows.dst == "h1")]
            if len(to_h1) and s.start_ns < e.end_ns and s.finish_ns >= e.start_ns:
                expected.append(f"{s.name} #{s.collective_id} it{s.iteration} step{int(s.step)}")
        assert e.steps == expected and expected
    # The same from the run directory.
    again = tm.episodes(tmp_path, "queue", threshold=50_000)
    assert list(again.steps) == list(ep.steps)
    # The CCT plot hatches the iterations whose steps crossed an episode.
    crossed = {it for e in ep.itertuples() for (_, _, it, _) in tm.step_keys(res, e.flows, e.start_ns, e.end_ns)}
    assert crossed
    (ax,) = cp.cct(res, threshold=50_000).axes
    bars = [p for p in ax.patches if p.get_height() > 0]
    assert [bool(p.get_hatch()) for p in bars] == [i in crossed for i in range(len(bars))]


def test_views_refuse_runs_without_their_tables(tmp_path):
    res = csigsim.run(SCENARIOS / "two_hosts.toml")
    with pytest.raises(ValueError, match="signals"):
        tm.abw_matrix(res)
    with pytest.raises(ValueError, match="CSIG"):
        tm.bottleneck_map(res)
    with pytest.raises(ValueError, match="groups"):
        tm.host_groups(res, "cluster")


# --- Plots of the views ------------------------------------------------------------


def test_abw_heatmap_draws_the_matrices(pod):
    fig = cp.abw_heatmap(pod, "pod")
    ax_mean, ax_min = fig.axes[0], fig.axes[1]  # then their colorbars
    for ax, stat in ((ax_mean, "mean"), (ax_min, "min")):
        (im,) = ax.get_images()
        m = tm.abw_matrix(pod, "pod", stat=stat)
        data = im.get_array()
        # abw_c is drawn in percent of the port rate; pairs without samples are masked.
        assert np.array_equal(data.mask, m.isna().to_numpy())
        np.testing.assert_allclose(data.filled(np.nan)[~data.mask], m.to_numpy()[~data.mask] * 100)
        assert [t.get_text() for t in ax.get_yticklabels()] == ["pod0", "pod1", "pod2", "pod3"]


def test_abw_timeline_puts_100us_and_1s_side_by_side(burst):
    fig = cp.abw_timeline(burst)
    (ax,) = [a for a in fig.axes]
    fine, coarse = ax.get_lines()
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["100us windows", "1s windows"]
    whole = tm.abw_windows(burst, "1s", lambda h: "all")["mean"].iloc[0]
    assert coarse.get_ydata()[0] == pytest.approx(whole * 100)
    per = tm.abw_windows(burst, "100us", lambda h: "all")["mean"].to_numpy() * 100
    np.testing.assert_allclose(fine.get_ydata()[:-1], per)
    assert fine.get_ydata().min() < 20 < coarse.get_ydata().min()


def test_bottleneck_map_plot_draws_the_counts(parking_lot):
    fig = cp.bottleneck_map(parking_lot)
    ax_bar, ax_map = fig.axes[0], fig.axes[1]
    m = tm.bottleneck_map(parking_lot)
    bars = [p for p in ax_bar.patches if p.get_height() > 0 and p.get_width() > 0]
    assert sorted(b.get_width() for b in bars) == sorted(m.samples)
    assert [t.get_text() for t in ax_bar.get_yticklabels()] == list(m.port[::-1])
    (im,) = ax_map.get_images()
    per = tm.bottleneck_map(parking_lot, window="100us")
    assert im.get_array().shape == (2, per.time_ns.nunique())
    assert ax_map.get_title() == "Per 100us window"


def test_cct_bars_are_the_iteration_times(tmp_path):
    res = csigsim.run(SCENARIOS / "ring_allreduce.toml", overrides={"workload.0.size": "4MB", "workload.0.iterations": 3})
    fig = cp.cct(res)
    (ax,) = fig.axes
    totals = res.collectives[res.collectives.step.isna()]
    heights = [p.get_height() for p in ax.patches if p.get_height() > 0]
    np.testing.assert_allclose(heights, totals.time_ns.to_numpy() / 1e3)
    assert ax.get_xlabel() == "iteration"


def test_save_all_writes_the_telemetry_plots(tmp_path, clos):
    written = {p.name for p in cp.save_all(clos.out, tmp_path / "png")}
    assert {"bottleneck_map.png", "queue.png"} <= written
    # max(Delay) tags carry no ABW, and the run has no collectives.
    assert not written & {"abw_heatmap.png", "abw_timeline.png", "cct.png"}
