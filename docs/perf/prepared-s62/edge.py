"""softmax_backward or log_softmax_backward (argv[3]) on M x N bfloat16 twice (the second is the one ncu profiles: --launch-skip 1), y a softmax
made with CuPy's own ops so that only the gradient's launches are split_row's."""
import sys
import cupy
import cupysoftmax
from cupysoftmax import dtypes
m, n, op = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
x = cupy.random.standard_normal((m, n), dtype=cupy.float32)
e = cupy.exp(x - x.max(axis=1, keepdims=True))
y32 = e / e.sum(axis=1, keepdims=True)
y = (y32 if op == "softmax_backward" else cupy.log(y32)).astype(dtypes.BFLOAT16)
dy = cupy.random.standard_normal((m, n), dtype=cupy.float32).astype(dtypes.BFLOAT16)
f = getattr(cupysoftmax, op)
for _ in range(2):
    f(y, dy)
cupy.cuda.Device().synchronize()
print(m, n, op, "done")
