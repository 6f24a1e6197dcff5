"""scripts/train_classifier.py: its usage on any machine, a short training run on the GPU."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "train_classifier.py"


def run(*args, **kwargs):
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": path}, **kwargs)


def test_usage_needs_no_gpu():
    done = run("--help")
    assert done.returncode == 0 and "--steps" in done.stdout


@pytest.mark.gpu
def test_a_short_run_lowers_the_loss_and_plots_it(tmp_path):
    png = tmp_path / "loss.png"
    done = run("--steps", "60", "--batch", "1024", "--plot", str(png), timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "step   59" in done.stdout and png.stat().st_size > 0
