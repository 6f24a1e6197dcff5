# split_row.cu: kFetchTogether (2-byte, K = 8, R = 1, one block, one pass)
import sys
p = sys.argv[1] + "/kernels/split_row.cu"
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, old[:60]
    s = s.replace(old, new, 1)
rep("""    constexpr bool kFetchEarly = kMaskBatch > 1 && V == 4 && R > 1;
""", """    constexpr bool kFetchEarly = kMaskBatch > 1 && V == 4 && R > 1;
    // The one-block 2-byte kernel at K = 8 that folds in one pass, the input's type out (2048 x 32768 bfloat16:
    // a block of 512 a row, no shared-memory part): the 8 words read together where apply read them, from a
    // chunk index ptxas cannot merge with the writes' (csm::opaque_zero). ptxas held the writes' 6 indices from
    // the words' loads on, was short of the 2 registers of an 8th word in flight and issued it after the first
    // select: a latency of its own a row (at the head's 56 registers 6 before and 2 after; ncu, H100,
    // docs/perf/where-held-words-h100.txt). Then all 8 leave together (56 registers, sm_90, NVRTC 13.5), the L2
    // prefetches of prefetch_held_masks are left out, select_bytes selects (14 instructions a chunk, not 16) and
    // the mask row skips the 64-bit remainder where it may (as kFetchEarly's).
    // sm_90 only: for sm_80 (not measured) it took those kernels from 64 registers to 66, past what a block of
    // 1024 threads (1024 x 65536 bfloat16 with where=) may take (NVRTC 13.5).
#if __CUDA_ARCH__ >= 900
    constexpr bool kSm90 = true;
#else
    constexpr bool kSm90 = false;
#endif
    constexpr bool kFetchTogether =
        kSm90 && kMaskBatch > 1 && V == 8 && K == 8 && R == 1 && C == 1 && sizeof(Tout) == 2 && !H::keeps && !LOG;
""")
rep("""        const csm::RowMask keep = fused.row(row, kFetchEarly && (row < fused.mask_rows || fused.mask_rows == 1));""",
    """        const csm::RowMask keep =
            fused.row(row, (kFetchEarly || kFetchTogether) && (row < fused.mask_rows || fused.mask_rows == 1));""")
rep("""            if constexpr (V == 8 && K == 8 && R == 1 && C == 1) {""",
    """            if constexpr (V == 8 && K == 8 && R == 1 && C == 1 && !kFetchTogether) {""")
rep("""            const bool fetched = kFetchEarly && keep.fetch<V>(words, shift, first_in, threads, end);
            for (int j = 0; j < smem_chunks; ++j) {
                copy_cached(j);
                csm::copies_grouped();
            }
""", """            bool fetched = kFetchEarly && keep.fetch<V>(words, shift, first_in, threads, end);
            for (int j = 0; j < smem_chunks; ++j) {
                copy_cached(j);
                csm::copies_grouped();
            }
            if constexpr (kFetchTogether) fetched = keep.fetch<V>(words, shift, first + csm::opaque_zero(), threads, end);
""")
open(p, "w").write(s)
