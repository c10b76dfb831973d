"""The Parquet twins of `csigsim run --parquet` read back (read_run(...,
format="parquet")) as the same frames as the CSV files: same columns,
dtypes and values, the CSV's rounded columns within their rounding."""

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from binaries import csigsim_cli

import csigsim.plot as cp

ROOT = Path(__file__).resolve().parents[2]
pytest.importorskip("pyarrow")


_cli = csigsim_cli


CLI = _cli()
pytestmark = pytest.mark.skipif(CLI is None, reason="no csigsim binary built (cargo build -p csigsim-cli)")

ROUNDED = {"slowdown": 0.5e-4, "utilization": 0.5e-6, "algbw_gbps": 0.5e-3, "busbw_gbps": 0.5e-3}


def run(tmp_path, scenario, *sets):
    out = tmp_path / Path(scenario).stem
    args = [CLI, "run", str(ROOT / "scenarios" / scenario), "--out", str(out), "--quiet", "--parquet"]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True)
    return out


@pytest.mark.parametrize("scenario, sets, tables", [
    ("chain_csig_delay.toml", ["monitor.cc=true", 'transport.cc="dctcp"'], ["flows", "links", "signals", "cc"]),
    ("ring_allreduce.toml", ['workload.0.size="2MB"'], ["flows", "links", "collectives"]),
    ("rpc_bursty_background.toml", ['stop="2ms"'], ["flows", "links", "signals", "rpcs"]),
])
def test_parquet_reads_back_as_the_csv(tmp_path, scenario, sets, tables):
    d = run(tmp_path, scenario, *sets)
    csv, pq = cp.read_run(d), cp.read_run(d, format="parquet")
    for name in ("flows", "links", "signals", "cc", "collectives", "rpcs"):
        a, b = getattr(csv, name), getattr(pq, name)
        if name not in tables:
            assert len(a.columns) == 0 and len(b.columns) == 0, name
            continue
        assert len(a) > 0, name
        assert list(a.columns) == list(b.columns), name
        assert list(a.dtypes.astype(str)) == list(b.dtypes.astype(str)), name
        for c in a.columns:
            if c in ROUNDED:
                x, y = a[c].to_numpy(float), b[c].to_numpy(float)
                assert np.array_equal(np.isnan(x), np.isnan(y)), (name, c)
                assert np.all(np.abs(x - y)[~np.isnan(x)] <= ROUNDED[c] * (1 + 1e-9)), (name, c)
            else:
                pd.testing.assert_series_equal(a[c], b[c], obj=f"{name}.{c}")


def test_read_run_says_which_file_is_missing(tmp_path):
    d = run(tmp_path, "two_hosts.toml")
    (d / "flows.parquet").unlink()
    with pytest.raises(FileNotFoundError, match="flows.parquet"):
        cp.read_run(d, format="parquet")
    with pytest.raises(ValueError, match="format"):
        cp.read_run(d, format="json")


def test_parquet_and_csv_have_the_same_names_and_times_in_ns(tmp_path):
    # Read with pyarrow directly, not through read_run: the files themselves agree.
    import pyarrow.parquet as pq

    d = run(tmp_path, "ring_allreduce.toml", 'workload.0.size="2MB"')
    for name in ("flows", "links", "collectives"):
        header = (d / f"{name}.csv").read_text().splitlines()[0].split(",")
        table = pq.read_table(d / f"{name}.parquet")
        assert table.column_names == header, name
        csv = pd.read_csv(d / f"{name}.csv")
        for c in (c for c in header if c.endswith("_ns")):
            assert str(table.schema.field(c).type) == "double", (name, c)
            np.testing.assert_array_equal(table.column(c).to_numpy(zero_copy_only=False).astype(float), csv[c].to_numpy(float))
