"""``torch.nn`` of the PyTorch face: ``functional`` (``import gpuaccel.torch.nn.functional as F``,
NCHW images and torch's argument names). ``gpuaccel.nn`` is TensorFlow's ``tf.nn`` (NHWC), so the
PyTorch face needs its own; torch.nn's modules are refused with what to use instead.
"""
import sys as _sys

from .. import _torch_functional as functional
from .. import _unsupported
from ..nn import TORCH_NN_MODULE_REFUSALS

# `import gpuaccel.torch.nn.functional as F` finds the module without nn being a package.
_sys.modules[__name__ + ".functional"] = functional

__all__ = ["functional"]

__getattr__ = _unsupported.module_getattr(__name__, "torch.nn", TORCH_NN_MODULE_REFUSALS)
