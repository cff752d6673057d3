"""gpuaccel: a deep-learning runtime for a course on GPU acceleration.

The names mirror ``tf.config`` / ``tf.debugging`` / ``tf.device`` and ``torch.cuda`` so course
code runs with only its import changed::

    import gpuaccel as tf          # or: import gpuaccel as torch
    tf.config.list_physical_devices('GPU')
    dev = 'cuda' if torch.cuda.is_available() else 'cpu'

Importing never needs CUDA: the CUDA backend is a separate library loaded only when a GPU is
looked for, and ``gpuaccel.cuda.diagnose()`` says why there is none.
"""
from . import _C
from . import _binding_errors
_binding_errors.install(_C)  # before any face binds _C's functions: no pybind11 text leaks
from . import errors
from . import config
from . import debugging
from . import dtypes
from . import memory
from . import cuda
from . import version
from . import utils
from ._placement import device
from ._tensor import (GradientTape, Tensor, Variable, arange, from_numpy, full, matmul, no_grad,
                      ones, ones_like, rand, randn, tensor, zeros, zeros_like)
from . import random
from . import math
from . import nn
from . import bench
from . import data
from . import keras
from .keras import mixed_precision
from .dtypes import DType, as_dtype, bfloat16, float16, float32, int32, int64, uint8
from .dtypes import bool  # noqa: A004  (torch.bool / tf.bool)

__version__ = version.gpuaccel

__all__ = [
    "config", "debugging", "errors", "dtypes", "memory", "cuda", "version", "utils", "device",
    "DType", "as_dtype", "float32", "float16", "bfloat16", "int32", "int64", "uint8", "bool",
    "__version__", "Tensor", "tensor", "from_numpy", "zeros", "ones", "full", "arange", "rand",
    "randn", "zeros_like", "ones_like", "matmul", "no_grad", "GradientTape", "Variable", "random",
    "math", "nn", "bench", "constant", "manual_seed", "newaxis", "data", "keras",
]

constant = tensor  # tf.constant
newaxis = None  # tf.newaxis / np.newaxis: x[..., tf.newaxis] in the course's MNIST code
manual_seed = random.set_seed  # torch.manual_seed
