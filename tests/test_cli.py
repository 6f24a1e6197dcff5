"""The command line through click's CliRunner (no GPU needed for these)."""
import subprocess
import sys

import pytest
from click.testing import CliRunner

from cupysoftmax import cli, device
from cupysoftmax import variants as registry


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(device, "count", lambda: 0)


def run(*args):
    return CliRunner().invoke(cli.main, list(args))


def test_list_names_every_variant_with_its_idea():
    result = run("list")
    assert result.exit_code == 0
    for v in registry.VARIANTS.values():
        assert f"| `{v.name}` | {v.idea} | {v.reads} |" in result.output


@pytest.mark.parametrize("command", [["time", "8", "1000"], ["time", "8", "1000", "--variant", "all"], ["info"]])
def test_commands_that_need_a_gpu_say_so_in_one_line(no_gpu, command):
    result = run(*command)
    assert result.exit_code == 1
    assert result.output.strip() == "cupysoftmax: no CUDA device is visible"


def test_time_rejects_an_unknown_variant_before_looking_for_a_gpu(no_gpu):
    result = run("time", "8", "1000", "--variant", "block,fastest")
    assert result.exit_code == 2
    assert "unknown variant 'fastest'" in result.output


@pytest.mark.parametrize("args", [["time", "0", "10"], ["time", "8", "10", "--dtype", "int32"]])
def test_time_rejects_bad_shapes_and_dtypes(args):
    assert run(*args).exit_code == 2


def test_variant_option_expands_all_and_commas():
    assert cli._variants(("auto,block", "all")) == ["auto", "block", *[n for n in registry.VARIANTS if n != "block"]]


def test_build_reports_every_kernel_for_sm90():
    pytest.importorskip("cupy")
    result = run("build", "--arch", "sm_90")
    assert result.exit_code == 0, result.output
    body = result.output.splitlines()[1:]
    expected = sum(len(v.instantiations((9, 0))) for v in registry.VARIANTS.values())
    assert len(body) == expected
    assert all(line.startswith("sm_90 ") and "SPILL" not in line for line in body)


def test_build_fails_on_an_unknown_arch():
    pytest.importorskip("cupy")
    result = run("build", "--arch", "sm_1")
    assert result.exit_code == 1
    assert "compile error" in result.output


def test_python_dash_m_runs_the_cli():
    done = subprocess.run([sys.executable, "-m", "cupysoftmax", "list"], capture_output=True, text=True, check=True)
    assert "`smem_cached`" in done.stdout
