"""The PTX of a few split_row bfloat16 kernels, hashed kernel by kernel, to show which ones a diff changes: run in
each tree (PYTHONPATH=<tree>). Session 63: part-word-grad.diff leaves the forward fold (8, -4, 1) and every
log_softmax_backward kernel (R = 1, its late-y twin R = 2, the grid) as they were; softmax_backward (4, 1, 4) changes."""
import sys, hashlib
from cupy.cuda import nvrtc
from cupysoftmax import loader, dtypes
from cupysoftmax import variants as registry
bf = (dtypes.BFLOAT16, dtypes.BFLOAT16)
v = registry.VARIANTS["split_row"]
ex = [v.name_expression(bf, k, op) for k, op in [((8, -4, 1), registry.SOFTMAX), ((4, 1, 4), registry.LOG_SOFTMAX_BACKWARD),
      ((4, 2, 4), registry.LOG_SOFTMAX_BACKWARD), ((4, 1, 4), registry.SOFTMAX_BACKWARD), ((8, 1, 0), registry.LOG_SOFTMAX_BACKWARD)]]
for e in ex:
    p = nvrtc.createProgram(loader.source("split_row"), "split_row.cu", [], [])
    nvrtc.addNameExpression(p, e)
    nvrtc.compileProgram(p, ["-arch=compute_90", f"-I{loader.include_dir()}", *loader.OPTIONS, *loader.CUPY_OPTIONS])
    ptx = nvrtc.getPTX(p)
    ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
    name = nvrtc.getLoweredName(p, e)
    # the kernel's own body: from its .entry to the next .entry
    i = ptx.index(f".entry {name}"); j = ptx.find(".entry", i + 10)
    print(e[:70], hashlib.sha1(ptx[i:j if j > 0 else None].encode()).hexdigest()[:12])
