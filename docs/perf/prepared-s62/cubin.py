"""Compile split_row's bfloat16 gradient cluster kernels (K=4, C=4; R=1 of both gradients and log_softmax's late-y
twin R=2) to one sm_90 cubin, for cuobjdump -sass on the device (no disassembler here). loader._nvrtc_compile
returns no binary, hence the compile here. In session 62 cuobjdump found no device code in the file it wrote."""
import sys
from cupy.cuda import nvrtc
from cupysoftmax import loader, dtypes
from cupysoftmax import variants as registry
v = registry.VARIANTS["split_row"]
bf = (dtypes.BFLOAT16, dtypes.BFLOAT16)
ex = [v.name_expression(bf, (4, 1, 4), registry.SOFTMAX_BACKWARD),
      v.name_expression(bf, (4, 1, 4), registry.LOG_SOFTMAX_BACKWARD),
      v.name_expression(bf, (4, 2, 4), registry.LOG_SOFTMAX_BACKWARD)]
print(ex)
code = loader.source("split_row")
p = nvrtc.createProgram(code, "split_row.cu", [], [])
for e in ex: nvrtc.addNameExpression(p, e)
nvrtc.compileProgram(p, ["-arch=sm_90", "-Xptxas=-v", f"-I{loader.include_dir()}", *loader.OPTIONS, *loader.CUPY_OPTIONS])
for e in ex: print(e, nvrtc.getLoweredName(p, e))
print(nvrtc.getProgramLog(p)[-2000:])
open(sys.argv[1], "wb").write(nvrtc.getCUBIN(p))
