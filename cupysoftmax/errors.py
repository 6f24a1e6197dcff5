"""Exceptions cupysoftmax raises on purpose."""


class UnsuitableVariant(ValueError):
    """The variant asked for cannot serve this shape or dtype; the message says why and which can."""


class NoDevice(RuntimeError):
    """No CUDA device is visible (or CuPy is not installed)."""
