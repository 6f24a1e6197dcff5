"""Every split_row kernel compiled for sm_90 (all ops, dtype pairs and knob sets the registry builds), its PTX
hashed kernel by kernel; run in each tree (PYTHONPATH=<tree>) and diff the outputs to see which kernels a change
touches. Session 64: the transposed fold reduction (transposed-folds.diff) should change only the folds."""
import hashlib
import re

from cupy.cuda import nvrtc

from cupysoftmax import loader
from cupysoftmax import variants as registry

v = registry.VARIANTS["split_row"]
items = v.instantiations((9, 0))
exprs = [v.name_expression(pair, knobs, op) for pair, knobs, op in items]
p = nvrtc.createProgram(loader.source("split_row"), "split_row.cu", [], [])
for e in exprs:
    nvrtc.addNameExpression(p, e)
nvrtc.compileProgram(p, ["-arch=compute_90", f"-I{loader.include_dir()}", *loader.OPTIONS, *loader.CUPY_OPTIONS])
ptx = nvrtc.getPTX(p)
ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
bodies = {}
for m in re.finditer(r"\.entry (\S+)\(", ptx):
    j = ptx.find(".entry", m.end())
    body = ptx[m.start():j if j > 0 else None]
    # NVRTC names internal symbols after a hash of the source, which any edit changes, and numbers a kernel's
    # labels by its place among the kernels, which a new kernel shifts (session 65)
    body = re.sub(r"_INTERNAL_\w+?_split_row_cu_[0-9a-f]+_\d+", "_INTERNAL_", body)
    body = re.sub(r"\$L__BB\d+_", "$L__BB_", body)
    bodies[m.group(1)] = hashlib.sha1(body.encode()).hexdigest()[:12]
for (pair, knobs, op), e in zip(items, exprs):
    print(f"{op:<22} {pair[0].name:>8} {pair[1].name:>8} {str(knobs):<12} {bodies[nvrtc.getLoweredName(p, e)]}")
