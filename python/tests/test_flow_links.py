"""A flow-level run's links table: its queue columns are empty (NaN in the
DataFrames, empty cells in links.csv), its bytes and utilisation are
numbers; the plots and views that need queues say so instead of drawing
zeros, and the others work as at packet level."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import csigsim
import csigsim.plot as cp
import csigsim.report as rp
import csigsim.telemetry as tm

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
QUEUES = ["max_queue_bytes", "drops", "ecn_marks", "trims", "pause_ns"]
RING = {"workload.0.size": "4MB", "workload.0.iterations": 2}


@pytest.fixture(scope="module")
def flow(tmp_path_factory):
    out = tmp_path_factory.mktemp("flow")
    return csigsim.run(SCENARIOS / "ring_allreduce.toml", overrides={**RING, "engine.fidelity": "flow"}, out=out)


@pytest.fixture(scope="module")
def packet(tmp_path_factory):
    out = tmp_path_factory.mktemp("packet")
    return csigsim.run(SCENARIOS / "ring_allreduce.toml", overrides=RING, out=out)


def test_queue_columns_are_nan_and_the_rest_numbers(flow, packet):
    links = flow.links
    assert len(links) > 0
    for c in QUEUES:
        assert links[c].isna().all(), c
    assert pd.to_numeric(links["tx_bytes"]).sum() > 0
    assert pd.to_numeric(links["utilization"]).notna().all()
    assert pd.to_numeric(links["utilization"]).max() > 0.5
    for c in QUEUES:
        assert packet.links[c].notna().all(), c
    # The file: the five cells empty on every line.
    lines = flow.links_csv.splitlines()
    assert lines[0].endswith(",".join(["utilization"] + QUEUES))
    assert all(line.endswith(",,,,,") for line in lines[1:])


def test_the_run_directory_reads_back_with_nan(flow):
    back = csigsim.read_run(flow.out)
    for c in QUEUES:
        assert back.links[c].isna().all(), c
    np.testing.assert_array_equal(back.links["tx_bytes"].to_numpy(), flow.links["tx_bytes"].to_numpy())


def test_queue_plots_say_not_measured_and_the_others_draw(flow, packet):
    with pytest.raises(cp.NothingToPlot, match="not measured"):
        cp.queue(flow)
    with pytest.raises(cp.NothingToPlot, match="not measured"):
        cp.pauses(flow)
    fig = cp.utilization(flow)
    (ax,) = fig.axes
    assert len(ax.get_lines()) > 0
    # The CCT bars, without queue episodes to hatch.
    fig = cp.cct(flow)
    (ax,) = fig.axes
    assert not any("hatched" in t.get_text() for t in ax.texts)
    assert any(p.get_height() > 0 for p in ax.patches)
    # Packet level keeps its queue plot.
    cp.queue(packet)


def test_queue_views_need_measured_queues(flow, packet):
    assert not tm.queues_measured(flow)
    assert tm.queues_measured(packet)
    with pytest.raises(ValueError, match="flow level"):
        tm.episodes(flow, "queue")
    assert isinstance(tm.episodes(packet, "queue"), pd.DataFrame)


def test_the_report_leaves_out_what_was_not_measured(flow, packet):
    page = rp.render([flow.out, packet.out])
    assert "links.csv has no queues at flow level" in page
    # A flow-level run alone: no queue or pause figure, its utilisation drawn.
    figures = dict((name, fig) for name, fig, _ in rp._plots([csigsim.read_run(flow.out)], ["flow"]))
    assert "queue" not in figures and "pauses" not in figures and "utilization" in figures
