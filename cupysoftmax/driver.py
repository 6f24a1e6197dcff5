"""The CUDA driver calls CuPy does not wrap, through ctypes: persisting L2 lines and cluster occupancy."""
from __future__ import annotations

import ctypes
import functools

LIBRARIES = ("libcuda.so.1", "libcuda.so", "nvcuda.dll")
NOT_SUPPORTED = 801  # CUDA_ERROR_NOT_SUPPORTED


@functools.cache
def library():
    """The CUDA driver library, loaded once; OSError naming the names tried if there is none."""
    for name in LIBRARIES:
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    raise OSError(f"no CUDA driver library found (tried {', '.join(LIBRARIES)})")


def reset_persisting_l2() -> None:
    """Return the current context's persisting L2 lines to normal (cuCtxResetPersistingL2Cache).

    RuntimeError with the CUresult if the driver fails, except CUDA_ERROR_NOT_SUPPORTED: GPUs before sm_80
    keep no persisting lines (not seen here: the lent GPUs are sm_90)."""
    result = library().cuCtxResetPersistingL2Cache()
    if result not in (0, NOT_SUPPORTED):
        raise RuntimeError(f"cuCtxResetPersistingL2Cache failed with CUresult {result}")


class _LaunchConfig(ctypes.Structure):  # CUlaunchConfig
    _fields_ = [("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3), ("smem", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.c_void_p), ("num_attrs", ctypes.c_uint)]


def active_clusters(function_ptr: int, cluster: int, block: tuple[int, int], smem: int) -> int:
    """How many clusters of `cluster` blocks of a kernel compiled with that cluster size (__cluster_dims__) the GPU
    holds at once, with blocks of `block` threads and `smem` dynamic shared bytes (cuOccupancyMaxActiveClusters:
    it knows how the GPU groups its SMs, which a per-SM count does not). RuntimeError with the CUresult if the
    driver fails, or if it has no such call."""
    count = ctypes.c_int()
    config = _LaunchConfig((cluster, 1, 1), (block[0], block[1], 1), smem, None, None, 0)
    try:
        query = library().cuOccupancyMaxActiveClusters
    except AttributeError:  # drivers before CUDA 11.8
        raise RuntimeError("the CUDA driver has no cuOccupancyMaxActiveClusters") from None
    result = query(ctypes.byref(count), ctypes.c_void_p(function_ptr), ctypes.byref(config))
    if result != 0:
        raise RuntimeError(f"cuOccupancyMaxActiveClusters failed with CUresult {result}")
    return count.value
