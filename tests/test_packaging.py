"""The wheel carries kernels/, and the README's variant table matches the registry."""
import subprocess
import sys
from importlib import metadata
import venv
from pathlib import Path

import pytest

from cupysoftmax import cli

ROOT = Path(__file__).resolve().parents[1]


def test_readme_variant_table_comes_from_the_registry():
    assert cli.variant_table() in (ROOT / "README.md").read_text()


def _cupy_extra() -> str:
    """The extra matching the CuPy wheel of this environment (cuda12 or cuda13)."""
    for extra, dist in (("cuda13", "cupy-cuda13x"), ("cuda12", "cupy-cuda12x")):
        try:
            metadata.version(dist)
            return extra
        except metadata.PackageNotFoundError:
            continue
    pytest.skip("no cupy-cuda12x / cupy-cuda13x wheel in this environment")


OFFLINE = ("NewConnectionError", "Failed to establish a new connection", "Temporary failure in name resolution",
           "Network is unreachable")


def test_wheel_installs_and_builds_from_another_directory(tmp_path):
    extra = _cupy_extra()
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist), str(ROOT)],
        check=True, capture_output=True, cwd=tmp_path,
    )
    (wheel,) = dist.glob("cupysoftmax-*.whl")
    names = subprocess.run([sys.executable, "-m", "zipfile", "-l", str(wheel)], capture_output=True, text=True).stdout
    assert "cupysoftmax/kernels/common.cuh" in names and "cupysoftmax/kernels/smem_cached.cu" in names

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    installed = subprocess.run([bin_dir / "python", "-m", "pip", "install", "-q", f"{wheel}[{extra}]"],
                               capture_output=True, text=True)
    if installed.returncode and any(marker in installed.stderr for marker in OFFLINE):
        pytest.skip("no package index reachable to install the wheel's dependencies")
    assert installed.returncode == 0, installed.stderr

    work = tmp_path / "elsewhere"
    work.mkdir()
    where = subprocess.run(
        [bin_dir / "python", "-c",
         "import cupysoftmax, cupysoftmax.loader as l; print(cupysoftmax.__file__); print(l.kernel_dir())"],
        check=True, capture_output=True, text=True, cwd=work,
    ).stdout.split()
    assert all(path.startswith(str(env_dir)) for path in where), where
    built = subprocess.run([bin_dir / "cupysoftmax", "build", "--arch", "sm_90"], capture_output=True, text=True, cwd=work)
    assert built.returncode == 0, built.stderr
    assert "softmax_smem_cached<float, float>" in built.stdout


def test_ci_runs_exactly_the_readme_commands():
    script = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [line for line in script if line and not line.startswith(("#", "set ", "cd "))]
    readme = (ROOT / "README.md").read_text().splitlines()
    assert commands == ['python3 -m venv .venv && . .venv/bin/activate', 'pip install -e ".[cuda13,test]"',
                        "python -m pytest"]
    for command in commands:
        assert command in readme, f"README does not give `{command}`"
