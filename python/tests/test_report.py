"""Tests of csigsim.report: the HTML page holds the scenario, the summary,
every plot that applies and the comparison, needs nothing from the network,
and renders in a real headless browser (Chromium) without console messages.
The browser tests skip only when no Chromium can be found (`make tools`
installs Debian's `chromium` when it can)."""

import base64
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import csigsim
import csigsim.plot as cp
import csigsim.report as rp

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


BROWSER = _browser()
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (make tools installs it on Debian as root)")


def chromium(page: Path, *extra: str):
    """Loads ``page`` in headless Chromium with the network unreachable; returns (stdout, console lines)."""
    proc = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=10000", *extra, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=180,
    )
    console = [l for l in proc.stderr.splitlines() if ":CONSOLE" in l]
    return proc.stdout, console


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("runs")
    a = csigsim.run(SCENARIOS / "clos_incast_victim.toml", overrides={"signals.csig.type": "abw"}, out=base / "a")
    b = csigsim.run(SCENARIOS / "clos_incast_victim.toml",
                    overrides={"signals.csig.type": "abw", "transport.cc": "dctcp"}, out=base / "b")
    return a, b


@pytest.fixture(scope="module")
def report(two_runs, tmp_path_factory):
    a, b = two_runs
    cmp = [{"a": "a", "b": "b", "rows": [
        {"metric": "fct_p99_us", "a": 4000.0, "b": 1000.0, "ratio": 0.25},
        {"metric": "pauses_sent", "a": 5350, "b": 0, "ratio": 0.0},
    ]}]
    path = tmp_path_factory.mktemp("report") / "report.html"
    rp.write_report([a.out, b.out], path, comparisons=cmp, labels=["a", "b"])
    return path


_APPLICABLE = {}


def applicable_plots(run):
    key = str(run.out)
    if key in _APPLICABLE:
        return _APPLICABLE[key]
    names = _APPLICABLE[key] = []
    for name, fn in cp.PLOTS.items():
        try:
            fn(run)
        except cp.NothingToPlot:
            continue
        names.append(name)
    return names


def test_page_holds_scenario_summary_plots_and_comparison(report, two_runs):
    text = report.read_text(encoding="utf-8")
    a, b = two_runs
    assert text.startswith("<!DOCTYPE html>")
    # Every plot that applies to each run, embedded as a PNG data URI.
    imgs = re.findall(r'<img alt="([a-z_]+)" src="data:image/png;base64,([A-Za-z0-9+/=]+)"', text)
    expected = applicable_plots(cp.read_run(a.out)) + applicable_plots(cp.read_run(b.out))
    assert [n for n, _ in imgs] == expected
    assert {"abw_heatmap", "bottleneck_map", "abw_timeline"} <= set(expected)
    for _, data in imgs:
        assert base64.b64decode(data)[:8] == b"\x89PNG\r\n\x1a\n"
    # Nothing is loaded from anywhere, and nothing runs.
    assert not re.search(r'(src|href)="(?!data:|#)', text)
    assert "<script" not in text
    # Scenario text (escaped), summary values, comparison rows.
    assert "name = &quot;clos incast with victim&quot;" in text
    assert "cc = &quot;dctcp&quot;" in text
    assert f"<td class=\"l\">{a.summary['pauses_sent']}</td>" in text
    assert "<h2>Comparison</h2>" in text and "<td>0.25</td>" in text
    assert text.count("<h2>Run ") == 2
    assert "Bottleneck locations over the run" in text and "tor0-&gt;agg0" in text


def test_module_cli_writes_the_page(two_runs, tmp_path):
    a, _ = two_runs
    out = tmp_path / "r.html"
    proc = subprocess.run([sys.executable, "-m", "csigsim.report", str(a.out), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "<h2>Comparison</h2>" not in out.read_text(encoding="utf-8")
    bad = subprocess.run([sys.executable, "-m", "csigsim.report", str(tmp_path), "--out", str(out)],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no flows.csv" in bad.stderr


@needs_browser
def test_console_messages_are_caught(tmp_path):
    # The check below would see an error: a page that logs one is caught.
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("broken")</script></body></html>')
    _, console = chromium(page, "--dump-dom")
    assert any("broken" in l for l in console)


@needs_browser
def test_report_renders_in_a_headless_browser(report, two_runs, tmp_path):
    dom, console = chromium(report, "--dump-dom")
    assert console == []
    assert re.search(r"<h1>csigsim report: clos incast with victim", dom)
    for h in ("<h2>Comparison</h2>", "<h3>Summary</h3>", "<h3>Scenario</h3>", "<h3>Plots</h3>", "<h3>Telemetry</h3>"):
        assert h in dom
    n_img = dom.count("<img ")
    assert n_img == len(applicable_plots(cp.read_run(two_runs[0].out))) + len(applicable_plots(cp.read_run(two_runs[1].out)))

    # Every image decodes: a copy of the page that counts them after load.
    probe = tmp_path / "probe.html"
    script = ("<script>addEventListener('load', () => { const ok = [...document.images]"
              ".filter(i => i.complete && i.naturalWidth > 100 && i.naturalHeight > 100).length;"
              " document.body.setAttribute('data-decoded', ok); });</script></body>")
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", script), encoding="utf-8")
    dom2, console2 = chromium(probe, "--dump-dom")
    assert console2 == []
    assert f'data-decoded="{n_img}"' in dom2

    # A screenshot of the top of the page: not blank.
    shot = tmp_path / "report.png"
    chromium(report, f"--screenshot={shot}", "--window-size=1280,2400")
    import matplotlib.image as mpimg

    px = mpimg.imread(shot)
    assert px.shape[:2] == (2400, 1280)
    assert np.std(px[..., :3]) > 0.05


def _cli():
    import os

    env = os.environ.get("CSIGSIM_BIN")
    if env:
        return env
    root = Path(__file__).resolve().parents[2]
    for p in (root / "target" / "release" / "csigsim", root / "target" / "debug" / "csigsim"):
        if p.is_file():
            return str(p)
    return None


@pytest.mark.skipif(_cli() is None, reason="no csigsim binary built (cargo build -p csigsim-cli)")
def test_cli_report_shows_the_figures_of_compare(two_runs, tmp_path):
    import json

    a, b = (str(r.out) for r in two_runs)
    page = tmp_path / "cli.html"
    env = dict(__import__("os").environ, CSIGSIM_PYTHON=sys.executable)
    proc = subprocess.run([_cli(), "report", a, b, "--out", str(page)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    text = page.read_text(encoding="utf-8")
    cmp = json.loads(subprocess.run([_cli(), "compare", a, b, "--json"], capture_output=True, text=True, check=True).stdout)
    assert f"<h3>A: {a} &mdash; B: {b}</h3>" in text
    # Each figure's row holds compare's values (formatted as the report formats numbers).
    for metric in ("pauses_sent", "fct_p99_us", "sim_time_ns"):
        row = re.search(rf'<tr><td class="l">{metric}</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td></tr>', text)
        assert row, metric
        for cell, key in zip(row.groups(), ("a", "b", "ratio")):
            v = cmp[metric][key]
            assert cell == ("-" if v is None else rp._num(v)), (metric, key, cell, v)


@needs_browser
def test_parking_lot_report_renders_and_names_its_congested_queues(tmp_path):
    # The CSIG 3-flow scenario: the report's bottleneck map must name the two
    # queues docs/cc/nscc.md says are congested, and nothing else.
    run = csigsim.run(SCENARIOS / "nscc_parking_lot.toml", overrides={"stop": "1ms"}, out=tmp_path / "run")
    path = tmp_path / "report.html"
    rp.write_report([run.out], path)
    dom, console = chromium(path, "--dump-dom")
    assert console == []
    assert "<h3>Telemetry</h3>" in dom
    assert "tor0-&gt;agg0" in dom and "agg2-&gt;tor5" in dom
    named = set(re.findall(r"(?:tor|agg)\d+-&gt;(?:tor|agg)\d+", dom))
    assert named == {"tor0-&gt;agg0", "agg2-&gt;tor5"}, named
