"""Tests of csigsim.report: the interactive page holds the runs' differing
scenario keys, the figures of compare, overlaid plots and the telemetry
tables, needs nothing from the network, and works in a real headless
browser (Chromium): no console message, three overlaid series, a hover
tooltip with a value. The browser tests skip only when no Chromium can be
found (`make tools` installs Debian's `chromium` when it can)."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from binaries import csigsim_cli

import csigsim
import csigsim.report as rp

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"
CCS = ("dcqcn", "dctcp", "timely")


def _browser():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


BROWSER = _browser()
needs_browser = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (make tools installs it on Debian as root)")


def chromium(page: Path, *extra: str):
    """Loads ``page`` in headless Chromium with the network unreachable; returns (DOM or stdout, console lines)."""
    proc = subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=15000", *extra, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=240,
    )
    console = [l for l in proc.stderr.splitlines() if ":CONSOLE" in l]
    return proc.stdout, console


_cli = csigsim_cli


@pytest.fixture(scope="module")
def three_runs(tmp_path_factory):
    """The CLOS incast with a victim under three congestion controls, in directories named after them."""
    base = tmp_path_factory.mktemp("runs")
    runs = []
    for cc in CCS:
        runs.append(csigsim.run(SCENARIOS / "clos_incast_victim.toml",
                                overrides={"signals.csig.type": "abw", "transport.cc": cc}, out=base / cc))
    return runs


@pytest.fixture(scope="module")
def comparison(three_runs):
    """The figures of csigsim compare, from the CLI when it is built, else a stand-in of the same shape."""
    cli = _cli()
    dirs = [str(r.out) for r in three_runs]
    if cli is not None:
        out = subprocess.run([cli, "compare", *dirs, "--json"], capture_output=True, text=True, check=True).stdout
        per = json.loads(out)
        rows = [{"metric": k, **{f: v[f] for f in ("values", "ratios", "verdicts", "better")}} for k, v in per.items()]
    else:
        vals = [r.summary["fct_p99_ns"] / 1e3 for r in three_runs]
        rows = [{"metric": "fct_p99_us", "values": vals, "ratios": [None] + [v / vals[0] for v in vals[1:]],
                 "verdicts": [None] + ["better" if v < vals[0] else "worse" for v in vals[1:]], "better": "lower"}]
    return {"runs": dirs, "rows": rows}


@pytest.fixture(scope="module")
def report(three_runs, comparison, tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "report.html"
    rp.write_report([r.out for r in three_runs], path, comparisons=comparison)
    return path


def test_numbers_have_si_prefixes_units_and_four_digits():
    assert rp.fmt_si(0.002312974, "s") == "2.313 ms"
    assert rp.fmt_si(2.717e10, "b/s") == "27.17 Gb/s"
    assert rp.fmt_si(20646300, "") == "20.65 M"
    assert rp.fmt_si(5350, "") == "5350"
    assert rp.fmt_si(4100, "B") == "4.1 KB"
    assert rp.fmt_si(999.96e-6, "s") == "1 ms"
    assert rp.fmt_si(None, "s") == "-" and rp.fmt_si(float("nan"), "s") == "-"


def test_runs_are_named_by_their_directories(three_runs):
    assert rp.run_labels([r.out for r in three_runs]) == list(CCS)
    assert rp.run_labels(["x/a", "y/a", "b"]) == ["x/a", "y/a", "b"]


def test_key_differences_name_the_changed_keys(three_runs):
    diffs = dict(rp.key_differences(three_runs))
    assert diffs == {"transport.cc": list(CCS)}


def test_page_is_self_contained_and_holds_the_comparison(report, three_runs, comparison):
    text = report.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    # Every run named in the title by its directory, not the scenario name three times.
    title = re.search(r"<h1>(.*)</h1>", text).group(1)
    assert all(cc in title for cc in CCS) and title.count("clos incast with victim") == 1
    # Nothing from the network: no script or link loaded from anywhere, and
    # no src or href in the page but in-page ones (plotly.js is inline).
    assert not re.search(r"<script[^>]*\bsrc=", text) and "<link" not in text
    markup = re.sub(r"<script>.*?</script>", "", text, flags=re.S)
    assert not re.search(r'(src|href)="(?!#)', markup) and "https://" not in markup
    # The key-difference table, with each run's value.
    table = re.search(r'<table class="differences">.*?</table>', text, re.S).group(0)
    assert "transport.cc" in table and all(f"&quot;{cc}&quot;" in table for cc in CCS)
    # The figures, readable: no six-digit floats, no docstring markup.
    figs = re.search(r'<table class="figures">.*?</table>', text, re.S).group(0)
    assert "fct_p99_us" in figs and re.search(r"\d+(\.\d+)? [mµ]s", figs)
    assert not re.search(r"\d\.\d{5,}", figs)
    assert "``" not in markup and ":func:" not in markup
    # Telemetry: a list of flows is cut short, not dumped whole into a cell.
    assert not re.search(r"<td[^>]*>(\d+, ){20,}", text)


def test_module_cli_writes_the_page_with_labels(three_runs, tmp_path):
    out = tmp_path / "r.html"
    dirs = [str(r.out) for r in three_runs]
    proc = subprocess.run([sys.executable, "-m", "csigsim.report", *dirs, "--out", str(out), "--label", "A1", "--label", "B2",
                           "--label", "C3"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    text = out.read_text(encoding="utf-8")
    assert "csigsim report: A1, B2, C3" in text and 'class="figures"' not in text
    bad = subprocess.run([sys.executable, "-m", "csigsim.report", str(tmp_path), "--out", str(out)], capture_output=True, text=True)
    assert bad.returncode == 2 and "no flows.csv" in bad.stderr
    wrong = subprocess.run([sys.executable, "-m", "csigsim.report", *dirs, "--out", str(out), "--label", "x"], capture_output=True, text=True)
    assert wrong.returncode == 2 and "--label" in wrong.stderr


@needs_browser
def test_console_messages_are_caught(tmp_path):
    # The check below would see an error: a page that logs one is caught.
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("broken")</script></body></html>')
    _, console = chromium(page, "--dump-dom")
    assert any("broken" in l for l in console)


#: Appended to a copy of the report: after load, hovers the first point of
#: the FCT CDF's second run through plotly's API, and writes into the body
#: what the page shows: the plots drawn, the CDF's series, and the text of
#: the hover label.
_PROBE = """<script>
addEventListener('load', () => setTimeout(() => {
  const gd = document.getElementById('fig-fct_cdf');
  const b = document.body;
  b.setAttribute('data-plots', document.querySelectorAll('.js-plotly-plot .main-svg').length > 0 ? document.querySelectorAll('.js-plotly-plot').length : 0);
  b.setAttribute('data-series', gd.data.length);
  b.setAttribute('data-drawn-lines', gd.querySelectorAll('.scatterlayer .trace').length);
  b.setAttribute('data-names', gd.data.map(t => t.name).join('|'));
  Plotly.Fx.hover(gd, [{curveNumber: 1, pointNumber: 0}]);
  setTimeout(() => {
    const labels = [...gd.querySelectorAll('.hoverlayer .hovertext')].map(e => e.textContent);
    b.setAttribute('data-hover', labels.join('|'));
  }, 200);
}, 300));
</script></body>"""


@needs_browser
def test_three_run_report_works_in_a_headless_browser(report, three_runs, tmp_path):
    dom, console = chromium(report, "--dump-dom")
    assert console == [], console
    assert "transport.cc" in dom
    probe = tmp_path / "probe.html"
    probe.write_text(report.read_text(encoding="utf-8").replace("</body>", _PROBE), encoding="utf-8")
    dom, console = chromium(probe, "--dump-dom")
    assert console == [], console
    body = re.search(r"<body([^>]*)>", dom).group(1)
    attrs = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', body))
    # Every figure of the page drawn, and the FCT CDF with one line per run.
    assert int(attrs["plots"]) == report.read_text(encoding="utf-8").count("data-figure=") >= 4
    assert attrs["series"] == "3" and attrs["drawn-lines"] == "3"
    assert [n.split(" (")[0] for n in attrs["names"].split("|")] == list(CCS)
    # The tooltip of the second run's fastest flow: its FCT with the unit, and the run.
    flows = three_runs[1].flows
    fastest_us = float(np.nanmin(flows.fct_ns)) / 1e3
    hover = attrs["hover"]
    m = re.search(r"FCT ([0-9.]+) (us|ms)", hover)
    assert m, hover
    shown = float(m.group(1)) * (1e3 if m.group(2) == "ms" else 1.0)
    assert abs(shown - fastest_us) <= 1e-3 * fastest_us, (hover, fastest_us)
    assert CCS[1] in hover


@pytest.mark.skipif(_cli() is None, reason="no csigsim binary built (cargo build -p csigsim-cli)")
def test_cli_report_shows_the_figures_of_compare(three_runs, tmp_path):
    dirs = [str(r.out) for r in three_runs]
    page = tmp_path / "cli.html"
    env = dict(os.environ, CSIGSIM_PYTHON=sys.executable)
    proc = subprocess.run([_cli(), "report", *dirs, "--out", str(page)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    text = page.read_text(encoding="utf-8")
    cmp = json.loads(subprocess.run([_cli(), "compare", *dirs, "--json"], capture_output=True, text=True, check=True).stdout)
    figs = re.search(r'<table class="figures">.*?</table>', text, re.S).group(0)
    # pauses_sent's row: each run's value as compare gives it, and the verdicts.
    row = re.search(r"<tr><td class=\"l\">[^<]*<code>pauses_sent</code></td>(.*?)</tr>", figs).group(1)
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row)
    values = cmp["pauses_sent"]["values"]
    assert cells[1:4] == [rp.fmt_si(v) for v in values]
    for i in (1, 2):
        verdict = cmp["pauses_sent"]["verdicts"][i]
        if verdict in ("better", "worse"):
            assert verdict in cells[3 + i]
