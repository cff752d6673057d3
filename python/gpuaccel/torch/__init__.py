"""The PyTorch face: ``import gpuaccel.torch as torch``.

TensorFlow and PyTorch give some names different meanings (``split(x, 2)`` is two pieces in TF
and pieces of size 2 in torch; ``argmax`` of a matrix is axis 0 in TF and the flattened index in
torch; ``where(c)``, ``equal``, ``transpose``, ``gather``, ``range``...). The top level
``gpuaccel`` is the TensorFlow face, so this module is the one where every name has PyTorch's
meaning. Both faces share one Tensor class, one runtime, devices and memory: a tensor made by
one face is an argument to the other. Only PyTorch's names are here; a TensorFlow name asked of
this face says which import has it.
"""
import sys as _sys

from .. import _unsupported
from .. import cuda, random, version  # torch.cuda; torch.random.manual_seed; torch.version.cuda
from . import (autograd, backends, distributed, functional, linalg, multiprocessing, nn, optim,
               profiler, testing, utils)
from . import _cuda_amp, _cuda_nvtx
from .. import _torch_autocast
from .._torch_autocast import autocast, is_autocast_enabled
from ._global_switches import (are_deterministic_algorithms_enabled, get_deterministic_debug_mode,
                               get_float32_matmul_precision, get_num_interop_threads,
                               get_num_threads, is_deterministic_algorithms_warn_only_enabled,
                               set_deterministic_debug_mode, set_float32_matmul_precision,
                               set_num_interop_threads, set_num_threads,
                               use_deterministic_algorithms)
from ._linalg_functions import (cholesky, det, inverse, logdet, matrix_exp, pinverse, qr,  # noqa
                                slogdet, svd)
from .profiler import _autograd_profiler
from ._serialization import load, save
from .._array_ops import (broadcast_to, cat, chunk, clamp, clip, concatenate, flatten, numel,
                          ones_like, reshape, squeeze, stack, tile, unbind, unsqueeze,
                          zeros_like)
from .._creation import (empty, empty_like, eye, full, full_like, linspace, ones, rand, rand_like,
                         randint, randint_like, randn, randn_like, zeros)
from .._placement import device
from .._tensor_print import set_printoptions
from .._torch_memory_format import (channels_last, channels_last_3d, contiguous_format,
                                    memory_format, preserve_format)
from .._torch_generator import Generator, default_generator
from .._tensor import Tensor, arange, from_numpy, no_grad, tensor
from .._torch_ops import (argmax, argmin, enable_grad, equal, gather, is_grad_enabled, is_tensor,
                          log_softmax, max, mean, min, norm, permute, range, set_grad_enabled,
                          softmax, split, std, sum, transpose, var, where)
from ..dtypes import (bfloat16, bool, double, float16, float32, float64, int8,  # noqa: A004
                      int16, int32, int64, short, uint8)
from ..linalg import bmm, einsum, matmul, mm
from ..math import (abs, add, allclose, div, divide, exp, greater, greater_equal, isclose, less,
                    less_equal, log, log1p, logical_and, logical_not, logical_or, maximum,
                    minimum, mul, multiply, negative, not_equal, pow, reciprocal, relu, rsqrt,
                    sigmoid, sign, sqrt, square, sub, subtract, tanh, true_divide)
from ..math import count_nonzero, expm1
from ..math import equal as _elementwise_equal
from .. import _torch_tensor_methods

# torch.name(input, ...) as input.name(...) for the Tensor methods with torch's meaning: these
# replace the TensorFlow-face functions imported above under the same name (torch.div's
# rounding_mode, torch.sub's alpha, torch.tile's leading repeats, integer dtypes...).
for _name in _torch_tensor_methods.FUNCTION_NAMES:
    globals()[_name] = _torch_tensor_methods.function_form(_name)
del _name
from .._torch_functions import (COPY_FORMS, adjoint, argwhere, as_tensor, asarray, atleast_1d,
                                atleast_2d, atleast_3d, block_diag, broadcast_shapes,
                                broadcast_tensors, cartesian_prod, cdist, chain_matmul,
                                column_stack, corrcoef, cov, cross, cumsum, diag_embed, diagflat,
                                diff, dropout, dsplit, dstack, e, get_default_dtype, hsplit, hstack, inf,
                                is_conj, is_neg, is_same_size, is_signed, kron, logspace,
                                matrix_power, meshgrid, nan, nanmean, nonzero, pdist, pi,
                                promote_types, resolve_conj, resolve_neg, result_type, rot90,
                                row_stack, rsub, scalar_tensor, std_mean, tensor_split, tensordot,
                                trapezoid,
                                trapz, tril_indices, triu_indices, var_mean, vsplit, vstack)
from .._torch_functional import (adaptive_avg_pool1d, avg_pool1d, bilinear,
                                 celu, celu_, channel_shuffle, conv1d, conv2d, conv3d,
                                 conv_transpose2d, conv_transpose3d,
                                 cosine_similarity, group_norm, hardshrink, layer_norm,
                                 max_pool1d, max_pool2d, pairwise_distance, pixel_shuffle,
                                 pixel_unshuffle, prelu, relu_, selu, selu_, threshold,
                                 threshold_)

from .._torch_functions import (TYPED_TENSORS, bucketize, get_rng_state, gradient,
                                is_distributed, searchsorted, set_rng_state)
from .._torch_functions import (Size, bartlett_window,
                                bernoulli, blackman_window, can_cast, combinations,
                                cumulative_trapezoid, finfo, hamming_window, hann_window, iinfo,
                                initial_seed, is_inference, is_inference_mode_enabled, isin,
                                kaiser_window, randperm, seed, set_default_dtype, typename, vander)
from .._torch_aten_forms import (alpha_dropout, alpha_dropout_, batch_norm,
                                 binary_cross_entropy_with_logits, constant_pad_nd,
                                 cosine_embedding_loss, dropout_, embedding, feature_dropout,
                                 feature_dropout_, frobenius_norm, hinge_embedding_loss,
                                 instance_norm, kl_div, margin_ranking_loss, native_channel_shuffle,
                                 native_dropout, native_layer_norm, norm_except_dim,
                                 poisson_nll_loss, rrelu, rrelu_, triplet_margin_loss)
from ..dtypes import DType as dtype  # noqa: E402 - isinstance(t.dtype, torch.dtype)

globals().update(COPY_FORMS)
globals().update(TYPED_TENSORS)  # torch.FloatTensor, torch.LongTensor...  # torch.permute_copy(input, dims)...
# torch.abs_(input) and the other in-place functions: input.abs_()
for _name in ("abs_", "acosh_", "addmv_", "arccosh_", "arcsinh_", "arctanh_", "asinh_", "atanh_",
              "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_", "cosh_", "deg2rad_",
              "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "log10_", "log1p_",
              "log2_", "log_", "logit_", "neg_", "negative_", "rad2deg_", "reciprocal_",
              "round_", "rsqrt_", "sigmoid_", "sinh_", "sqrt_", "square_", "tanh_", "trunc_",
              "xlogy_", "zero_", "detach", "clone", "split_with_sizes", "unsafe_chunk",
              "unsafe_split", "unsafe_split_with_sizes", "vdot", "get_device", "detach_"):
    if _name != "detach_":
        globals()[_name] = _torch_tensor_methods.function_form(_name)
del _name

# Modules as `import gpuaccel.torch.cuda` / `.nn.functional` spell them.
_sys.modules[__name__ + ".cuda"] = cuda
_sys.modules[__name__ + ".random"] = random
_sys.modules[__name__ + ".version"] = version
cuda.amp = _cuda_amp  # torch.cuda.amp: autocast and GradScaler
_sys.modules[__name__ + ".cuda.amp"] = _cuda_amp
cuda.nvtx = _cuda_nvtx  # torch.cuda.nvtx: ranges of this face's profiler
_sys.modules[__name__ + ".cuda.nvtx"] = _cuda_nvtx
_sys.modules[__name__ + ".backends.cudnn"] = backends.cudnn
_sys.modules[__name__ + ".backends.cuda"] = backends.cuda
_sys.modules[__name__ + ".nn.init"] = nn.init
# torch.autograd.profiler, PyTorch's older spelling of the profiler (autograd is a module here)
autograd.profiler = _autograd_profiler
_sys.modules[__name__ + ".autograd.profiler"] = _autograd_profiler

# Under torch.cuda.amp.autocast the face's matrix products compute in half precision, as
# F.linear and the convolutions do (_torch_functional): torch.matmul/mm/bmm and the @ operator.
matmul, mm, bmm = map(_torch_autocast.lower_precision, (matmul, mm, bmm))
for _name in ("__matmul__", "__rmatmul__"):
    setattr(Tensor, _name, _torch_autocast.lower_precision(getattr(Tensor, _name)))
del _name
concat = cat  # torch.concat is torch.cat
# torch.eq and friends: element-wise, bool tensors (torch.equal is the one-bool comparison).
eq, ne, gt, ge, lt, le = (_elementwise_equal, not_equal, greater, greater_equal, less,
                          less_equal)
neg = negative
manual_seed = random.manual_seed
inference_mode = no_grad
float = float32  # noqa: A001 - torch's dtype aliases
half = float16
long = int64
int = int32  # noqa: A001

# The TensorFlow face, the top-level gpuaccel module, which imports this one last and then hands
# itself in here (_set_tensorflow_face), so a TensorFlow name asked of this face can say which
# import has it without this module importing gpuaccel back.
_tensorflow_face = None  # (until then no name is TensorFlow's)


def _set_tensorflow_face(module):
    global _tensorflow_face
    _tensorflow_face = module


_TENSORFLOW_ONLY = "{name} is TensorFlow's name, not PyTorch's; it is in the TensorFlow face, " \
                   "\"import gpuaccel as tf\" (both faces share tensors)"


def __getattr__(name):
    if not name.startswith("_") and name not in _REFUSALS and name != "torch" and hasattr(
            _tensorflow_face, name):
        error = AttributeError("torch." + _TENSORFLOW_ONLY.format(name=name))
        error.name, error.obj = name, None
        raise error
    return _REFUSE(name)


_REFUSALS = {
    **_unsupported.SHARED_REFUSALS,
    "normal": "torch.randn(*size) * std + mean",
    "fill": "torch.full_like(input, value) (torch.fill's meaning; tf.fill is gpuaccel.fill)",
}
_REFUSE = _unsupported.module_getattr(__name__, "torch", _REFUSALS)
