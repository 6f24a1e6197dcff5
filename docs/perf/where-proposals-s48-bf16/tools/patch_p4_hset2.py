# common.cuh, on top of patch_common_select2: select_bytes for 2-byte values with HSET2 (12 instructions a chunk)
import sys
p = sys.argv[1] + "/kernels/common.cuh"
s = open(p).read()
old = """            const unsigned tops[2] = {nonzero_tops(w.x), nonzero_tops(w.y)};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const unsigned keep = i % 2 ? sign_spread<0xbbaau>(tops[i / 2]) : sign_spread<0x9988u>(tops[i / 2]);
                v.w[i] = (v.w[i] & keep) | (pad.w[i] & ~keep);
            }"""
new = """            // Here a PRMT puts value 2i's and 2i + 1's mask bytes in the low bytes of two 16-bit lanes (0x00bb:
            // an f16 zero or subnormal, never a NaN), and one HSET2 (set.ne.u32.f16x2, without .ftz, so that
            // subnormals compare as themselves) gives 0xffff in each lane whose byte is nonzero: 3 instructions a
            // 32-bit word, 12 a chunk (4 of them on the FMA pipe, not the ALU).
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const unsigned lanes = __byte_perm(i < 2 ? w.x : w.y, 0u, i % 2 ? 0x4342u : 0x4140u);
                unsigned keep;
                asm("set.ne.u32.f16x2 %0, %1, %2;" : "=r"(keep) : "r"(lanes), "r"(0u));
                v.w[i] = (v.w[i] & keep) | (pad.w[i] & ~keep);
            }"""
assert old in s
s = s.replace(old, new)
old = """    // a value). 2-byte values: nonzero_tops a 32-bit word, then a PRMT (sign_spread: value 2i's and 2i + 1's
    // top bits, each over its value's two bytes) and a LOP3 a 32-bit word of the chunk: 14 instructions a chunk
    // where flags and select take 16 (vcmpne4's last PRMT goes). Other types: select(v, flags(w)). The same
    // bits: the keep words are select's, byte for byte."""
new = """    // a value). 2-byte values: a PRMT, an HSET2 and a LOP3 a 32-bit word of the chunk (below): 12 instructions
    // a chunk where flags and select take 16. Other types: select(v, flags(w)). The same bits: the keep words
    // are select's, byte for byte."""
assert old in s
s = s.replace(old, new)
open(p, "w").write(s)
