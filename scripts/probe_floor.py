"""Probe: the floor of a softmax that reads each row once, on few long rows. No math, only the order.

Any softmax that reads a row once must hold all of it on chip until the row's
max and sum are known, and may write none of it before then. This kernel does
that and nothing else: a resident (cooperative) grid in which each row's Q
blocks load their slice of the row (16-byte loads, K vectors a thread in
registers and the rest in shared memory through cp.async), count themselves in on the row's
counter and wait for the row's last block (split_row's grid barrier: a release count and
acquire polls; before 2026-11-24's fourth session, fences around relaxed atomics), then
store the slice unchanged.
R rows are held at once (Q = the grid's blocks / R); blocks loop over rows in
steps of R. The counters are never reset: launch g waits for Q * g arrivals.

For each shape it prints, interleaved with bench's engine and flush: the copy
of the same bytes, a grid-stride copy kernel on the same grid (reads and
writes overlap), the floor for each R that fits, and cupysoftmax's auto. The
floor's output is checked equal to its input before it is timed.

With --exps, each rows shape is also timed with the floor's kernel computing one and
two exponentials of each element (exp2f, as split_row does: one as the values land,
one as each is written) and keeping none of them: what a softmax's arithmetic
costs on top of the floor.

    PYTHONPATH=$PWD python3 scripts/probe_floor.py [--exps] [mode M N dtype]...
"""
import sys

import cupy
import numpy

from cupysoftmax import api, bench, device, dtypes, gradients

ROWS = [(8, 262144, "float32"), (32, 128256, "float32"), (32, 128256, "bfloat16"), (32, 262144, "float32"),
        (128, 32000, "float32"), (128, 128256, "float32"), (128, 128256, "bfloat16"), (64, 1048576, "float32"),
        (4, 4194304, "float32")]
GRADIENT = ROWS + [(128, 262144, "float32")]  # the softmax_backward shapes under 0.85 x copy at 1133798
CASES = ([("rows", *shape) for shape in ROWS] + [("gradient", *shape) for shape in GRADIENT]
         + [("axis0", 8192, 8192, "float32"), ("rows", 256, 262144, "float32")])
THREADS = 512
EXPS = False  # --exps: rows also timed with one and two exponentials an element (kernel `hold`'s E)

SOURCE = r"""
// Where vector c of held row `row` lives: rows of `row_vecs` vectors one after another, or (LINES) a group of
// 32 float32 columns: 8 vectors (one 128-byte line) of each of its rows, lines `pitch` vectors apart.
template <bool LINES>
__device__ __forceinline__ long long at(int row, long long row_vecs, int c, long long pitch) {
    return LINES ? row * 8LL + (c >> 3) * pitch + (c & 7) : row * row_vecs + c;
}

// E exponentials of each element of a vector of V elements (4 float32 or 8 bfloat16), summed into acc: the
// arithmetic a softmax adds to the floor, which keeps none of it (acc only guards it from the compiler).
template <int E, int V>
__device__ __forceinline__ float burn(const uint4& v, float acc) {
    const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int e = 0; e < E; ++e)
#pragma unroll
        for (int i = 0; i < 4; ++i)
            acc += V == 4 ? exp2f(__uint_as_float(w[i]) * 0.25f)
                          : exp2f(__uint_as_float(w[i] << 16) * 0.25f) + exp2f(__uint_as_float(w[i] & 0xffff0000u) * 0.25f);
    return acc;
}

// INPUTS = 2 (the gradient's y and dy): held vector c is vector c / 2 of x (c even) or of x2 (c odd), and only the
// even ones are written (to y), so a row holds twice the vectors it writes.
// E (rows only): the exponentials of each element computed too, as split_row does: one as its values land (before
// the barrier), a second as each vector is written (E = 2); the output stays the input.
template <int K, int INPUTS, bool LINES, int E = 0, int V = 4>
__global__ void __launch_bounds__(512, 8 / K) hold(const uint4* __restrict__ x, const uint4* __restrict__ x2,
                                                 uint4* __restrict__ y, long long row_vecs, long long pitch, int rows,
                                                 int q, long long per_block, unsigned* counts, unsigned target) {
    float acc = 0.0f;
    extern __shared__ uint4 part[];
    const int t = threadIdx.x, b = blockDim.x, rank = blockIdx.x % q, slots = gridDim.x / q;
    const long long held = INPUTS * row_vecs;
    const int lo = rank * (int)per_block;  // offsets within a row fit an int
    const int hi = (int)min(lo + per_block, held);
    const auto source = [&](int row, int c) {
        return INPUTS == 2 ? ((c & 1) ? x2 : x) + at<LINES>(row, row_vecs, c >> 1, pitch) : x + at<LINES>(row, row_vecs, c, pitch);
    };
    const auto store = [&](int row, int c, const uint4& v) {
        if (INPUTS == 1) y[at<LINES>(row, row_vecs, c, pitch)] = v;
        else if (!(c & 1)) y[at<LINES>(row, row_vecs, c >> 1, pitch)] = v;
    };
    for (int row = blockIdx.x / q; row < rows; row += slots) {
        uint4 v[K];
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int c = lo + t + i * b;
            if (c < hi) v[i] = *source(row, c);
        }
        int j = 0;  // the rest straight to shared memory (cp.async: no registers)
        for (int c = lo + t + K * b; c < hi; c += b, ++j) {
            const unsigned to = static_cast<unsigned>(__cvta_generic_to_shared(part + j * b + t));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(to), "l"(source(row, c)));
        }
        asm volatile("cp.async.wait_all;\n" ::);
        __syncthreads();
        if (E >= 1) {
#pragma unroll
            for (int i = 0; i < K; ++i)
                if (lo + t + i * b < hi) acc = burn<1, V>(v[i], acc);
            j = 0;
            for (int c = lo + t + K * b; c < hi; c += b, ++j) acc = burn<1, V>(part[j * b + t], acc);
        }
        if (t == 0) {  // split_row's grid barrier (csm::GridBoard::wait): a release count, acquire polls
            asm volatile("red.release.gpu.global.add.u32 [%0], 1;" :: "l"(counts + row) : "memory");
            unsigned seen;
            while (true) {
                asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(seen) : "l"(counts + row) : "memory");
                if (seen >= target) break;
                __nanosleep(32);
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < K; ++i) {
            const int c = lo + t + i * b;
            if (c < hi) {
                if (E >= 2) acc = burn<1, V>(v[i], acc);
                store(row, c, v[i]);
            }
        }
        j = 0;
        for (int c = lo + t + K * b; c < hi; c += b, ++j) {
            if (E >= 2) acc = burn<1, V>(part[j * b + t], acc);
            store(row, c, part[j * b + t]);
        }
        __syncthreads();  // the shared-memory part is free for the next row
    }
    if (acc == -1.0f) y[0] = make_uint4(0, 0, 0, 0);  // never (a sum of exponentials): keeps the arithmetic
}

__global__ void stream(const uint4* __restrict__ x, uint4* __restrict__ y, long long n) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i];
}
"""


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def kernel_name(k: int, inputs: int, lines: bool, exps: int = 0, vector: int = 4) -> str:
    return f"hold<{k}, {inputs}, {'true' if lines else 'false'}, {exps}, {vector}>"


NAMES = ([kernel_name(k, inputs, lines) for k in (8, 4) for inputs, lines in ((1, False), (2, False), (1, True))]
         + [kernel_name(k, 1, False, e, v) for k in (8, 4) for e in (1, 2) for v in (4, 8)])


class Case:
    """One shape of one mode: its arrays, the held rows' geometry, the copy and cupysoftmax's call."""

    def __init__(self, mode: str, m: int, n: int, dtype):
        x = bench.random_input(m, n, dtype)
        self.mode, self.x, self.y = mode, x, cupy.empty_like(x)
        # the E kernels read float32 or bfloat16; a float16 row's bits are read as bfloat16, which takes the same
        # instructions (the floor counts the exponentials' cost, not their values)
        self.exps = EXPS and mode == "rows" and x.itemsize in (2, 4)
        self.x2, self.inputs, self.lines, self.pitch = x, 1, False, 0
        self.rows, self.row_vecs = m, n * x.itemsize // 16
        moved = x.nbytes
        if mode == "gradient":  # y and dy read, dx written
            self.x2, self.inputs, moved = bench.random_input(m, n, dtype), 2, 3 * x.nbytes // 2
            self.ours = lambda: gradients.softmax_backward(self.x, self.x2)
        elif mode == "axis0":  # groups of 32 float32 columns, each a held row of n-long lines
            if x.itemsize != 4 or n % 32:
                raise SystemExit("axis0: float32 with a multiple of 32 columns")
            self.lines, self.pitch, self.rows, self.row_vecs = True, n // 4, n // 32, 8 * m
            self.ours = lambda: api.softmax(self.x, axis=0)
        else:
            self.ours = lambda: api.softmax(self.x, axis=-1)
        self.copy, self.moved = bench.copy_call(moved), 2 * moved

    def floors(self, module, sms: int) -> dict:
        """{label: a callable} for each rows-at-once R whose slices fit one (K = 8) or two (K = 4) blocks an SM;
        each checked to write its input back unchanged first."""
        fns = {}
        exps = (0, 1, 2) if self.exps else (0,)
        for per_sm, k, e in ((p, k, e) for p, k in ((1, 8), (2, 4)) for e in exps):
            kernel = module.get_function(kernel_name(k, self.inputs, self.lines, e, 16 // self.x.itemsize if e else 4))
            smem_most = 227 * 1024 if per_sm == 1 else 113 * 1024
            if kernel.num_regs * THREADS * per_sm > 65536:
                continue
            kernel.max_dynamic_shared_size_bytes = smem_most
            r = self.rows
            while r >= 1:
                q = sms * per_sm // r
                per_block = _ceil_div(self.inputs * self.row_vecs, q) if q else 0
                smem = max(0, per_block - k * THREADS) * 16
                if q and smem <= smem_most:
                    label = f"floor R={r:<4} Q={q:<3} {per_sm}/SM smem {smem // 1024}K" + (f" exp x{e}" if e else "")
                    run = self._launcher(kernel, q, r, per_block, smem)
                    self.y.view(numpy.uint8).fill(0xFF)
                    run()
                    if bool((self.y.view(numpy.uint8) == self.x.view(numpy.uint8)).all()):
                        fns[label] = run
                    else:
                        print(f"   {label}: OUTPUT WRONG")
                r //= 2
        return fns

    def _launcher(self, kernel, q, r, per_block, smem):
        counts, state = cupy.zeros(self.rows, numpy.uint32), {"launches": 0}
        args = (self.x, self.x2, self.y, numpy.int64(self.row_vecs), numpy.int64(self.pitch), numpy.int32(self.rows),
                numpy.int32(q), numpy.int64(per_block), counts)

        def run():
            state["launches"] += 1  # counters are never reset: each launch adds q to its rows'
            kernel((q * r,), (THREADS,), (*args, numpy.uint32(q * state["launches"])), shared_mem=smem)

        return run


def main(cases):
    sms = device.facts(cupy.cuda.Device().id).sms
    module = cupy.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=(*NAMES, "stream"),
                            enable_cooperative_groups=True)
    stream = module.get_function("stream")
    for name in NAMES:
        print(f"{name}: {module.get_function(name).num_regs} registers, {THREADS} threads")
    table = []
    for mode, m, n, dtype_name in cases:
        case = Case(mode, m, n, dtypes.parse(dtype_name))
        vecs = numpy.int64(case.x.nbytes // 16)
        fns = {"copy": case.copy, **case.floors(module, sms), "cupysoftmax": case.ours}
        if mode == "rows":
            fns["stream kernel 4/SM"] = lambda case=case: stream((4 * sms,), (256,), (case.x, case.y, vecs))
        times = bench.interleaved_ms(fns, repeat=40, rounds=3)
        copy_ms = times["copy"]
        print(f"{mode} {m} x {n} {dtype_name}: {case.moved / 1e6:.1f} MB moved")
        for label, ms in times.items():
            print(f"   {label:38} {ms * 1e3:7.1f} us {copy_ms / ms:6.1%} of copy")
        best = min((ms, label) for label, ms in times.items() if label.startswith("floor") and "exp" not in label)
        table.append((mode, m, n, dtype_name, copy_ms, best, times["cupysoftmax"]))
    print("\nmode | shape | copy us | best floor us (% of copy) | cupysoftmax us (% of copy)")
    for mode, m, n, name, copy_ms, (floor_ms, label), ours in table:
        print(f"{mode} | {m} x {n} {name} | {copy_ms * 1e3:.1f} | {floor_ms * 1e3:.1f} ({copy_ms / floor_ms:.0%}; "
              f"{label.split()[1]}) | {ours * 1e3:.1f} ({copy_ms / ours:.0%})")


if __name__ == "__main__":
    EXPS = "--exps" in sys.argv
    args = [a for a in sys.argv[1:] if a != "--exps"]
    main([(args[i], int(args[i + 1]), int(args[i + 2]), args[i + 3]) for i in range(0, len(args), 4)]
         if args else CASES)
