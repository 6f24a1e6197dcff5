import sys
sys.path.insert(0, "tests")
from cupysoftmax import dtypes
from cupysoftmax.planner import Planner
from fakes import H100
from test_planner import fake_facts
P = Planner(H100)
shapes = [(2048, 32768, "BFLOAT16"), (4096, 16384, "BFLOAT16"), (8192, 2048, "BFLOAT16"),
          (256, 50257, "FLOAT16"), (64, 50257, "FLOAT16"), (8192, 50257, "BFLOAT16")]
for m, n, dt in shapes:
    d = getattr(dtypes, dt); pair = (d, d)
    for label, kw in [("plain", {}), ("scale", dict(fused=True)), ("where", dict(masked=True))]:
        l = P.plan("auto", m, n, pair, fake_facts, aligned=(n % 8 == 0), y_aligned=(n%8==0), **kw)
        print(f"{m}x{n} {dt:9s} {label:6s} {l}")
