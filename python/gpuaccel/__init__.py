"""gpuaccel: a deep-learning runtime for a course on GPU acceleration.

The names mirror ``tf.config`` / ``tf.debugging`` / ``tf.device`` and ``torch.cuda`` so course
code runs with only its import changed::

    import gpuaccel as tf          # the TensorFlow face
    import gpuaccel.torch as torch # the PyTorch face (same tensors, devices and memory)
    tf.config.list_physical_devices('GPU')
    dev = 'cuda' if torch.cuda.is_available() else 'cpu'

Importing never needs CUDA: the CUDA backend is a separate library loaded only when a GPU is
looked for, and ``gpuaccel.cuda.diagnose()`` says why there is none.
"""
import sys as _sys

from ._openmp_env import apply_default_wait_policy as _apply_default_wait_policy

_apply_default_wait_policy()  # before _C loads OpenMP (see _openmp_env)
from . import _C  # noqa: E402
from . import _binding_errors  # noqa: E402
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
from ._tensor import GradientTape, Tensor, Variable, arange, from_numpy, no_grad, tensor
from . import _tensor_methods
from . import _torch_tensor_methods
from . import random
from . import math
from . import linalg
from . import image
from . import io
from . import audio
from . import bitwise
from . import nn
from ._convert import convert_to_tensor
from ._python_function import custom_gradient
from ._creation import (empty, empty_like, eye, full, full_like, linspace, ones, rand, rand_like,
                        randint, randint_like, randn, randn_like, zeros)
from ._array_ops import (broadcast_to, cast, cat, chunk, clamp, clip, clip_by_value, concat,
                         concatenate, expand_dims, fill, flatten, gather, identity, numel,
                         one_hot, ones_like, pad, rank, reshape, shape, size, split, squeeze,
                         stack, tile, transpose, unbind, unsqueeze, unstack, where, zeros_like)
from .math import (abs, add, add_n, allclose, argmax, argmin, div, divide, equal, exp,  # noqa: A004
                   greater, greater_equal, is_nan, isclose, less, less_equal, log, log1p,
                   logical_and, logical_not, logical_or, maximum, minimum, mul, multiply,
                   negative, not_equal, pow, reciprocal, reduce_all, reduce_any,
                   reduce_logsumexp, reduce_max, reduce_mean, reduce_min, reduce_prod,
                   reduce_std, reduce_sum, reduce_variance, relu, rsqrt, sigmoid, sign, sqrt,
                   square, squared_difference, sub, subtract, tanh, true_divide, truediv)
from .math import (acosh, asinh, atanh, cosh, cumsum, floor, round, scalar_mul,  # noqa: A004
                   sinh, truncatediv, truncatemod)
from .math import acos, asin, atan, atan2, cos, sin, tan
from ._tf_array_ops import (identity_n, meshgrid, repeat, reverse, roll, sequence_mask,  # noqa
                            gather_nd, histogram_fixed_width, histogram_fixed_width_bins,
                            reverse_sequence, searchsorted, shape_n, slice, unravel_index)
from ._array_ops import saturate_cast
from ._tf_array_ops import bitcast, constant, tf_range
from ._tf_conv_backprop import conv2d_backprop_filter_v2, conv2d_backprop_input_v2
from ._tf_tensor_array import TensorArray
from ._tensor_shape import TensorShape
from ._tf_clipping import clip_by_global_norm, clip_by_norm
from ._tf_index_ops import (boolean_mask, dynamic_partition, dynamic_stitch, scatter_nd,
                            strided_slice,
                            tensor_scatter_nd_add, tensor_scatter_nd_max, tensor_scatter_nd_min,
                            tensor_scatter_nd_sub, tensor_scatter_nd_update, unique,
                            unique_with_counts)
from ._tf_enums import VariableAggregation, VariableSynchronization
from ._tf_asserts import (Assert, assert_equal, assert_greater, assert_less, assert_rank,
                          broadcast_dynamic_shape, broadcast_static_shape, ensure_shape)
from ._tf_control_flow import (case, cond, foldl, foldr, get_current_name_scope,
                               grad_pass_through, group, inside_function, is_symbolic_tensor,
                               map_fn, name_scope, no_op, recompute_grad, scan, switch_case,
                               vectorized_map, while_loop)
from ._tf_control_flow import tuple_ as tuple  # noqa: A004 - tf.tuple
from . import nest
from ._tf_sort import argsort, sort
from ._tf_space_batch import (batch_to_space, required_space_to_batch_paddings, space_to_batch,
                              space_to_batch_nd)
from .linalg import bmm, einsum, matmul, mm, norm, tensordot
from ._tensor_spec import TensorSpec
from ._function import function, print_ as print  # noqa: A004 - tf.print
from ._py_function import numpy_function, py_function
from ._torch_ops import (enable_grad, executing_eagerly, is_grad_enabled, is_tensor,
                         log_softmax, max, mean, min, permute, set_grad_enabled, softmax, std,
                         stop_gradient, sum, var)
from . import bench
from . import data
from . import keras
from . import distribute
from . import train
from . import saved_model
from . import summary
from .keras import mixed_precision
# tf.losses, tf.metrics, tf.optimizers and tf.initializers are Keras's modules themselves in
# TF 2.21 (tf.losses.MeanSquaredError is keras.losses.MeanSquaredError); so here.
from .keras import initializers, losses, metrics, optimizers
from .keras.initializers import (Constant as constant_initializer, Ones as ones_initializer,
                                 RandomNormal as random_normal_initializer,
                                 RandomUniform as random_uniform_initializer,
                                 Zeros as zeros_initializer)
from .dtypes import (DType, as_dtype, bfloat16, double, float16, float32, float64, int8, int16,
                     int32, int64, string, uint8)
from .dtypes import bool  # noqa: A004  (torch.bool / tf.bool)
from . import _unsupported
from ._tf_module import Module  # noqa: E402 (needs keras's snake_case, imported above)

__version__ = version.gpuaccel

__all__ = [
    "config", "debugging", "errors", "dtypes", "memory", "cuda", "version", "utils", "device",
    "DType", "as_dtype", "float32", "float16", "bfloat16", "float64", "double", "int8", "int16",
    "int32", "int64", "uint8", "bool", "timestamp",
    "__version__", "Tensor", "tensor", "from_numpy", "zeros", "ones", "full", "arange", "rand",
    "randn", "zeros_like", "ones_like", "matmul", "no_grad", "GradientTape", "Variable", "random",
    "custom_gradient",
    "math", "nn", "bench", "constant", "manual_seed", "newaxis", "data", "keras", "bitwise",
    "distribute",
]

newaxis = None  # tf.newaxis / np.newaxis: x[..., tf.newaxis] in the course's MNIST code
manual_seed = random.set_seed  # torch.manual_seed
range = tf_range  # noqa: A001 - tf.range(start, limit, delta)
inference_mode = no_grad  # torch.inference_mode()
realdiv = divide  # tf.realdiv: floats only in TF, where it is tf.divide


approx_top_k = nn.approx_top_k


def timestamp():
    """``tf.timestamp()``: the seconds since the epoch as a float64 scalar (TF's dtype)."""
    import time
    return tensor(time.time(), dtype=float64)


def get_logger():
    """``tf.get_logger``: a Python ``logging.Logger`` (named 'gpuaccel'; TF's is named
    'tensorflow'), for code that sets its level or logs its own messages through it."""
    import logging
    return logging.getLogger("gpuaccel")
# torch's dtype aliases (one DType object answers TF's, torch's and NumPy's questions).
float = float32  # noqa: A001
half = float16
long = int64
int = int32  # noqa: A001
_tensor_methods.install()
_torch_tensor_methods.install()  # after: torch's meanings win where both define a name

__all__ += [
    "convert_to_tensor", "empty", "empty_like", "eye", "full_like", "linspace", "rand_like",
    "randint", "randint_like", "randn_like", "broadcast_to", "cast", "cat", "chunk", "clamp",
    "clip", "clip_by_value", "concat", "concatenate", "expand_dims", "fill", "flatten", "gather",
    "identity", "numel", "one_hot", "pad", "rank", "reshape", "shape", "size", "split", "squeeze",
    "stack", "tile", "transpose", "unbind", "unsqueeze", "unstack", "where", "abs", "add",
    "add_n", "allclose", "argmax", "argmin", "divide", "equal", "exp", "greater",
    "greater_equal", "is_nan", "isclose", "less", "less_equal", "log", "log1p", "logical_and",
    "logical_not", "logical_or", "maximum", "minimum", "multiply", "negative", "not_equal", "pow",
    "reciprocal", "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean",
    "reduce_min", "reduce_prod", "reduce_std", "reduce_sum", "reduce_variance", "relu", "rsqrt",
    "sigmoid", "sign", "sqrt", "square", "squared_difference", "subtract", "tanh", "truediv",
    "bmm", "einsum", "mm", "tensordot", "function", "print", "enable_grad", "executing_eagerly",
    "is_grad_enabled", "is_tensor", "log_softmax", "max", "mean", "min", "permute",
    "set_grad_enabled", "softmax", "std", "stop_gradient", "sum", "var", "linalg", "image",
    "range", "float", "half", "long", "int", "TensorSpec", "mul", "sub", "div", "true_divide",
    "inference_mode", "acosh", "asinh", "atanh", "cosh", "cumsum", "floor", "round",
    "scalar_mul", "sinh", "meshgrid", "repeat", "reverse", "roll", "identity_n",
    "sequence_mask", "shape_n", "slice", "unravel_index", "clip_by_norm",
    "clip_by_global_norm", "norm", "realdiv", "truncatediv", "truncatemod", "gather_nd",
    "ones_initializer", "zeros_initializer", "constant_initializer",
    "random_normal_initializer", "random_uniform_initializer", "batch_to_space",
    "space_to_batch", "space_to_batch_nd", "sort", "argsort", "acos", "asin", "atan", "atan2",
    "cos", "sin", "tan", "histogram_fixed_width", "histogram_fixed_width_bins",
    "reverse_sequence", "searchsorted", "saturate_cast", "dynamic_partition", "dynamic_stitch",
    "strided_slice", "tensor_scatter_nd_add", "tensor_scatter_nd_max", "tensor_scatter_nd_min",
    "tensor_scatter_nd_sub", "tensor_scatter_nd_update", "unique", "unique_with_counts",
    "scatter_nd", "boolean_mask",
    "assert_equal", "assert_greater", "assert_less", "assert_rank", "broadcast_dynamic_shape",
    "broadcast_static_shape", "ensure_shape", "case", "cond", "foldl", "foldr",
    "get_current_name_scope", "grad_pass_through", "group", "inside_function",
    "is_symbolic_tensor", "name_scope", "no_op", "recompute_grad", "scan", "switch_case",
    "while_loop", "tuple", "nest", "Assert", "VariableAggregation", "VariableSynchronization",
    "get_logger", "bitcast", "conv2d_backprop_filter_v2", "conv2d_backprop_input_v2",
    "TensorArray", "required_space_to_batch_paddings", "approx_top_k", "initializers", "losses",
    "metrics", "optimizers", "io", "audio", "py_function", "numpy_function",
]

__getattr__ = _unsupported.module_getattr(__name__, "gpuaccel", _unsupported.SHARED_REFUSALS)

# The PyTorch face, `import gpuaccel.torch as torch`; last, as it is assembled from the names above.
from . import torch  # noqa: E402
# It says which import has a TensorFlow name asked of it by looking the name up in this module.
torch._set_tensorflow_face(_sys.modules[__name__])
