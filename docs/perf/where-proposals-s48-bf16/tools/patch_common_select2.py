# common.cuh: the 2-byte select_bytes (nonzero_tops + prmt sign spread) and csm::opaque_zero
import sys
p = sys.argv[1] + "/kernels/common.cuh"
s = open(p).read()
old = """    // The same from the mask bytes themselves (w: byte k of (x, y) value k's, nonzero = kept; flags are such
    // bytes too), for 4-byte values: a test and a select each (LOP3 to a predicate, SEL), 8 instructions a
    // chunk where flags and select take 12 (vcmpne4 is 4 on sm_90: 3 ALU and a PRMT; then a PRMT and a LOP3
    // a value). Other types: select(v, flags(w)). The same bits.
    template <typename T> __device__ __forceinline__ static void select_bytes(Vec<T>& v, uint2 w) {
        if constexpr (sizeof(T) == 4) {
            const Vec<T> pad = padding_chunk<T>();
#pragma unroll
            for (int i = 0; i < 4; ++i) v.w[i] = (w.x & (0xffu << (8 * i))) != 0u ? v.w[i] : pad.w[i];
        } else {"""
new = """    // Each byte of x with its top bit set where the byte is nonzero and clear where it is 0: vcmpne4's first
    // three steps (LOP3, VIADD, LOP3 on sm_90). No borrow crosses a byte (each is 0x80 or more before the
    // subtraction of 1); the last OR keeps 0x80 itself.
    __device__ __forceinline__ static unsigned nonzero_tops(unsigned x) { return ((x | 0x80808080u) - 0x01010101u) | x; }
    // prmt with selector S, each nibble 8 + a byte of x: that byte's top bit over all 8 bits of the result's
    // byte (the sign replication __byte_perm does not expose).
    template <unsigned S> __device__ __forceinline__ static unsigned sign_spread(unsigned x) {
        unsigned r;
        asm("prmt.b32 %0, %1, 0, %2;" : "=r"(r) : "r"(x), "n"(S));
        return r;
    }
    // The same from the mask bytes themselves (w: byte k of (x, y) value k's, nonzero = kept; flags are such
    // bytes too), for 4-byte values: a test and a select each (LOP3 to a predicate, SEL), 8 instructions a
    // chunk where flags and select take 12 (vcmpne4 is 4 on sm_90: 3 ALU and a PRMT; then a PRMT and a LOP3
    // a value). 2-byte values: nonzero_tops a 32-bit word, then a PRMT (sign_spread: value 2i's and 2i + 1's
    // top bits, each over its value's two bytes) and a LOP3 a 32-bit word of the chunk: 14 instructions a chunk
    // where flags and select take 16 (vcmpne4's last PRMT goes). Other types: select(v, flags(w)). The same
    // bits: the keep words are select's, byte for byte.
    template <typename T> __device__ __forceinline__ static void select_bytes(Vec<T>& v, uint2 w) {
        if constexpr (sizeof(T) == 4) {
            const Vec<T> pad = padding_chunk<T>();
#pragma unroll
            for (int i = 0; i < 4; ++i) v.w[i] = (w.x & (0xffu << (8 * i))) != 0u ? v.w[i] : pad.w[i];
        } else if constexpr (sizeof(T) == 2) {
            const Vec<T> pad = padding_chunk<T>();
            const unsigned tops[2] = {nonzero_tops(w.x), nonzero_tops(w.y)};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                const unsigned keep = i % 2 ? sign_spread<0xbbaau>(tops[i / 2]) : sign_spread<0x9988u>(tops[i / 2]);
                v.w[i] = (v.w[i] & keep) | (pad.w[i] & ~keep);
            }
        } else {"""
assert old in s, "select_bytes"
s = s.replace(old, new)
old = """// Bytes of dynamic shared memory this launch has.
__device__ __forceinline__ unsigned dynamic_smem_bytes() {
    unsigned bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(bytes));
    return bytes;
}
"""
new = old + """
// 0, as a value ptxas cannot fold (a launch's dynamic shared memory is far below 2^31 bytes): index + opaque_zero()
// is an index ptxas cannot merge with other uses of the same index, so it does not hold one value from an early use
// to a late one (an empty asm stops NVVM's merging only: ptxas sees the copy through).
__device__ __forceinline__ int opaque_zero() { return static_cast<int>(dynamic_smem_bytes() >> 31); }
"""
assert old in s, "dyn"
s = s.replace(old, new)
open(p, "w").write(s)
