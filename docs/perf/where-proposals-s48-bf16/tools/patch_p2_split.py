# split_row.cu, on top of patch_p1_split: kLeanFold (2-byte folds: select_bytes, each cached chunk read once,
# the mask row without the remainder; the words where apply read them)
import sys
p = sys.argv[1] + "/kernels/split_row.cu"
s = open(p).read()
def rep(old, new):
    global s
    assert old in s, old[:70]
    s = s.replace(old, new, 1)
rep("""        kSm90 && kMaskBatch > 1 && V == 8 && K == 8 && R == 1 && C == 1 && sizeof(Tout) == 2 && !H::keeps && !LOG;
""", """        kSm90 && kMaskBatch > 1 && V == 8 && K == 8 && R == 1 && C == 1 && sizeof(Tout) == 2 && !H::keeps && !LOG;
    // The 2-byte folds, the input's type out (256 and 64 x 50257 float16: few rows, where the mask's
    // instructions a chunk show): kFetchEarly's lean parts without the early words, which held to 64 registers
    // spilled 32-36 bytes there (16 registers of words across the copies, not 8): the words read where apply
    // read them (after the copies, all 8 together as before), select_bytes for them and for the staged bytes,
    // each shared chunk read once, the mask row without the remainder where it may.
    constexpr bool kLeanFold = kSm90 && kMaskBatch > 1 && V == 8 && R > 1 && sizeof(Tout) == 2 && !LOG;
""")
rep("""            fused.row(row, (kFetchEarly || kFetchTogether) && (row < fused.mask_rows || fused.mask_rows == 1));""",
    """            fused.row(row, (kFetchEarly || kFetchTogether || kLeanFold) && (row < fused.mask_rows || fused.mask_rows == 1));""")
rep("""            if constexpr (kFetchTogether) fetched = keep.fetch<V>(words, shift, first + csm::opaque_zero(), threads, end);
""", """            if constexpr (kFetchTogether) fetched = keep.fetch<V>(words, shift, first + csm::opaque_zero(), threads, end);
            if constexpr (kLeanFold) fetched = keep.fetch<V>(words, shift, first, threads, end);
""")
rep("""                if constexpr (kFetchEarly) {""", """                if constexpr (kFetchEarly || kLeanFold) {""")
open(p, "w").write(s)
