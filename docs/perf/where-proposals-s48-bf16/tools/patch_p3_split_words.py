# split_row.cu, on top of patch_p2_split: kLeanWords (2-byte R = 1 one-block kernels at K = 2 and 4, two passes)
import sys
p = sys.argv[1] + "/kernels/split_row.cu"
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, old[:70]
    s = s.replace(old, new, 1)
rep("""    constexpr bool kLeanFold = kSm90 && kMaskBatch > 1 && V == 8 && R > 1 && sizeof(Tout) == 2 && !LOG;
""", """    constexpr bool kLeanFold = kSm90 && kMaskBatch > 1 && V == 8 && R > 1 && sizeof(Tout) == 2 && !LOG;
    // The 2-byte one-block kernels at K = 2 and 4 (two passes: H::keeps), the input's type out (8192 x 2048
    // bfloat16 at K = 2, 4096 x 16384 at K = 4 on twice the threads, planner.SPLIT_MASKED_ITEMS): their words
    // already leave together; here select_bytes (14 instructions a chunk, not 16) and the mask row without the
    // 64-bit remainder (a dozen dependent uniform steps and a MUFU.RCP ahead of x's first load, a row) where it may.
    constexpr bool kLeanWords = kSm90 && kMaskBatch > 1 && V == 8 && (K == 2 || K == 4) && R == 1 && C == 1 &&
                                sizeof(Tout) == 2 && H::keeps && !LOG;
""")
rep("""            fused.row(row, (kFetchEarly || kFetchTogether || kLeanFold) && (row < fused.mask_rows || fused.mask_rows == 1));""",
    """            fused.row(row, (kFetchEarly || kFetchTogether || kLeanFold || kLeanWords) &&
                               (row < fused.mask_rows || fused.mask_rows == 1));""")
rep("""            prefetch_held_masks();
            keep.apply<kMaskBatch>(v, static_cast<int>(n), shift, first, threads, end);
            A m = csm::chunks_max<A>(v);""", """            prefetch_held_masks();
            uint2 words[K];
            if (kLeanWords && keep.fetch<V>(words, shift, first + csm::opaque_zero(), threads, end)) {
#pragma unroll
                for (int j = 0; j < K; ++j) keep.select_bytes(v[j], words[j]);
            } else {
                keep.apply<kMaskBatch>(v, static_cast<int>(n), shift, first, threads, end);
            }
            A m = csm::chunks_max<A>(v);""")
open(p, "w").write(s)
