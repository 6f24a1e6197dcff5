"""Made-up device descriptions for planner tests on the CPU."""
from cupysoftmax.device import DeviceFacts

# The H100 SXM the project measures on (values read on the lent machine, DESIGN.md).
H100 = DeviceFacts(
    name="NVIDIA H100 80GB HBM3", compute_capability=(9, 0), sms=132,
    max_threads_per_block=1024, max_threads_per_sm=2048, max_blocks_per_sm=32,
    regs_per_block=65536, regs_per_sm=65536,
    smem_per_block=49152, smem_per_block_optin=232448, smem_per_sm=233472, smem_reserved_per_block=1024,
    l2_bytes=50 * 2**20,
)

# A smaller GPU (T4-like, sm_75): 40 SMs, 64 KB of shared memory per block at most.
SMALL = DeviceFacts(
    name="small GPU", compute_capability=(7, 5), sms=40,
    max_threads_per_block=1024, max_threads_per_sm=1024, max_blocks_per_sm=16,
    regs_per_block=65536, regs_per_sm=65536,
    smem_per_block=49152, smem_per_block_optin=65536, smem_per_sm=65536, smem_reserved_per_block=0,
    l2_bytes=4 * 2**20,
)
