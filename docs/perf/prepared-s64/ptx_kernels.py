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
    bodies[m.group(1)] = hashlib.sha1(ptx[m.start():j if j > 0 else None].encode()).hexdigest()[:12]
for (pair, knobs, op), e in zip(items, exprs):
    print(f"{op:<22} {pair[0].name:>8} {pair[1].name:>8} {str(knobs):<12} {bodies[nvrtc.getLoweredName(p, e)]}")
