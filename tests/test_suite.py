"""The peer benchmark suite's pure parts (no GPU): the suite file, the table, the cliffs, the plot, the CLI."""
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from click.testing import CliRunner

from cupysoftmax import bench, cli, device, suite

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "scripts" / "suite.json"


def rec(m, n, dtype, provider, ms, ok=True, note=""):
    """A hand-made record as run_suite makes them (GB/s from the time)."""
    return suite._record({"M": m, "N": n, "dtype": dtype}, provider, ms, ok, note)


def test_load_shapes_reads_the_shipped_suite():
    shapes = suite.load_shapes(SUITE)
    assert len(shapes) == 39
    assert shapes[0] == {"tag": "sweep", "M": 4096, "N": 256, "dtype": "float32"}
    assert {"tag": "llm.c", "M": 8192, "N": 50257, "dtype": "bfloat16"} in shapes
    assert {s["dtype"] for s in shapes} == {"float32", "bfloat16", "float16"}
    assert {s["tag"] for s in shapes} == {"sweep", "llm.c", "vocab", "tinyN", "hugeN"}


@pytest.mark.parametrize("shape, message", [
    ({"M": 8, "dtype": "float32"}, "needs M, N and dtype"),
    ({"M": 0, "N": 8, "dtype": "float32"}, "M = 0"),
    ({"M": 8, "N": 2.5, "dtype": "float32"}, "N = 2.5"),
    ({"M": 8, "N": 8, "dtype": "int32"}, "integer dtype"),
])
def test_load_shapes_rejects_a_malformed_shape(tmp_path, shape, message):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps({"shapes": [{"M": 1, "N": 1, "dtype": "float16"}, shape]}))
    with pytest.raises(ValueError, match=f"shape 1.*{message}"):
        suite.load_shapes(path)


def test_load_shapes_rejects_a_file_without_shapes(tmp_path):
    path = tmp_path / "suite.json"
    path.write_text(json.dumps([{"M": 1, "N": 1, "dtype": "float32"}]))
    with pytest.raises(ValueError, match="shapes"):
        suite.load_shapes(path)


def test_provider_names_keep_the_order_given_and_reject_unknown_ones():
    assert suite.provider_names(None) == list(suite.PROVIDERS)
    assert suite.provider_names("torch, cupysoftmax") == ["torch", "cupysoftmax"]
    with pytest.raises(ValueError, match="unknown provider 'tvm'"):
        suite.provider_names("torch,tvm")


def test_cupyx_log_softmax_is_timed_through_the_host_because_it_waits_on_the_device():
    # cupyx's log_softmax assigns through a boolean mask: queued behind the gate it would never return
    x = numpy.ones((2, 3), numpy.float32)
    assert suite.make_cupyx(x, "log_softmax").syncs_host
    assert not getattr(suite.make_cupyx(x, "softmax"), "syncs_host", False)


def test_record_counts_read_and_write_bytes():
    r = rec(4096, 1024, "bfloat16", "torch", 0.01)
    assert r["GBps"] == pytest.approx(2 * 4096 * 1024 * 2 / 0.01e-3 / 1e9)
    assert r["op"] == "forward" and rec(1, 8, "float32", "torch", None, ok=None)["GBps"] is None


def test_gradient_records_count_y_dy_and_dx_bytes():
    r = suite._record({"M": 4096, "N": 1024, "dtype": "bfloat16"}, "torch", 0.01, True, op="backward")
    assert r["GBps"] == pytest.approx(3 * 4096 * 1024 * 2 / 0.01e-3 / 1e9) and r["op"] == "backward"


@pytest.mark.parametrize("provider", ["triton", "cupyx", "jax"])
def test_providers_without_a_softmax_gradient_say_so(provider):
    pytest.importorskip("cupy")
    y = numpy.ones((2, 3), numpy.float32)
    with pytest.raises(suite.Unsupported):
        suite.PROVIDERS[provider](suite.Gradient(y, y, y), "softmax_backward")


def hand_made_records():
    # shape 1: ours 2x faster than torch; shape 2: 8x; shape 3: torch did not run
    return [
        rec(4096, 1024, "float32", "copy", 0.016),
        rec(4096, 1024, "float32", "cupysoftmax", 0.020),
        rec(4096, 1024, "float32", "torch", 0.040),
        rec(4096, 1024, "float32", "triton", 0.025),
        rec(4096, 65536, "bfloat16", "copy", 0.400),
        rec(4096, 65536, "bfloat16", "cupysoftmax", 0.500),
        rec(4096, 65536, "bfloat16", "torch", 4.000),
        rec(4096, 65536, "bfloat16", "triton", None, ok=None, note="skipped: the row is held in registers"),
        rec(1, 32000, "float32", "copy", 0.005),
        rec(1, 32000, "float32", "cupysoftmax", 0.010),
        rec(1, 32000, "float32", "torch", None, ok=False, note="check failed: max error 3 x tolerance"),
        rec(1, 32000, "float32", "triton", None, ok=False, note="setup failed: RuntimeError: boom"),
    ]


def test_markdown_table_has_one_row_per_shape_and_the_geometric_mean():
    lines = suite.markdown_table(hand_made_records()).splitlines()
    assert lines[0] == "| M | N | dtype | copy | cupysoftmax | torch | triton | cupysoftmax % of copy | × torch |"
    assert lines[2] == "| 4096 | 1024 | float32 | 2097 | 1678 | 839 | 1342 | 80% | 2.00 |"
    assert lines[3] == "| 4096 | 65536 | bfloat16 | 2684 | 2147 | 268 | – | 80% | 8.00 |"
    assert lines[4] == "| 1 | 32000 | float32 | 51 | 26 | fail | error | 50% | – |"
    assert len(lines) == 7 and lines[5] == ""
    assert lines[6] == "Geometric-mean speed-up over torch.softmax: 4.00× over 2 shapes."


def test_markdown_table_says_when_torch_never_ran():
    records = [r for r in hand_made_records() if r["provider"] != "torch"]
    table = suite.markdown_table(records)
    assert "| torch |" not in table
    assert table.endswith("no shape where both ran.")


def test_op_names_default_to_forward_and_reject_unknown_ones():
    assert suite.op_names(None) == ["forward"]
    assert suite.op_names("log_softmax, forward") == ["log_softmax", "forward"]
    assert suite.op_names("forward,backward") == ["forward", "backward"]
    with pytest.raises(ValueError, match="unknown op 'grad'; choose from: forward, log_softmax, backward, "
                                         "log_softmax_backward, axis"):
        suite.op_names("forward,grad")


def test_each_op_gets_its_own_table_and_geometric_mean():
    records = hand_made_records()
    records += [{**r, "op": "log_softmax", "median_ms": r["median_ms"] and r["median_ms"] * 2,
                 "GBps": r["GBps"] and r["GBps"] / 2} for r in hand_made_records()[:4]]
    forward = suite.markdown_table(records).splitlines()
    assert len(forward) == 7 and forward[6].endswith("4.00× over 2 shapes.")  # log records stay out
    log = suite.markdown_table(records, "log_softmax").splitlines()
    assert log[2] == "| 4096 | 1024 | float32 | 1049 | 839 | 419 | 671 | 80% | 2.00 |"
    assert log[-1] == "Geometric-mean speed-up over torch.log_softmax: 2.00× over 1 shapes."
    assert len(suite.summary(records, "log_softmax").splitlines()) == 2


def test_report_has_a_section_per_op_softmax_first():
    pytest.importorskip("cupy")  # the header names CuPy's version
    records = hand_made_records()
    records += [{**r, "op": "log_softmax"} for r in hand_made_records()[:4]]
    host = {"softmax_us": 15.0, "raw_kernel_us": 6.0, "ratio": 2.5, "alloc_and_bare_launch_us": 13.0, "rounds": 5,
            "repeat": 2000}
    text = suite.report(records, None, host, "NVIDIA H100 80GB HBM3", 50)
    assert text.startswith("# softmax and log_softmax against the peers on NVIDIA H100 80GB HBM3")
    assert text.index("over torch.softmax") < text.index("## log_softmax") < text.index("over torch.log_softmax")
    alone = suite.report([r for r in records if r["op"] == "log_softmax"], None, host, "GPU", 50)
    assert "## softmax" not in alone and "over torch.softmax" not in alone  # no empty softmax table


def test_time_records_name_ops_as_the_suite_does():
    assert bench.as_records(4, 8, "float32", 1.0, [])[0]["op"] == "forward"
    assert bench.as_records(4, 8, "float32", 1.0, [], "log_softmax")[0]["op"] == "log_softmax"
    gradient = bench.as_records(4, 8, "float32", 1.0, [], "softmax_backward")[0]
    assert gradient["op"] == "backward" and gradient["GBps"] == pytest.approx(3 * 4 * 8 * 4 / 1.0e3)
    assert bench.as_records(4, 8, "float32", 1.0, [], "log_softmax_backward")[0]["op"] == "log_softmax_backward"


def test_summary_names_the_best_peer_that_ran():
    lines = suite.summary(hand_made_records()).splitlines()
    assert len(lines) == 4
    assert "triton 1342" in lines[1] and lines[1].rstrip().endswith("2.00")
    assert "torch 268" in lines[2]
    assert lines[3].split()[-2:] == ["-", "-"]


def sweep_records(gbps):
    out = []
    for i, g in enumerate(gbps):
        n = 256 + 128 * i
        out += [rec(4096, n, "float32", "copy", 1.0), rec(4096, n, "float32", "cupysoftmax", 1.0)]
        out[-1]["GBps"] = g
    return out


def test_cliffs_are_points_more_than_15_percent_below_the_better_neighbour():
    records = sweep_records([100, 100, 80, 100, 86, 100, 84, 70, 100, 50])
    records.reverse()  # order must not matter
    # 80, 84 and 70 are each more than 15% below a neighbour of 100; 86 is not;
    # the last point (50) has one neighbour only
    assert suite.cliffs(records) == [512, 1024, 1152]


def test_cliffs_ignore_other_providers_and_failed_points():
    records = sweep_records([100, 60, 100])
    records[3]["GBps"] = None  # cupysoftmax at N = 384 failed: no point, so no cliff
    records += [rec(4096, 384, "float32", "torch", 1.0)]
    records[-1]["GBps"] = 1.0
    assert suite.cliffs(records) == []


def test_device_tag_names_the_gpu_for_file_names():
    assert suite.device_tag("NVIDIA H100 80GB HBM3") == "h100"
    assert suite.device_tag("NVIDIA H200") == "h200"
    assert suite.device_tag("NVIDIA GeForce RTX 4090") == "gpu"


def test_plot_writes_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    records = [rec(4096, n, dtype, p, ms * n / 1024) for n in (256, 1024, 4096) for dtype in ("float32", "bfloat16")
               for p, ms in (("copy", 0.01), ("cupysoftmax", 0.012), ("torch", 0.02))]
    path = tmp_path / "suite.png"
    suite.plot(records, sweep_records([1000, 1200, 900]), path)
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(device, "count", lambda: 0)


def test_cli_bench_without_a_gpu_says_so_in_one_line(no_gpu):
    result = CliRunner().invoke(cli.main, ["bench", "--suite", str(SUITE), "--no-sweep"])
    assert result.exit_code == 1
    assert result.output.strip() == "cupysoftmax: no CUDA device is visible"


@pytest.mark.parametrize("args, hint", [(["--providers", "cupysoftmax,tvm"], "unknown provider 'tvm'"),
                                        (["--suite", "no/such/suite.json"], "No such file")])
def test_cli_bench_rejects_bad_arguments_before_looking_for_a_gpu(no_gpu, args, hint):
    result = CliRunner().invoke(cli.main, ["bench", "--suite", str(SUITE), *args])
    assert result.exit_code == 2
    assert hint in result.output


def test_the_script_runs_from_a_checkout_without_an_install(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "bench_suite.py"), "--providers", "tvm"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 2
    assert "unknown provider 'tvm'" in done.stderr


def test_axis_records_carry_the_array_and_its_axis():
    shapes = suite.axis_shapes()
    assert [(s["M"], s["N"], s["axis"]) for s in shapes] == [(32 * 512 * 512, 19, 1), (8192, 8192, 0)]
    r = suite._record(shapes[0], "cupysoftmax", 1.0, True, op="axis")
    assert r["op"] == "axis" and r["shape"] == [32, 19, 512, 512] and r["axis"] == 1
    assert r["GBps"] == pytest.approx(2 * 32 * 19 * 512 * 512 * 4 / 1e-3 / 1e9)  # read x, write y
    assert "axis" not in rec(4, 8, "float32", "torch", 1.0)


@pytest.mark.parametrize("provider", ["triton", "liger"])
def test_last_axis_peers_refuse_a_middle_axis(provider):
    over = suite.Over(numpy.ones((2, 3, 4), numpy.float32), 1, 0)
    with pytest.raises(suite.Unsupported, match="last axis only"):  # said before looking for torch
        suite.PROVIDERS[provider](over, "softmax")


def test_axis_report_has_its_own_section_naming_the_arrays():
    pytest.importorskip("cupy")  # the header names CuPy's version
    shapes = suite.axis_shapes()
    records = [suite._record(s, p, ms, True, op="axis") for s in shapes for p, ms in (("copy", 1.0), ("cupysoftmax", 1.25))]
    host = {"softmax_us": 15.0, "raw_kernel_us": 6.0, "ratio": 2.5, "alloc_and_bare_launch_us": 13.0, "rounds": 5,
            "repeat": 2000}
    text = suite.report(records, None, host, "GPU", 50)
    assert text.startswith("# softmax over a middle axis against the peers")
    assert "32 × 19 × 512 × 512 float32 over axis 1; 8192 × 8192 float32 over axis 0" in text
    assert "| 8388608 | 19 | float32 |" in text and "| 80% |" in text
