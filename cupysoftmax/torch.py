"""cupysoftmax for torch CUDA tensors, with gradients: softmax(x, dim) and log_softmax(x, dim).

`import cupysoftmax.torch` needs torch (nothing else in the package imports
it). Each function is a torch.autograd.Function: the forward runs cupysoftmax's
softmax or log_softmax, the backward its fused gradient kernel on the saved
output. Tensors cross to CuPy and back through DLPack, without copies, and
the kernels run on torch's current stream of the tensor's device, so they
order with the rest of the torch program as torch's own kernels do.
"""
from __future__ import annotations

try:
    import torch
except ImportError as exc:  # a clear message instead of a bare ModuleNotFoundError deep in a traceback
    raise ImportError(f"cupysoftmax.torch needs PyTorch ({exc}); cupysoftmax itself works without it") from None

from . import api, gradients


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.softmax(x, dim) by cupysoftmax; differentiable (the gradient is cupysoftmax's softmax_backward)."""
    return _Softmax.apply(x, dim)


def log_softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """torch.log_softmax(x, dim) by cupysoftmax; differentiable (log_softmax_backward)."""
    return _LogSoftmax.apply(x, dim)


def _on_torch_stream(fn, *tensors):
    """fn(*CuPy views of tensors) on torch's current stream of their device, as a torch tensor."""
    import cupy

    if not all(t.is_cuda for t in tensors):
        raise TypeError("cupysoftmax.torch works on CUDA tensors; got a tensor on "
                        f"{next(t.device for t in tensors if not t.is_cuda)}")
    device = tensors[0].device
    with cupy.cuda.Device(device.index), _as_cupy_stream(torch.cuda.current_stream(device)):
        return torch.from_dlpack(fn(*(cupy.from_dlpack(t.detach()) for t in tensors)))


def _as_cupy_stream(stream):
    """A torch stream as a CuPy one: through the CUDA stream protocol where torch's stream has it (CuPy 14
    deprecates ExternalStream for it), else through its handle."""
    import cupy

    if hasattr(stream, "__cuda_stream__"):
        return cupy.cuda.Stream.from_external(stream)
    return cupy.cuda.ExternalStream(stream.cuda_stream, stream.device.index)


def _differentiable(forward, backward, name):
    """A torch.autograd.Function whose forward is forward(x, axis=dim) and backward backward(y, dy, axis=dim)."""

    def forward_(ctx, x, dim):
        y = _on_torch_stream(lambda a: forward(a, axis=dim), x)
        ctx.save_for_backward(y)
        ctx.dim = dim
        return y

    @torch.autograd.function.once_differentiable  # no graph through the gradient kernel: a second derivative raises
    def backward_(ctx, dy):
        (y,) = ctx.saved_tensors
        return _on_torch_stream(lambda a, b: backward(a, b, axis=ctx.dim), y, dy), None

    return type(name, (torch.autograd.Function,), {"forward": staticmethod(forward_), "backward": staticmethod(backward_)})


_Softmax = _differentiable(api.softmax, gradients.softmax_backward, "Softmax")
_LogSoftmax = _differentiable(api.log_softmax, gradients.log_softmax_backward, "LogSoftmax")
