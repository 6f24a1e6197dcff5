"""kernels/*.cu -> compiled kernels, at run time through NVRTC (cupy.RawModule) or offline.

- The .cu file is read as text and the shared header is inlined where it is
  #include'd: CuPy's disk cache key covers the source string, not included
  files. #line directives keep compiler messages pointing at the real file.
- One RawModule per (device, instantiation), compiled on first use and cached.
  A lock per instantiation makes threads that ask for the same kernel at once
  compile it once, while threads asking for different ones compile side by
  side (NVRTC runs without the GIL).
- `build(arch)` compiles every instantiation of every variant through the
  low-level NVRTC bindings, which need no GPU, and reports registers, spills
  and static shared memory from ptxas.
"""
from __future__ import annotations

import functools
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from . import variants as registry
from .planner import KernelFacts

HEADER = "common.cuh"
# CUPYSOFTMAX_LINEINFO=1 (read once, at import) adds -lineinfo: compute-sanitizer
# and ncu then name the .cu line of a fault (scripts/sanitize.py sets it).
LINEINFO = os.environ.get("CUPYSOFTMAX_LINEINFO") == "1"
OPTIONS = ("--std=c++17", *(("-lineinfo",) if LINEINFO else ()))
# What cupy.RawModule adds to every NVRTC compile by itself; the offline build
# adds them too, so that it compiles exactly what runs.
CUPY_OPTIONS = ("--device-as-default-execution-space", "-ftz=true")
_INCLUDE = re.compile(rf'^#include "{re.escape(HEADER)}"\s*$', re.MULTILINE)


def kernel_dir() -> Path:
    """kernels/: inside the package in a wheel, beside it in a checkout or editable install."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "kernels", here.parent / "kernels"):
        if (candidate / HEADER).is_file():
            return candidate
    raise FileNotFoundError(f"no kernels/ folder with {HEADER} beside {here}")


@functools.lru_cache(maxsize=None)
def source(variant_name: str) -> str:
    """The variant's .cu with the shared header inlined, as one NVRTC source string."""
    directory = kernel_dir()
    path = directory / registry.get(variant_name).source
    text = path.read_text()
    match = _INCLUDE.search(text)
    if match is None:
        raise ValueError(f'{path} must #include "{HEADER}"')
    resume = text.count("\n", 0, match.end()) + 2  # the line after the #include
    header = (directory / HEADER).read_text()
    inlined = f'#line 1 "{directory / HEADER}"\n{header}\n#line {resume} "{path}"'
    return f'#line 1 "{path}"\n{text[: match.start()]}{inlined}{text[match.end():]}'


PORTABLE_CLUSTER = 8  # larger clusters need the attribute below (CUDA driver API)
NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14  # CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED

_kernels: dict[tuple, object] = {}
_compiling: dict[tuple, threading.Lock] = {}  # one lock per instantiation, made under _lock
_lock = threading.Lock()


def function(variant_name: str, pair, knobs: tuple, device_id: int, op: str = registry.SOFTMAX):
    """The cupy.RawKernel of one instantiation on one device (compiled once, then cached)."""
    key = (device_id, variant_name, pair, knobs, op)
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            lock = _compiling.setdefault(key, threading.Lock())
        with lock:
            kernel = _kernels.get(key)
            if kernel is None:
                kernel = _compile(variant_name, pair, knobs, device_id, op)
                _kernels[key] = kernel
    return kernel


def loaded() -> dict[int, str]:
    """id(kernel) -> its name expression, for every kernel this process has compiled (any device)."""
    return {id(kernel): registry.get(variant).name_expression(pair, knobs, op)
            for (_, variant, pair, knobs, op), kernel in list(_kernels.items())}


def _compile(variant_name, pair, knobs, device_id, op):
    return compile_source(source(variant_name), variant_name, pair, knobs, device_id, op)


def compile_source(code: str, variant_name: str, pair, knobs: tuple, device_id: int, op: str = registry.SOFTMAX):
    """One instantiation of a variant compiled from `code` (its source as `source` gives it, or another
    version of it: scripts/probe_kernels_ab.py), loaded on one device; not cached."""
    import cupy

    variant = registry.get(variant_name)
    expression = variant.name_expression(pair, knobs, op)
    with cupy.cuda.Device(device_id):
        module = cupy.RawModule(code=code, options=OPTIONS, name_expressions=[expression])
        kernel = module.get_function(expression)
        kernel.attributes  # noqa: B018 - forces the load on this device now, not at first launch
        if variant.clustered(knobs) and knobs[-1] > PORTABLE_CLUSTER:
            cupy.cuda.driver.funcSetAttribute(kernel.kernel.ptr, NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1)
    return kernel


def facts_of(kernel) -> KernelFacts:
    """The planner's view of a compiled kernel."""
    return KernelFacts(
        num_regs=kernel.num_regs,
        static_smem=kernel.shared_size_bytes,
        local_bytes=kernel.local_size_bytes,
        max_threads=kernel.max_threads_per_block,
    )


# -- offline build ------------------------------------------------------------


class BuildError(RuntimeError):
    """NVRTC rejected a kernel source; the message carries its log."""


@dataclass(frozen=True)
class BuildReport:
    arch: str
    variant: str
    expression: str
    mangled: str  # the kernel's symbol, as tools that filter by kernel name see it
    registers: int
    spill_stores: int
    spill_loads: int
    stack_bytes: int
    static_smem: int


_ENTRY = re.compile(r"Compiling entry function '(\S+)' for '(\w+)'")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?")


def include_dir() -> str:
    """The CUDA runtime headers (cuda_fp16.h, cuda_bf16.h) from NVIDIA's wheels or a toolkit."""
    from cuda.pathfinder import find_nvidia_header_directory

    found = find_nvidia_header_directory("cudart")
    if found is None:
        raise BuildError("CUDA runtime headers not found: install cupysoftmax[cuda12] or [cuda13]")
    return found


@functools.lru_cache(maxsize=None)
def build(arch: str) -> tuple[BuildReport, ...]:
    """Compile every instantiation of every variant for `arch` (e.g. "sm_90") without a GPU."""
    reports = []
    for variant in registry.VARIANTS.values():
        cc = compute_capability(arch)
        expressions = [variant.name_expression(*instantiation) for instantiation in variant.instantiations(cc)]
        lowered, log = _nvrtc_compile(source(variant.name), variant.source, expressions, arch)
        by_mangled = _parse_ptxas(log)
        for expression in expressions:
            r = by_mangled[lowered[expression]]
            reports.append(BuildReport(arch=arch, variant=variant.name, expression=expression,
                                       mangled=lowered[expression], **r))
    return tuple(reports)


def compute_capability(arch: str) -> tuple[int, int]:
    match = re.fullmatch(r"sm_(\d+)(\d)a?", arch)
    if match is None:
        raise BuildError(f"not a GPU target: {arch!r} (expected sm_XY, such as sm_90)")
    return int(match.group(1)), int(match.group(2))


def _nvrtc_compile(code: str, name: str, expressions: list[str], arch: str):
    from cupy.cuda import nvrtc

    program = nvrtc.createProgram(code, name, [], [])
    try:
        for expression in expressions:
            nvrtc.addNameExpression(program, expression)
        options = [f"-arch={arch}", "-Xptxas=-v", f"-I{include_dir()}", *OPTIONS, *CUPY_OPTIONS]
        try:
            nvrtc.compileProgram(program, options)
        except nvrtc.NVRTCError as exc:
            raise BuildError(f"{name} for {arch}: {exc}\n{nvrtc.getProgramLog(program)}") from None
        lowered = {e: nvrtc.getLoweredName(program, e) for e in expressions}
        return lowered, nvrtc.getProgramLog(program)
    finally:
        nvrtc.destroyProgram(program)


def _parse_ptxas(log: str) -> dict[str, dict]:
    """ptxas -v lines -> {mangled name: registers, spills, stack, static shared bytes}."""
    found: dict[str, dict] = {}
    current = None
    for line in log.splitlines():
        if m := _ENTRY.search(line):
            current = found.setdefault(m.group(1), {"static_smem": 0})
        elif current is not None and (m := _FRAME.search(line)):
            current.update(stack_bytes=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        elif current is not None and (m := _USED.search(line)):
            current.update(registers=int(m.group(1)), static_smem=int(m.group(2) or 0))
    return found
