"""cupysoftmax: softmax and log_softmax (and their gradients) for CuPy arrays, from the naive port to speed of light.

Importing needs no GPU (and not even CuPy): the GPU is touched on the first call.
"""
from . import reference
from .api import log_softmax, softmax
from .errors import NoDevice, UnsuitableVariant
from .gradients import log_softmax_backward, softmax_backward
from .variants import VARIANTS

__version__ = "0.1.0"
__all__ = ["softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "reference", "VARIANTS", "UnsuitableVariant", "NoDevice", "__version__"]
