"""Facts about a CUDA device that launch planning needs, read once and cached."""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .errors import NoDevice


@dataclass(frozen=True)
class DeviceFacts:
    name: str
    compute_capability: tuple[int, int]
    sms: int
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    regs_per_block: int
    regs_per_sm: int
    smem_per_block: int  # dynamic shared memory a block gets without opting in
    smem_per_block_optin: int  # ... and after raising max_dynamic_shared_size_bytes
    smem_per_sm: int
    smem_reserved_per_block: int  # the driver's own share of each block's shared memory
    l2_bytes: int


# cudaDeviceAttr values (CUDA runtime API, stable across releases)
_ATTRS = {
    "max_threads_per_block": 1,
    "smem_per_block": 8,
    "regs_per_block": 12,
    "sms": 16,
    "l2_bytes": 38,
    "max_threads_per_sm": 39,
    "cc_major": 75,
    "cc_minor": 76,
    "smem_per_sm": 81,
    "regs_per_sm": 82,
    "smem_per_block_optin": 97,
    "max_blocks_per_sm": 106,
    "smem_reserved_per_block": 111,
}


def count() -> int:
    """How many CUDA devices are visible; 0 when CuPy, the driver or a device is missing."""
    try:
        import cupy

        return cupy.cuda.runtime.getDeviceCount()
    except Exception:  # ImportError, CUDARuntimeError (no driver / no device), ...
        return 0


def require() -> None:
    """NoDevice with a one-line reason unless a CUDA device is visible."""
    try:
        import cupy  # noqa: F401
    except ImportError as exc:
        raise NoDevice(f"CuPy is not installed ({exc}); install cupysoftmax[cuda12] or [cuda13]") from None
    if count() == 0:
        raise NoDevice("no CUDA device is visible")


@functools.lru_cache(maxsize=None)
def facts(device_id: int) -> DeviceFacts:
    """The facts of device `device_id`, read from the CUDA runtime once."""
    import cupy

    runtime = cupy.cuda.runtime
    a = {key: runtime.deviceGetAttribute(attr, device_id) for key, attr in _ATTRS.items()}
    name = runtime.getDeviceProperties(device_id)["name"]
    return DeviceFacts(
        name=name.decode() if isinstance(name, bytes) else str(name),
        compute_capability=(a.pop("cc_major"), a.pop("cc_minor")),
        **a,
    )
