"""scripts/sanitize.py's kernel filters against the real symbols of every instantiation (offline NVRTC, no GPU).

synccheck's two runs split the kernels by a regex on mangled names (clusters of 16 in one run, the rest in
the other); if a template changed its arguments the regex could silently pick nothing, and the run of the
clusters of 16 would check nothing and still print 0 errors.
"""
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cupysoftmax import loader
from cupysoftmax import variants as registry

pytest.importorskip("cupy", reason="the offline build uses CuPy's NVRTC bindings")

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"


def load(name):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


sanitize = load("sanitize")


def test_the_synccheck_filter_picks_exactly_the_cluster_of_16_kernels():
    regex = re.compile(sanitize.big_cluster_regex())
    clustered = {v.name: v for v in registry.VARIANTS.values() if v.cluster_template}
    picked = 0
    for report in loader.build("sm_90"):  # the cluster kernels exist from sm_90 on
        template = report.expression.partition("<")[0]
        big = template.startswith(tuple(v.cluster_template for v in clustered.values())) and \
            report.expression.endswith(f", {sanitize.BIG_CLUSTER}>")
        assert bool(regex.search(report.mangled)) == big, (report.expression, report.mangled)
        assert sanitize.is_big_cluster(report.expression) == big, report.expression
        picked += big
    # every clustered variant's kernels of 16 blocks, for each of its instantiations with C = 16
    expected = sum(1 for v in clustered.values() for pair, knobs, op in v.instantiations((9, 0))
                   if knobs[-1] == sanitize.BIG_CLUSTER)
    assert picked == expected > 0


def test_the_probe_kernel_passes_the_probes_filter():
    # run_probe adds "probe" to the filter: the probe's symbol must match it (and the plain filter must not)
    from cupy.cuda import nvrtc

    probe = load("synccheck_probe")
    expression = f"probe<{sanitize.BIG_CLUSTER}>"
    program = nvrtc.createProgram(probe.SOURCE, "probe", [], [])
    try:
        nvrtc.addNameExpression(program, expression)
        nvrtc.compileProgram(program, ["-arch=compute_90", "--std=c++17"])
        mangled = nvrtc.getLoweredName(program, expression)
    finally:
        nvrtc.destroyProgram(program)
    assert re.search(sanitize.big_cluster_regex(("probe",)), mangled)
    assert not re.search(sanitize.big_cluster_regex(), mangled)


@pytest.mark.parametrize("statuses, expected", [([0, 0], 0), ([0, -11, 1], -11), ([0, 1], 1), ([], 0)],
                         ids=["clean", "a_signal_first", "an_error", "no_shares"])
def test_a_share_that_died_is_not_read_as_clean(statuses, expected):
    assert sanitize.worst(statuses) == expected


def test_the_workload_refuses_a_shape_it_does_not_have():
    # --shape picks shapes by name (sanitize.py passes it on); a misspelt one must not run an empty set clean
    run = subprocess.run([sys.executable, str(SCRIPTS / "sanitize_workload.py"), "--shape", "n4194304_grid_of_65536_threads",
                          "no_such_shape"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 2 and "no such shape: no_such_shape" in run.stderr
