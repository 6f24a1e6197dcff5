"""Offline NVRTC build of every kernel instantiation (no GPU needed) and the source inlining."""
import re
import shutil

import pytest

from cupysoftmax import loader
from cupysoftmax import variants as registry

pytest.importorskip("cupy", reason="the offline build uses CuPy's NVRTC bindings")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_every_instantiation_compiles_without_spills(arch):
    reports = loader.build(arch)
    cc = loader.compute_capability(arch)
    expected = {v.name_expression(*i) for v in registry.VARIANTS.values() for i in v.instantiations(cc)}
    assert {r.expression for r in reports} == expected
    for r in reports:
        assert r.arch == arch
        assert 0 < r.registers <= 255, r
        assert (r.spill_stores, r.spill_loads, r.stack_bytes) == (0, 0, 0), r


def test_cluster_kernels_are_built_only_where_clusters_exist():
    # and split_row's folds (R = 4, and R = -4 the plain fold), which serve only rows that clusters may also take
    names = {r.expression for r in loader.build("sm_80")}
    assert {"softmax_split_row<float, float, false, 8, 1>", "softmax_split_row<float, float, false, 8, 0>"} <= names
    folds = (", 8, 4>", ", 8, -4>")
    assert not any("cluster" in name or (name.startswith("softmax_split_row<") and name.endswith(folds))
                   for name in names)
    sm90 = {r.expression for r in loader.build("sm_90")}
    assert {"softmax_split_row_cluster<float, float, false, 8, 1, 16>", "softmax_split_row<float, float, false, 8, 4>",
            "softmax_split_row<float, float, false, 8, -4>"} <= sm90


def test_split_row_builds_for_gpus_before_sm80():
    # cp.async exists from sm_80 on; below it the shared-memory part is copied by hand
    lowered, log = loader._nvrtc_compile(loader.source("split_row"), "split_row.cu",
                                         ["softmax_split_row<float, float, false, 8, 1>"], "sm_75")
    assert lowered["softmax_split_row<float, float, false, 8, 1>"]


def ptx_of(variant: str, expressions) -> tuple[str, dict]:
    """(the PTX, {expression: lowered name}) of `variant`'s kernels, compiled for compute_90."""
    from cupy.cuda import nvrtc

    program = nvrtc.createProgram(loader.source(variant), f"{variant}.cu", [], [])
    try:
        for expression in expressions:
            nvrtc.addNameExpression(program, expression)
        nvrtc.compileProgram(program, ["-arch=compute_90", f"-I{loader.include_dir()}", *loader.OPTIONS,
                                       *loader.CUPY_OPTIONS])
        lowered = {e: nvrtc.getLoweredName(program, e) for e in expressions}
        ptx = nvrtc.getPTX(program)
    finally:
        nvrtc.destroyProgram(program)
    return (ptx.decode() if isinstance(ptx, bytes) else ptx), lowered


def thread_bounds(variant: str, expressions, directive: str = r"\.maxntid (\d+), 1, 1") -> dict:
    """{expression: the number in `directive` (.maxntid's threads unless told) of its PTX entry, or None} for
    `variant`'s kernels, compiled for compute_90."""
    ptx, lowered = ptx_of(variant, expressions)
    found = {}
    for expression in expressions:
        entry = ptx[ptx.index(f".entry {lowered[expression]}("):]
        header = entry[:entry.index("{")]
        bound = re.search(directive, header)
        found[expression] = int(bound.group(1)) if bound else None
    return found


@pytest.mark.parametrize("variant, expression", [
    ("strided_smem", "softmax_strided_smem_cluster<float, float, false, 16>"),
    ("strided", "softmax_strided_cluster<float, float, false, 8, 4>"),
    ("split_row", "softmax_split_row_cluster<float, float, false, 8, 1, 16>")])
def test_cluster_barriers_release_shared_memory_only(variant, expression):
    # common.cuh's cluster_sync: a release of the block's shared memory and a relaxed arrive, not the plain release
    # that waits for the block's global stores (NVRTC 12.8 on; the CI's NVRTC is 13)
    from cupy.cuda import nvrtc

    if nvrtc.getVersion() < (12, 8):
        pytest.skip("NVRTC before 12.8 lacks fence.sync_restrict and keeps the plain release")
    ptx, _ = ptx_of(variant, [expression])
    assert "fence.release.sync_restrict::shared::cta.cluster;" in ptx
    assert "barrier.cluster.arrive.relaxed.aligned;" in ptx and "barrier.cluster.arrive.release" not in ptx


def test_only_the_bounded_split_row_kernels_carry_a_thread_bound():
    # split_row.cu's split_row_bound: 1024 for the float-accumulating K = 8 kernels of a 16-block cluster,
    # 0 (no .maxntid) for the rest, which spill under the bound; and 1024 for the float-accumulating folds
    # (R = 4 and the plain R = -4); 128 for the plain float32 kernels of two chunks a thread (R = 0, K = 2), none for the other plain ones;
    # on the grid (split_row_grid_threads) 512 for the float-accumulating G > 1, 1024 for their G = 1, K = 8 twins
    # that read the options (O = 1, the mask's staging) and write the input's type, none for the plain ones (O = 0),
    # K < 8, half-precision input to float32 output, or float64; the gradients on the grid
    # (split_row_grid_backward_threads, log_softmax's alone: dy alone held) 1024 for the float-accumulating G = 1,
    # K = 8, none for float64
    bounded = {"softmax_split_row_cluster<float, float, false, 8, 1, 16>": 1024,
               "softmax_split_row_cluster<__nv_bfloat16, float, true, 8, 1, 16>": 1024,
               "softmax_split_row_cluster<float, float, false, 8, 1, 8>": None,
               "softmax_split_row_cluster<float, float, false, 4, 1, 16>": None,
               "softmax_split_row_cluster<double, double, false, 8, 1, 16>": None,
               "softmax_split_row<float, float, false, 8, 1>": None,
               "softmax_split_row<float, float, false, 8, 0>": None,
               "softmax_split_row<float, float, false, 2, 0>": 128,
               "softmax_split_row<float, float, true, 2, 0>": 128,
               "softmax_split_row<float, float, false, 2, 1>": None,
               "softmax_split_row<__nv_bfloat16, __nv_bfloat16, false, 2, 0>": None,
               "softmax_split_row<__nv_bfloat16, __nv_bfloat16, false, 8, 4>": 1024,
               "softmax_split_row<__nv_bfloat16, __nv_bfloat16, false, 8, -4>": 1024,
               "softmax_split_row<double, double, false, 8, 4>": None,
               "softmax_split_row<double, double, false, 8, -4>": None,
               "softmax_split_row_grid<float, float, false, 8, 1, 1>": 1024,
               "softmax_split_row_grid<__nv_bfloat16, __nv_bfloat16, true, 8, 1, 1>": 1024,
               "softmax_split_row_grid<__nv_bfloat16, float, true, 8, 1, 1>": None,
               "softmax_split_row_grid<float, float, false, 8, 1, 0>": None,
               "softmax_split_row_grid<float, float, false, 4, 1, 1>": None,
               "softmax_split_row_grid<double, double, false, 8, 1, 1>": None,
               "softmax_split_row_grid<float, float, false, 8, 4, 1>": 512,
               "softmax_split_row_grid<float, float, false, 8, 4, 0>": 512,
               "softmax_split_row_grid_backward<float, float, true, 8, 1>": 1024,
               "softmax_split_row_grid_backward<__nv_bfloat16, __nv_bfloat16, true, 8, 1>": 1024,
               "softmax_split_row_grid_backward<double, double, true, 8, 1>": None}
    assert thread_bounds("split_row", bounded) == bounded


def test_warp_rows_bounds_exactly_the_kernels_its_rules_name():
    # warp_rows.cu's warp_rows_bounded: 256 threads (and eight blocks an SM) for one chunk a lane in float32,
    # or in a 2-byte type with 8 lanes or more; none elsewhere (a bound alone let ptxas take more registers)
    # (the last argument O, the options compiled in or out, leaves the bound alone); warp_rows_grad_bounded:
    # 256 threads (four blocks an SM) for the 2-byte log_softmax gradients of four chunks a lane, a warp a row, alone;
    # warp_rows_plain_held: 256 threads (eight blocks an SM, six for log_softmax on Slots) for float32's plain
    # kernels at K = 2 (rows out of phase: O = 0, and the element-strided O = -2), not their twins on whole chunks,
    # a 2-byte type's nor a wider output's; no float64 kernel
    bounded = {"softmax_warp_rows_backward<__nv_bfloat16, __nv_bfloat16, true, 32, 4, 0>": 256,
               "softmax_warp_rows_backward<__half, __half, true, 32, 4, 0>": 256,
               "softmax_warp_rows_backward<__half, __half, true, 8, 4, 0>": None,
               "softmax_warp_rows_backward<__nv_bfloat16, __nv_bfloat16, false, 32, 4, 0>": None,
               "softmax_warp_rows_backward<__nv_bfloat16, __nv_bfloat16, true, 32, 2, 0>": None,
               "softmax_warp_rows_backward<float, float, true, 32, 4, 0>": None,
               "softmax_warp_rows<float, float, false, 8, 1, 0>": 256,
               "softmax_warp_rows<float, float, false, 8, 1, 1>": 256,
               "softmax_warp_rows<float, float, true, 1, 1, 1>": 256,
               "softmax_warp_rows<__nv_bfloat16, __nv_bfloat16, false, 32, 1, 1>": 256,
               "softmax_warp_rows<__nv_bfloat16, __nv_bfloat16, false, 4, 1, 0>": None,
               "softmax_warp_rows<__nv_bfloat16, float, false, 8, 1, 1>": None,
               "softmax_warp_rows<double, double, false, 8, 1, 0>": None,
               "softmax_warp_rows<float, float, false, 32, 4, 0>": None,
               "softmax_warp_rows<float, float, true, 8, 2, 0>": 256,
               "softmax_warp_rows<float, float, true, 16, 2, 0>": 256,
               "softmax_warp_rows<float, float, true, 8, 2, -1>": None,
               "softmax_warp_rows<float, float, false, 8, 2, 0>": 256,
               "softmax_warp_rows<float, float, false, 32, 2, 0>": 256,
               "softmax_warp_rows<__nv_bfloat16, __nv_bfloat16, true, 16, 2, 0>": None,
               "softmax_warp_rows<__nv_bfloat16, float, true, 16, 2, 0>": None,
               "softmax_warp_rows<float, float, true, 8, 1, -2>": 256,
               "softmax_warp_rows<float, float, true, 16, 2, -2>": 256,
               "softmax_warp_rows<float, float, false, 32, 2, -2>": 256,
               "softmax_warp_rows<double, double, true, 32, 2, -2>": None,
               "softmax_warp_rows<double, double, false, 16, 4, -2>": None,
               "softmax_warp_rows<double, double, true, 16, 4, -2>": None,
               "softmax_warp_rows<double, double, false, 32, 4, 0>": None}
    assert thread_bounds("warp_rows", bounded) == bounded
    # and the blocks an SM each bound asks (.minnctapersm): eight, but six for float32 log_softmax's plain K = 2 on
    # Slots (O = 0; eight element-strided)
    blocks = {"softmax_warp_rows<float, float, false, 8, 1, 0>": 8,
              "softmax_warp_rows<float, float, true, 16, 2, -2>": 8,
              "softmax_warp_rows<float, float, true, 32, 2, -2>": 8,
              "softmax_warp_rows<double, double, false, 32, 4, -2>": None,
              "softmax_warp_rows<float, float, false, 16, 2, 0>": 8,
              "softmax_warp_rows<float, float, true, 16, 2, 0>": 6,
              "softmax_warp_rows<float, float, true, 8, 2, 0>": 6,
              "softmax_warp_rows_backward<__half, __half, true, 32, 4, 0>": 4,
              "softmax_warp_rows<__nv_bfloat16, __nv_bfloat16, true, 16, 2, 0>": None}
    assert thread_bounds("warp_rows", blocks, r"\.minnctapersm (\d+)") == blocks


# Kernels whose write pass widens 2-byte values again after the row's reduction (common.cuh, WidenPass::write;
# warp_rows' forward widens alike on purpose: warp_rows.cu)
REWIDENED = ["softmax_split_row_cluster_backward<{t}, {t}, false, 4, 1, 8>",
             "softmax_split_row_cluster_backward<{t}, {t}, false, 8, 1, 8>",
             "softmax_split_row<{t}, {t}, true, 8, 0>",
             "softmax_split_row<{t}, {t}, true, 4, 0>",
             "softmax_warp_rows_backward<{t}, {t}, false, 32, 4, 0>"]


@pytest.mark.parametrize("template", REWIDENED, ids=lambda t: t.split("<")[0] + "_" + "_".join(t.split(", ")[2:]).rstrip(">"))
def test_half_precision_rows_stay_packed_across_the_reduction(template):
    # ptxas merges a read pass' and a write pass' widenings written alike and keeps the widened row alive across
    # the reduction: 2-byte kernels then took 20-62 registers more than float32's (sm_90, before WidenPass::write)
    regs = {r.expression: r.registers for r in loader.build("sm_90")}
    for t in ("__nv_bfloat16", "__half"):
        assert regs[template.format(t=t)] <= regs[template.format(t="float")] + 8, t


def test_log_softmax_is_built_for_the_variants_that_compute_it():
    names = {r.expression for r in loader.build("sm_90")}
    assert "softmax_warp_rows<__nv_bfloat16, __nv_bfloat16, true, 32, 4, 0>" in names
    assert "softmax_split_row_cluster<float, float, true, 8, 1, 16>" in names
    assert "softmax_two_pass<float, float, true, 4>" in names
    assert "softmax_strided_cluster<__nv_bfloat16, float, true, 32, 16>" in names
    assert "softmax_online<double, double, true>" in names
    assert not any(name.startswith("softmax_naive") and "true" in name for name in names)


def test_gradients_are_built_for_their_variants_in_one_type():
    names = {r.expression for r in loader.build("sm_90")}
    assert "softmax_warp_rows_backward<__half, __half, true, 32, 8, 0>" in names
    assert "softmax_split_row_backward<double, double, false, 8, 1>" in names
    assert "softmax_split_row_cluster_backward<__nv_bfloat16, __nv_bfloat16, false, 8, 1, 16>" in names
    split_backward = [name for name in names if name.startswith("softmax_split_row") and "_backward" in name
                      and "_grid_" not in name]
    folds = {name: name.split(", ")[4].rstrip(">") for name in split_backward}
    assert set(folds.values()) == {"1", "2"}  # R: the gradients fold no rows; R = 2, the late-y twins:
    ctypes = ("__half", "__nv_bfloat16", "float", "double")  # log_softmax's, K = 4, C <= 8, in every type
    assert {name for name, r in folds.items() if r == "2"} == {
        f"softmax_split_row_cluster_backward<{t}, {t}, true, 4, 2, {c}>" for t in ctypes for c in (2, 4, 8)}
    # on the grid (K, G): no options (no O), no folds (G > 0)
    assert "softmax_split_row_grid_backward<float, float, true, 8, 1>" in names
    assert not any(name.startswith("softmax_split_row_grid_backward<") and "true" not in name for name in names)
    assert all(int(name.split(", ")[4].rstrip(">")) > 0 for name in names
               if name.startswith("softmax_split_row_grid_backward<"))
    assert not any("_backward<__half, float" in name or "_backward<__nv_bfloat16, float" in name for name in names)
    assert "softmax_two_pass_backward<float, float, true, 4>" in names


def test_static_shared_scratch_is_reported():
    by_name = {r.expression: r for r in loader.build("sm_90")}
    assert by_name["softmax_block<float, float>"].static_smem == 32 * 4
    assert by_name["softmax_block<double, double>"].static_smem == 32 * 8
    assert by_name["softmax_naive<float, float>"].static_smem == 0


@pytest.mark.parametrize("name", list(registry.VARIANTS))
def test_header_is_inlined_with_line_directives(name):
    text = loader.source(name)
    assert "#include \"common.cuh\"" not in text
    kernel = loader.kernel_dir() / registry.VARIANTS[name].source
    resume = re.search(rf'#line (\d+) "{re.escape(str(kernel))}"\n(.*)\n', text.split("namespace csm", 1)[1])
    line_no, line = int(resume.group(1)), resume.group(2)
    assert kernel.read_text().splitlines()[line_no - 1] == line


def test_compile_errors_name_the_real_file_and_line(tmp_path, monkeypatch):
    shutil.copy(loader.kernel_dir() / "common.cuh", tmp_path)
    lines = (loader.kernel_dir() / "naive.cu").read_text().splitlines()
    bad_line = next(i for i, text in enumerate(lines, 1) if "using A = " in text)
    lines[bad_line - 1] = "    using A = undefined_symbol;"
    (tmp_path / "naive.cu").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(loader, "kernel_dir", lambda: tmp_path)
    loader.source.cache_clear()
    try:
        with pytest.raises(loader.BuildError, match=rf"{re.escape(str(tmp_path / 'naive.cu'))}\({bad_line}\).*undefined_symbol"):
            loader._nvrtc_compile(loader.source("naive"), "naive.cu", ["softmax_naive<float, float>"], "sm_90")
    finally:
        loader.source.cache_clear()


def test_kernels_folder_holds_only_cuda_sources():
    files = {p.name for p in loader.kernel_dir().iterdir() if p.is_file()}
    assert files == {v.source for v in registry.VARIANTS.values()} | {loader.HEADER}


@pytest.mark.parametrize("name", list(registry.VARIANTS))
def test_each_kernel_file_opens_with_its_contract(name):
    head = (loader.kernel_dir() / registry.VARIANTS[name].source).read_text().split("#include")[0]
    assert head.startswith(f"// Variant: {name} ")
    for section in ("Idea:", "Limits:", "Launch contract:"):
        assert section in head, f"{name}.cu header lacks {section}"
