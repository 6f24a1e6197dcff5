"""The fuzz cases on the CPU: each path's shapes reach that path in the planner (fakes.H100), drawn cases build
as they say, and the reference keeps its semantics on their values (test_gpu_fuzz runs them on the GPU)."""
import numpy
import pytest
from hypothesis import HealthCheck, given, settings

import fuzz_cases
from cupysoftmax import reference
from cupysoftmax import variants as registry
from cupysoftmax.planner import Planner
from fakes import H100
from test_planner import fake_facts


def _row_lengths(fewest, most, dtype):
    """The shortest row spanning `fewest` chunks and the longest spanning `most`."""
    per_chunk = 16 // dtype.itemsize
    return [(fewest - 1) * per_chunk + 1, most * per_chunk]


@pytest.mark.parametrize("aligned", [True, False], ids=["aligned", "misaligned"])
@pytest.mark.parametrize("dtype", fuzz_cases.DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("path", fuzz_cases.ROW_PATHS)
def test_row_paths_reach_their_launch(path, dtype, aligned):
    fewest, most, rows = fuzz_cases.ROW_PATHS[path]
    for n in _row_lengths(fewest, most, dtype):
        for m in (1, rows):
            launch = Planner(H100).pick(m, n, (dtype, dtype), fake_facts, aligned)
            lanes, cluster = launch.knobs[0], launch.knobs[-1]  # warp_rows (G, K, O); split_row (K, R, C)
            # float32 rows of N % V != 0 and float64 rows take warp_rows' element-strided kernels (O = -2) on layouts
            # of their own (planner.ELEMENT_STRIDED_LAYOUTS, tests/test_planner.py), whatever the path's lanes
            strided = launch.variant == "warp_rows" and launch.knobs[-1] == -2
            reached = {"warp_rows_sub_warp": launch.variant == "warp_rows" and (lanes < 32 or strided),
                       "warp_rows_full_warp": launch.variant == "warp_rows" and (lanes == 32 or strided),
                       # float32 and float64 softmax without options hold rows to 256 chunks in a warp
                       # (AUTO_FIRST_PLAIN_WIDE; the path's gradients and calls with where= keep split_row)
                       "split_row_block": launch.variant == "split_row" and cluster == 1
                       or launch.variant == "warp_rows" and dtype.itemsize >= 4 and n <= 256 * 16 // dtype.itemsize,
                       "split_row_cluster": launch.variant == "split_row" and cluster > 1,
                       "past_a_cluster": launch.variant == "split_row" and cluster <= 0 if dtype.itemsize < 8
                       else launch.variant == "two_pass"}
            assert reached[path], (m, n, launch)


@pytest.mark.parametrize("dtype", fuzz_cases.DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("path", fuzz_cases.COLUMN_PATHS)
def test_column_paths_reach_their_launch(path, dtype):
    fewest, most, outer, inner = fuzz_cases.COLUMN_PATHS[path]
    for n in (fewest, most):
        for aligned in (True, False):
            launch = Planner(H100).plan_columns("auto", outer, n, inner, (dtype, dtype), fake_facts, aligned=aligned)
            if path == "strided_cluster" and aligned:
                assert launch.variant == "strided_smem" and launch.knobs[0] > 1, (n, launch)
            else:
                assert launch.variant == "strided" and (launch.knobs[1] > 1) == (path == "strided_cluster"), (n, launch)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=fuzz_cases.cases())
def test_drawn_cases_build_and_the_reference_keeps_its_semantics(case):
    host = fuzz_cases.host_arrays(case)
    assert host.x.shape == case.shape and host.x.dtype == case.dtype and host.dy.shape == case.shape
    if case.op not in registry.FORWARD:
        return  # the gradients' reference takes the forward's output, computed on the GPU
    where = host.where
    got = reference.REFERENCES[case.op](host.x, case.axis, scale=case.scale, where=where)
    axes = fuzz_cases.axes_of(case)
    trailing = tuple(range(len(case.shape) - len(axes), len(case.shape)))
    rows = numpy.moveaxis(got, axes, trailing).reshape(len(host.row_kinds), -1)
    masked = -numpy.inf if case.op == registry.LOG_SOFTMAX else 0.0
    if where is None:
        for kind, row in zip(host.row_kinds, rows):
            if kind in fuzz_cases.SPOILING:
                assert numpy.isnan(row).all(), kind
            else:
                assert not numpy.isnan(row).any(), kind
                if case.op == registry.SOFTMAX:
                    assert abs(row.sum() - 1) < 1e-9, kind
        return
    keep = numpy.moveaxis(numpy.broadcast_to(where, case.shape), axes, trailing).reshape(rows.shape)
    assert (rows[~keep] == masked).all()
    if case.mask in ("full", "misaligned"):
        assert not keep[0].any() and (rows[0] == masked).all()  # the row masked out everywhere
