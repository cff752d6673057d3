"""``tf.nn`` names (and a few ``torch.nn.functional`` ones) for the neural-network ops.

Images are NHWC and convolution kernels (height, width, in_channels, filters), as in Keras.
Every op here records its gradient and accepts NumPy arrays, lists and numbers where a tensor
goes. ``gpuaccel.nn.functional`` is ``torch.nn.functional`` (NCHW, torch's argument names).
"""
import math as _pymath
import numbers
import sys

from . import _C, errors  # noqa: F401
from . import _conv3d
from . import _torch_functional as functional
from . import _unsupported
from . import math as _math
from ._array_ops import (concat as _concat, pad as _pad, reshape as _reshape,
                         squeeze as _squeeze, transpose as _transpose, where as _where,
                         zeros_like as _zeros_like)
from ._convert import as_tensors, convert_to_tensor
from ._tf_candidate_sampling import (all_candidate_sampler, compute_accidental_hits,  # noqa
                                     fixed_unigram_candidate_sampler, sampled_logits)
from ._tf_ctc_labels import collapse_repeated, ctc_unique_labels  # noqa: F401
from ._tf_isotonic import isotonic_regression  # noqa: F401
from ._tf_nn_window_ops import dilation2d, erosion2d, max_pool_with_argmax  # noqa: F401
from ._tf_space_batch import space_to_batch
from ._tf_sort import top_k
from ._int_range import check_int
from ._promotion import as_operands, as_tensor
from ._tensor import Tensor, tensor

_PI = _pymath.pi

# `import gpuaccel.nn.functional as F` (torch's spelling) finds the module without nn being a
# package.
sys.modules[__name__ + ".functional"] = functional

__all__ = ["conv2d", "conv2d_transpose", "max_pool2d", "avg_pool2d", "relu", "sigmoid", "tanh",
           "gelu", "softmax", "log_softmax", "dropout", "batch_normalization",
           "keras_batch_normalization",
           "layer_normalization", "embedding_lookup", "scaled_dot_product_attention",
           "sparse_softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
           "mean_squared_error", "one_hot", "functional", "leaky_relu", "relu6", "elu", "silu",
           "swish", "softplus", "log_sigmoid", "sigmoid_cross_entropy_with_logits", "l2_loss",
           "moments", "bias_add", "max_pool", "avg_pool", "selu", "crelu", "softsign",
           "l2_normalize", "zero_fraction", "in_top_k", "conv1d", "depthwise_conv2d",
           "separable_conv2d", "space_to_depth", "depth_to_space",
           "weighted_cross_entropy_with_logits", "log_poisson_loss", "sufficient_statistics",
           "normalize_moments", "compute_average_loss", "scale_regularization_loss",
           "max_pool1d", "avg_pool1d", "pool", "convolution", "atrous_conv2d",
           "weighted_moments", "space_to_batch", "top_k", "local_response_normalization",
           "lrn", "conv1d_transpose", "conv_transpose", "batch_norm_with_global_normalization",
           "atrous_conv2d_transpose", "approx_max_k", "approx_min_k", "dilation2d", "erosion2d",
           "max_pool_with_argmax", "collapse_repeated", "ctc_unique_labels",
           "all_candidate_sampler", "compute_accidental_hits", "fixed_unigram_candidate_sampler",
           "nce_loss", "sampled_softmax_loss", "isotonic_regression", "conv3d",
           "conv3d_transpose"]


def _int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int or a list of ints, got "
                        f"{type(value).__name__} {value!r}")
    return int(value)


def _pair(value, name):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value), int(value)
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{name} must be an int or a list of 1, 2 or 4 ints, got "
                        f"{type(value).__name__} {value!r}")
    values = [_int(v, name) for v in value]
    if len(values) == 4:  # TF's [1, sh, sw, 1]
        if values[0] != 1 or values[3] != 1:
            raise ValueError(f"{name} over the batch or channel axis must be 1, got {values}")
        return values[1], values[2]
    if len(values) == 2:
        return values[0], values[1]
    if len(values) == 1:
        return values[0], values[0]
    raise ValueError(f"{name} must be an int or a list of 1, 2 or 4 ints, got {value!r}")


def _rate(value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"[Dropout] rate must be a float in [0, 1), got "
                        f"{type(value).__name__} {value!r}")
    if not 0.0 <= float(value) < 1.0:  # TensorFlow's words
        raise ValueError(f"[Dropout] rate must be a scalar tensor or a float in the range [0, 1), "
                         f"got {value}")
    return float(value)


def _padding(padding):
    if not isinstance(padding, str):
        raise ValueError(f"padding must be 'VALID' or 'SAME', got {padding!r}")
    return padding


def conv2d(input, filters, strides=1, padding="VALID", dilations=1, bias=None, groups=1):
    """``tf.nn.conv2d``: input (N, H, W, C), filters (KH, KW, C / groups, F). ``groups`` (not
    TF's) is the grouped convolution: filters F / groups * g onwards read channels
    C / groups * g onwards only."""
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilations, "dilations")
    input, filters = as_tensors(input, filters)
    bias = None if bias is None else as_tensors(input, bias)[1]
    return _C.conv2d(input, filters, bias, sh, sw, _padding(padding), dh, dw, "linear",
                     _int(groups, "groups"))


def _step_1d(value, name):
    """TF's 1-D stride, dilation or window: an int or a list of 1 or 3 ints ([1, s, 1])."""
    if isinstance(value, (list, tuple)) and len(value) == 3:
        if _int(value[0], name) != 1 or _int(value[2], name) != 1:
            raise ValueError(f"{name} over the batch or channel axis must be 1, got {list(value)}")
        return _int(value[1], name)
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return _int(value[0], name)
    return _int(value, name)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None, name=None):
    """``tf.nn.conv1d``: input (N, W, C), filters (KW, C, F); the 2-D convolution of an
    (N, 1, W, C) view with a (1, KW, C, F) kernel, as TensorFlow computes it."""
    if data_format not in ("NWC", None):
        raise ValueError(f"conv1d supports data_format='NWC' only, got {data_format!r}")
    step = _step_1d(stride, "stride")
    dilation = _step_1d(1 if dilations is None else dilations, "dilations")
    input, filters = as_tensors(input, filters)
    if input.ndim != 3 or filters.ndim != 3:
        raise ValueError(f"conv1d needs input (batch, width, channels) and filters (width, "
                         f"in_channels, out_channels), got shapes {tuple(input.shape)} and "
                         f"{tuple(filters.shape)}")
    out = conv2d(_C.reshape(input, [input.shape[0], 1, *input.shape[1:]]),
                 _C.reshape(filters, [1, *filters.shape]), [1, step], padding, [1, dilation])
    return _C.reshape(out, [out.shape[0], *out.shape[2:]])


def _steps_3d(value, name):
    """TF's 3-D strides or dilations: a list of 5 ints with 1 over the batch and channels."""
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"Expected list for '{name}' argument to 'conv3d' Op, not {value!r}.")
    if len(value) != 5:
        raise errors.InvalidArgumentError(
            f"Length for attr '{name}' of {len(value)} must be at least minimum 5")
    steps = [_int(v, name) for v in value]
    if steps[0] != 1 or steps[4] != 1:
        raise errors.UnimplementedError(
            f"Current implementation does not yet support {name} in the batch and depth "
            f"dimensions, got {steps}")
    return steps[1:4]


def _ndhwc(data_format, op):
    if data_format not in ("NDHWC", None):
        raise ValueError(f"{op} supports data_format='NDHWC' only, got {data_format!r}")


def conv3d(input, filters, strides, padding, data_format="NDHWC", dilations=None, name=None):
    """``tf.nn.conv3d``: input (N, D, H, W, C), filters (KD, KH, KW, C, F), strides and
    dilations lists of 5 (1 over the batch and channels); see _conv3d for how it is computed."""
    _ndhwc(data_format, "conv3d")
    steps = _steps_3d(strides, "strides")
    dilation = [1, 1, 1] if dilations is None else _steps_3d(dilations, "dilations")
    input, filters = as_tensors(input, filters)
    if input.ndim != 5 or filters.ndim != 5 or filters.shape[3] != input.shape[4]:
        raise errors.InvalidArgumentError(
            f"conv3d needs input (N, D, H, W, C) and filters (KD, KH, KW, C, F) with the same "
            f"C (input and filter must have the same depth), got shapes {tuple(input.shape)} "
            f"and {tuple(filters.shape)}")
    pads = _conv3d.padding_pairs(_padding(padding), input.shape[1:4], filters.shape[:3], steps,
                                 dilation)
    return _conv3d.conv3d(input, filters, None, steps, pads, dilation)


def conv3d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NDHWC",
                     dilations=None, name=None):
    """``tf.nn.conv3d_transpose``: input (N, D, H, W, C), filters (KD, KH, KW, F, C),
    output_shape (N, OD, OH, OW, F); the gradient of ``conv3d`` of an output_shape tensor."""
    _ndhwc(data_format, "conv3d_transpose")
    steps = _steps_3d(strides, "strides")
    dilation = [1, 1, 1] if dilations is None else _steps_3d(dilations, "dilations")
    input, filters = as_tensors(input, filters)
    shape = [_int(v, "output_shape") for v in
             (output_shape.numpy().tolist() if isinstance(output_shape, Tensor) else output_shape)]
    if (input.ndim != 5 or filters.ndim != 5 or len(shape) != 5 or shape[0] != input.shape[0]
            or shape[4] != filters.shape[3] or filters.shape[4] != input.shape[4]):
        raise ValueError(f"conv3d_transpose needs input (N, D, H, W, C), filters (KD, KH, KW, "
                         f"F, C) with the input's C and an output_shape (N, OD, OH, OW, F) with "
                         f"the input's N and the filters' F, got shapes {tuple(input.shape)}, "
                         f"{tuple(filters.shape)} and {shape}")
    pads = _conv3d.padding_pairs(_padding(padding), shape[1:4], filters.shape[:3], steps,
                                 dilation)
    return _conv3d.conv3d_transpose(input, filters, None, shape[1:4], steps, pads, dilation)


def convolution(input, filters, strides=None, padding="VALID", data_format=None, dilations=None,
                name=None):
    """``tf.nn.convolution``: conv1d for (N, W, C) input, conv2d for (N, H, W, C), conv3d for
    (N, D, H, W, C)."""
    rank = convert_to_tensor(input).ndim
    if rank == 3:
        return conv1d(input, filters, 1 if strides is None else strides, padding, data_format,
                      dilations)
    if rank == 4:
        if data_format not in ("NHWC", None):
            raise ValueError(f"convolution supports data_format='NHWC' only, got "
                             f"{data_format!r}")
        return conv2d(input, filters, 1 if strides is None else strides, padding,
                      1 if dilations is None else dilations)
    if rank == 5:
        return conv3d(input, filters, [1, *([1] * 3 if strides is None else _triple(strides)), 1],
                      padding, data_format or "NDHWC",
                      None if dilations is None else [1, *_triple(dilations), 1])
    raise ValueError(f"convolution supports (N, W, C), (N, H, W, C) and (N, D, H, W, C) input, "
                     f"got rank {rank}")


def _triple(value):
    """tf.nn.convolution's 3-D strides or dilations: an int or 3 ints (or TF's 5)."""
    if isinstance(value, numbers.Integral):
        return [value] * 3
    value = list(value)
    return value[1:4] if len(value) == 5 else value


def atrous_conv2d(value, filters, rate, padding, name=None):
    """``tf.nn.atrous_conv2d``: conv2d with the filters dilated by ``rate``."""
    return conv2d(value, filters, 1, padding, _int(rate, "rate"))


def depthwise_conv2d(input, filter, strides, padding, data_format=None, dilations=None,
                     name=None):
    """``tf.nn.depthwise_conv2d``: input (N, H, W, C), filter (KH, KW, C, M); output channel
    c * M + m is input channel c convolved with filter[:, :, c, m]: one grouped conv2d with
    groups=C, whose (KH, KW, 1, C * M) kernel is the filter's own memory."""
    if data_format not in ("NHWC", None):
        raise ValueError(f"depthwise_conv2d supports data_format='NHWC' only, got "
                         f"{data_format!r}")
    input, filter = as_tensors(input, filter)
    if input.ndim != 4 or filter.ndim != 4 or filter.shape[2] != input.shape[3]:
        raise ValueError(f"depthwise_conv2d needs input (N, H, W, C) and filter (KH, KW, C, "
                         f"multiplier) with the same C, got shapes {tuple(input.shape)} and "
                         f"{tuple(filter.shape)}")
    dilations = 1 if dilations is None else dilations
    kh, kw, channels, multiplier = filter.shape
    grouped = _reshape(filter, [kh, kw, 1, channels * multiplier])
    return conv2d(input, grouped, strides, padding, dilations, groups=channels)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,
                     data_format=None, dilations=None, name=None):
    """``tf.nn.separable_conv2d``: depthwise_conv2d, then a 1x1 conv2d with pointwise_filter
    (1, 1, C * M, F)."""
    depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, data_format,
                                 dilations)
    return conv2d(depthwise, pointwise_filter, 1, "VALID")


def _block_size(block_size):
    size = _int(block_size, "block_size")
    if size < 2:
        raise ValueError(f"block_size must be at least 2, got {size}")
    return size


def space_to_depth(input, block_size, data_format="NHWC", name=None):
    """``tf.nn.space_to_depth``: (N, H, W, C) to (N, H/b, W/b, b*b*C), each b x b block of
    pixels becoming channels (row within the block, then column, then channel)."""
    if data_format != "NHWC":
        raise ValueError(f"space_to_depth supports data_format='NHWC' only, got {data_format!r}")
    b, x = _block_size(block_size), convert_to_tensor(input)
    if x.ndim != 4 or x.shape[1] % b or x.shape[2] % b:
        raise ValueError(f"space_to_depth needs (N, H, W, C) input with H and W divisible by "
                         f"block_size {b}, got shape {tuple(x.shape)}")
    n, h, w, c = x.shape
    blocks = _transpose(_reshape(x, [n, h // b, b, w // b, b, c]), [0, 1, 3, 2, 4, 5])
    return _reshape(blocks, [n, h // b, w // b, b * b * c])


def depth_to_space(input, block_size, data_format="NHWC", name=None):
    """``tf.nn.depth_to_space``: the inverse of space_to_depth, (N, H, W, b*b*C) to
    (N, H*b, W*b, C)."""
    if data_format != "NHWC":
        raise ValueError(f"depth_to_space supports data_format='NHWC' only, got {data_format!r}")
    b, x = _block_size(block_size), convert_to_tensor(input)
    if x.ndim != 4 or x.shape[3] % (b * b):
        raise ValueError(f"depth_to_space needs (N, H, W, C) input with C divisible by "
                         f"block_size² = {b * b}, got shape {tuple(x.shape)}")
    n, h, w, c = x.shape
    pixels = _transpose(_reshape(x, [n, h, w, b, b, c // (b * b)]), [0, 1, 3, 2, 4, 5])
    return _reshape(pixels, [n, h * b, w * b, c // (b * b)])


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NHWC",
                     dilations=None, name=None):
    """``tf.nn.conv2d_transpose``: input (N, H, W, C), filters (KH, KW, F, C), output_shape
    (N, OH, OW, F); the gradient of ``conv2d`` of an output_shape tensor, padding resolved as
    TF resolves that convolution."""
    if data_format not in ("NHWC", None):
        raise ValueError(f"conv2d_transpose supports data_format='NHWC' only, got {data_format!r}")
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(1 if dilations is None else dilations, "dilations")
    input, filters = as_tensors(input, filters)
    shape = [_int(v, "output_shape") for v in
             (output_shape.numpy().tolist() if isinstance(output_shape, Tensor) else output_shape)]
    if len(shape) != 4:
        raise ValueError(f"output_shape must have 4 elements (N, H, W, C), got {shape}")
    if input.ndim == 4 and filters.ndim == 4 and (shape[0] != input.shape[0] or
                                                  shape[3] != filters.shape[2]):
        raise ValueError(f"output_shape {shape} must have the input's batch {input.shape[0]} and "
                         f"the filters' output channels {filters.shape[2]} (filters are "
                         "(height, width, output_channels, in_channels))")
    return _C.conv2d_transpose(input, filters, None, shape[1], shape[2], sh, sw,
                               _padding(padding), dh, dw)


def atrous_conv2d_transpose(value, filters, output_shape, rate, padding, name=None):
    """``tf.nn.atrous_conv2d_transpose``: conv2d_transpose with the filters dilated by
    ``rate`` (stride 1)."""
    rate = _int(rate, "rate")
    if rate < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return conv2d_transpose(value, filters, output_shape, 1, padding, dilations=rate)


def conv1d_transpose(input, filters, output_shape, strides, padding="SAME", data_format="NWC",
                     dilations=None, name=None):
    """``tf.nn.conv1d_transpose``: input (N, W, C), filters (KW, F, C), output_shape
    (N, OW, F); conv2d_transpose of an (N, 1, W, C) view."""
    if data_format not in ("NWC", None):
        raise ValueError(f"conv1d_transpose supports data_format='NWC' only, got "
                         f"{data_format!r}")
    input, filters = as_tensors(input, filters)
    shape = [_int(v, "output_shape") for v in
             (output_shape.numpy().tolist() if isinstance(output_shape, Tensor) else output_shape)]
    if input.ndim != 3 or filters.ndim != 3 or len(shape) != 3:
        raise ValueError(f"conv1d_transpose needs input (N, W, C), filters (KW, F, C) and an "
                         f"output_shape (N, OW, F), got shapes {tuple(input.shape)}, "
                         f"{tuple(filters.shape)} and {shape}")
    out = conv2d_transpose(_C.reshape(input, [input.shape[0], 1, *input.shape[1:]]),
                           _C.reshape(filters, [1, *filters.shape]),
                           [shape[0], 1, shape[1], shape[2]], [1, _step_1d(strides, "strides")],
                           padding, dilations=[1, _step_1d(1 if dilations is None else dilations,
                                                           "dilations")])
    return _C.reshape(out, shape)


def conv_transpose(input, filters, output_shape, strides, padding="SAME", data_format=None,
                   dilations=None, name=None):
    """``tf.nn.conv_transpose``: conv1d/2d/3d_transpose by the output's rank."""
    rank = len(output_shape.numpy().tolist() if isinstance(output_shape, Tensor)
               else output_shape)
    if rank == 3:
        return conv1d_transpose(input, filters, output_shape, strides, padding, data_format,
                                dilations)
    if rank == 4:
        return conv2d_transpose(input, filters, output_shape, strides, padding,
                                data_format or "NHWC", dilations)
    if rank == 5:
        return conv3d_transpose(input, filters, output_shape, [1, *_triple(strides), 1],
                                padding, data_format or "NDHWC",
                                None if dilations is None else [1, *_triple(dilations), 1])
    raise ValueError(f"conv_transpose supports 1-D, 2-D and 3-D outputs (rank 3, 4 or 5), got "
                     f"an output_shape of rank {rank}")


def max_pool2d(input, ksize, strides, padding="VALID"):
    kh, kw = _pair(ksize, "ksize")
    sh, sw = _pair(strides, "strides")
    return _C.pool2d(convert_to_tensor(input), True, kh, kw, sh, sw, _padding(padding))


def avg_pool2d(input, ksize, strides, padding="VALID"):
    """Average pooling; padded positions are not counted in the average (Keras's rule)."""
    kh, kw = _pair(ksize, "ksize")
    sh, sw = _pair(strides, "strides")
    return _C.pool2d(convert_to_tensor(input), False, kh, kw, sh, sw, _padding(padding))


def _pool1d(input, ksize, strides, padding, data_format, pool2d, op):
    if data_format not in ("NWC", None):
        raise ValueError(f"{op} supports data_format='NWC' only, got {data_format!r}")
    x = convert_to_tensor(input)
    if x.ndim != 3:
        raise ValueError(f"{op} needs input (batch, width, channels), got shape {tuple(x.shape)}")
    out = pool2d(_C.reshape(x, [x.shape[0], 1, *x.shape[1:]]), [1, _step_1d(ksize, "ksize")],
                 [1, _step_1d(strides, "strides")], padding)
    return _C.reshape(out, [out.shape[0], *out.shape[2:]])


def max_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """``tf.nn.max_pool1d``: input (N, W, C), pooled over an (N, 1, W, C) view."""
    return _pool1d(input, ksize, strides, padding, data_format, max_pool2d, "max_pool1d")


def avg_pool1d(input, ksize, strides, padding, data_format="NWC", name=None):
    """``tf.nn.avg_pool1d``: input (N, W, C), pooled over an (N, 1, W, C) view."""
    return _pool1d(input, ksize, strides, padding, data_format, avg_pool2d, "avg_pool1d")


def pool(input, window_shape, pooling_type, strides=None, padding="VALID", data_format=None,
         dilations=None, name=None):
    """``tf.nn.pool`` for 1-D and 2-D windows ("MAX" or "AVG"), channels last, no dilation."""
    window = list(window_shape)
    if len(window) not in (1, 2):
        raise ValueError(f"pool supports 1-D and 2-D windows, got window_shape {window}")
    if dilations is not None and any(_int(d, "dilations") != 1 for d in dilations):
        raise NotImplementedError(f"pool with dilations {list(dilations)} is not supported yet; "
                                  "use dilations of 1")
    kinds = {"MAX": (max_pool1d, max_pool2d), "AVG": (avg_pool1d, avg_pool2d)}
    if pooling_type not in kinds:
        raise ValueError(f"pooling_type must be 'MAX' or 'AVG', got {pooling_type!r}")
    strides = [1] * len(window) if strides is None else list(strides)
    if len(window) == 1:
        return kinds[pooling_type][0](input, window, strides, padding, data_format)
    if data_format not in ("NHWC", None):
        raise ValueError(f"pool supports data_format='NHWC' only, got {data_format!r}")
    return kinds[pooling_type][1](input, window, strides, padding)


def relu(x, name=None):
    return _C.unary("relu", as_tensor(x, "relu", "x"))


def sigmoid(x, name=None):
    return _C.unary("sigmoid", as_tensor(x, "sigmoid", "x"))


def tanh(x, name=None):
    return _C.unary("tanh", as_tensor(x, "tanh", "x"))


def gelu(x, approximate=False):
    if approximate:
        raise NotImplementedError("gelu(approximate=True) (the tanh form) is not implemented; "
                                  "the default exact form is")
    return _C.unary("gelu", convert_to_tensor(x))


def softmax(logits, axis=-1, name=None):
    """``tf.nn.softmax(logits, axis=-1)``: tensors, NumPy arrays or lists."""
    return _C.softmax(as_tensor(logits, "Softmax", "logits"), check_int(axis, "axis"), False)


def log_softmax(logits, axis=-1, name=None):
    return _C.softmax(as_tensor(logits, "LogSoftmax", "logits"), check_int(axis, "axis"), True)


def dropout(x, rate, training=True):
    """Inverted dropout (``tf.nn.dropout``): kept values are scaled by 1 / (1 - rate)."""
    return _C.dropout(as_tensor(x, "Dropout", "x"), _rate(rate), bool(training))


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``tf.nn.batch_normalization``: (x - mean) / sqrt(variance + variance_epsilon) * scale +
    offset, every statistic broadcast against x; ``offset`` and ``scale`` may be None."""
    x, mean = as_tensors(x, mean)
    variance = as_tensors(x, variance)[1]
    inverse = _math.rsqrt(_C.binary("add", variance, _C.scalar_like(float(variance_epsilon), x)))
    if scale is not None:
        inverse = _C.binary("mul", inverse, as_tensors(x, scale)[1])
    out = _C.binary("mul", _C.binary("sub", x, mean), inverse)
    return out if offset is None else _C.binary("add", out, as_tensors(x, offset)[1])


def batch_norm_with_global_normalization(input, mean, variance, beta, gamma, variance_epsilon,
                                        scale_after_normalization, name=None):  # noqa: A002
    """``tf.nn.batch_norm_with_global_normalization``: batch_normalization with ``beta`` as the
    offset and ``gamma`` as the scale only when ``scale_after_normalization``."""
    return batch_normalization(input, mean, variance, beta,
                               gamma if scale_after_normalization else None, variance_epsilon)


def keras_batch_normalization(x, gamma, beta, moving_mean, moving_var, momentum=0.99,
                              epsilon=1e-3, training=False):
    """Keras's BatchNormalization layer math over the last axis in one op: batch statistics
    when training (and the moving statistics updated in place with Keras's momentum rule), the
    moving ones otherwise."""
    return _C.batch_norm(x, gamma, beta, moving_mean, moving_var, float(momentum), float(epsilon),
                         bool(training))


def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,
                                 name=None):
    """``tf.nn.local_response_normalization`` (``lrn``): x / (bias + alpha * sum of x² over the
    2 * depth_radius + 1 nearest channels) ** beta, for (N, H, W, C) input."""
    x = convert_to_tensor(input)
    radius = _int(depth_radius, "depth_radius")
    if x.ndim != 4 or radius < 0:
        raise ValueError(f"local_response_normalization needs (N, H, W, C) input and "
                         f"depth_radius >= 0, got shape {tuple(x.shape)} and {radius}")
    channels = x.shape[3]
    padded = _pad(_C.unary("square", x), [[0, 0], [0, 0], [0, 0], [radius, radius]])
    window = padded[..., 0:channels]
    for offset in range(1, 2 * radius + 1):
        window = window + padded[..., offset:offset + channels]
    scale = _C.scalar_like(float(bias), x) + float(alpha) * window
    return x * _math.pow(scale, -float(beta))


lrn = local_response_normalization


def layer_normalization(x, gamma, beta, epsilon=1e-3):
    return _C.layer_norm(x, gamma, beta, float(epsilon))


def embedding_lookup(params, ids):
    """``tf.nn.embedding_lookup``: rows of ``params`` (V, D) for integer ``ids``."""
    if not isinstance(ids, Tensor):
        ids = tensor(ids, dtype="int64", device=params.device.name)
    return _C.embedding(ids, params)


def scaled_dot_product_attention(query, key, value, mask=None):
    """softmax(Q Kᵀ / √d_k + mask) V. A float ``mask`` is added to the scores (use -1e9 to
    hide); a boolean ``mask`` marks the keys each query may attend to (True = attend, as
    Keras's ``attention_mask`` and torch's boolean ``attn_mask``)."""
    return _C.scaled_dot_product_attention(query, key, value, mask)


def sparse_softmax_cross_entropy_with_logits(labels, logits):
    """Per-example loss for integer class labels (no reduction), computed in float32."""
    if not isinstance(labels, Tensor):
        labels = tensor(labels, dtype="int64", device=logits.device.name)
    return _C.sparse_softmax_cross_entropy(labels, logits)


def softmax_cross_entropy_with_logits(labels, logits):
    """Per-example loss for probability (e.g. one-hot) labels, computed in float32."""
    if not isinstance(labels, Tensor):
        labels = tensor(labels, device=logits.device.name)
    return _C.softmax_cross_entropy(labels, logits)


def mean_squared_error(y_true, y_pred):
    """Per-example mean over the last axis of (y_pred - y_true)², as Keras's MSE."""
    y_true, y_pred = as_operands(y_true, y_pred, "MeanSquaredError", ("y_true", "y_pred"))
    return _C.mean_squared_error(y_true, y_pred)


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype="float32",
            name=None):
    from ._array_ops import one_hot as _one_hot
    return _one_hot(indices, depth, on_value, off_value, axis, dtype)


def leaky_relu(features, alpha=0.2, name=None):
    """max(x, alpha x) (TF's default alpha is 0.2)."""
    x = convert_to_tensor(features)
    return _C.binary("maximum", x, _C.binary("mul", x, _C.scalar_like(float(alpha), x)))


def relu6(features, name=None):
    x = convert_to_tensor(features)
    return _C.binary("minimum", _C.unary("relu", x), _C.scalar_like(6.0, x))


def _relu_plus_scaled_expm1(x, alpha):
    """relu(x) + alpha * (exp(min(x, 0)) - 1): elu's two branches (the exp branch is computed
    on min(x, 0), so it never overflows)."""
    negative_part = _math.expm1(_C.binary("minimum", x, _C.scalar_like(0.0, x)))
    if alpha != 1.0:
        negative_part = _C.binary("mul", negative_part, _C.scalar_like(alpha, x))
    return _C.binary("add", _C.unary("relu", x), negative_part)


def elu(features, name=None):
    """x for x > 0, exp(x) - 1 otherwise."""
    return _relu_plus_scaled_expm1(convert_to_tensor(features), 1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(features, name=None):
    """scale * elu(x, alpha) with the self-normalizing constants of Klambauer et al. (2017)."""
    x = convert_to_tensor(features)
    return _C.binary("mul", _relu_plus_scaled_expm1(x, _SELU_ALPHA), _C.scalar_like(_SELU_SCALE, x))


def crelu(features, axis=-1, name=None):
    """``tf.nn.crelu``: relu(x) and relu(-x) concatenated along ``axis`` (twice as many
    channels)."""
    x = convert_to_tensor(features)
    return _concat([_C.unary("relu", x), _C.unary("relu", _C.unary("neg", x))],
                  check_int(axis, "axis"))


def silu(features, beta=1.0, name=None):
    x = convert_to_tensor(features)
    scaled = x if beta == 1.0 else _C.binary("mul", x, _C.scalar_like(float(beta), x))
    return _C.binary("mul", x, _C.unary("sigmoid", scaled))


swish = silu
softplus = _math.softplus
softsign = _math.softsign
l2_normalize = _math.l2_normalize
zero_fraction = _math.zero_fraction
in_top_k = _math.in_top_k


def log_sigmoid(x, name=None):
    return _C.unary("neg", _math.softplus(_C.unary("neg", convert_to_tensor(x))))


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Per-element loss max(x, 0) - x z + log(1 + exp(-|x|)), TF's stable form."""
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")
    return functional.binary_cross_entropy_with_logits(logits, labels, reduction="none")


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """sigmoid cross-entropy with the positive term weighted by ``pos_weight``, TF's stable
    form (1 - z) x + (1 + (q - 1) z) softplus(-x)."""
    labels, logits = as_tensors(labels, logits)
    log_weight = 1.0 + (pos_weight - 1.0) * labels
    return (1.0 - labels) * logits + log_weight * _math.softplus(-logits)


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, plus Stirling's approximation of log(targets!)
    when ``compute_full_loss`` (zero for targets in [0, 1], as TensorFlow)."""
    targets, log_input = as_tensors(targets, log_input)
    loss = _C.unary("exp", log_input) - log_input * targets
    if not compute_full_loss:
        return loss
    small = _math.logical_and(_math.greater_equal(targets, 0.0), _math.less_equal(targets, 1.0))
    safe = _where(small, _C.scalar_like(2.0, targets), targets)  # no log(0) in the unused branch
    stirling = safe * _C.unary("log", safe) - safe + 0.5 * _C.unary("log", 2.0 * _PI * safe)
    return loss + _where(small, _C.scalar_like(0.0, targets), stirling)


def sufficient_statistics(x, axes, shift=None, keepdims=False, name=None):
    """(count, sum of x - shift, sum of (x - shift)², shift) over ``axes``: what
    normalize_moments turns into a mean and a variance."""
    x = convert_to_tensor(x)
    axes = [check_int(a, "axes") % x.ndim for a in axes]
    count = 1
    for a in axes:
        count *= x.shape[a]
    shifted = x if shift is None else x - convert_to_tensor(shift)
    return (_C.scalar_like(float(count), x), _C.reduce("sum", shifted, axes, bool(keepdims)),
            _C.reduce("sum", _C.unary("square", shifted), axes, bool(keepdims)), shift)


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient_statistics' sums."""
    mean_ss, variance_ss = as_tensors(mean_ss, variance_ss)
    counts = as_tensors(mean_ss, counts)[1]
    shifted_mean = mean_ss / counts
    mean = shifted_mean if shift is None else shifted_mean + convert_to_tensor(shift)
    return mean, variance_ss / counts - _C.unary("square", shifted_mean)


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """sum(per_example_loss * sample_weight) / global_batch_size (the first dimension by
    default: one replica)."""
    loss = convert_to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = loss * convert_to_tensor(sample_weight)
    if global_batch_size is None:
        global_batch_size = loss.shape[0] if loss.ndim else 1
    return _C.reduce("sum", loss, None, False) / float(global_batch_size)


def scale_regularization_loss(regularization_loss):
    """The summed regularization losses divided by the number of replicas (one)."""
    if isinstance(regularization_loss, (list, tuple)):
        regularization_loss = _math.add_n(list(regularization_loss))
    return _C.reduce("sum", convert_to_tensor(regularization_loss), None, False)


def l2_loss(t, name=None):
    """sum(t²) / 2."""
    x = convert_to_tensor(t)
    return _C.binary("mul", _C.reduce("sum", _C.unary("square", x), None, False),
                     _C.scalar_like(0.5, x))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """(mean, variance) over ``axes`` (population variance)."""
    x = convert_to_tensor(x)
    axes = list(axes)
    return (_C.reduce("mean", x, axes, bool(keepdims)),
            _math.reduce_variance(x, axes, bool(keepdims)))


def weighted_moments(x, axes, frequency_weights, keepdims=False, name=None):
    """(mean, variance) over ``axes`` with each entry counted ``frequency_weights`` times
    (weights broadcast against x)."""
    x, weights = as_tensors(x, frequency_weights)
    axes = [check_int(a, "axes") % x.ndim for a in axes]
    total_weight = _C.reduce("sum", weights + _zeros_like(x),
                             axes, True)
    mean = _C.reduce("sum", weights * x, axes, True) / total_weight
    variance = _C.reduce("sum", weights * _C.unary("square", x - mean), axes, True) / total_weight
    if keepdims:
        return mean, variance
    return _squeeze(mean, axes), _squeeze(variance, axes)


def bias_add(value, bias, data_format=None, name=None):
    if data_format not in (None, "NHWC", "N...C"):
        raise ValueError(f"bias_add supports channels-last data only, got {data_format!r}")
    return _C.binary("add", *as_tensors(value, bias))


def _approx_k(operand, k, reduction_dimension, largest):
    """The exact top (or bottom) k along ``reduction_dimension``: an approximate top-k with
    recall 1, which every recall_target allows."""
    x = convert_to_tensor(operand)
    axis = check_int(reduction_dimension, "reduction_dimension") % x.ndim
    moved = _C.transpose(x, axis, x.ndim - 1) if axis != x.ndim - 1 else x
    values, indices = top_k(moved if largest else _C.unary("neg", moved), k)
    values = values if largest else _C.unary("neg", values)
    if axis != x.ndim - 1:
        values, indices = (_C.transpose(t, axis, x.ndim - 1) for t in (values, indices))
    return values, indices


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """``tf.nn.approx_max_k``: (values, int32 indices) of the k largest entries along
    ``reduction_dimension``, largest first (computed exactly)."""
    return _approx_k(operand, k, reduction_dimension, True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """``tf.nn.approx_min_k``: (values, int32 indices) of the k smallest entries, smallest
    first (computed exactly)."""
    return _approx_k(operand, k, reduction_dimension, False)


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):  # noqa
    """``tf.approx_top_k``: approx_max_k, or approx_min_k when not ``is_max_k``."""
    return _approx_k(input, k, reduction_dimension, bool(is_max_k))


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """``tf.nn.nce_loss``: per example, the summed sigmoid cross-entropy of its true classes
    (label 1/num_true) and the sampled ones (label 0), logits less their log expected
    counts; the classes are drawn log-uniformly unless ``sampled_values`` gives them."""
    logits, targets = sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                     num_true, sampled_values, remove_accidental_hits)
    losses = sigmoid_cross_entropy_with_logits(labels=targets, logits=logits)
    return _C.reduce("sum", losses, [1], False)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True, seed=None,
                         name="sampled_softmax_loss"):
    """``tf.nn.sampled_softmax_loss``: per example, the softmax cross-entropy over its true
    and sampled classes' logits (less their log expected counts)."""
    if seed is not None:
        raise ValueError("per-op seeds are not supported; call gpuaccel.random.set_seed(seed)")
    logits, targets = sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                                     num_true, sampled_values, remove_accidental_hits)
    return softmax_cross_entropy_with_logits(labels=targets, logits=logits)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):
    return max_pool2d(input, ksize, strides, padding)


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):
    return avg_pool2d(input, ksize, strides, padding)


# torch.nn's modules, refused in the TensorFlow face's ``nn`` with the Keras equivalent (the
# PyTorch face's ``gpuaccel.torch.nn`` has most of them; it refuses the rest with this table).
_IN_TORCH_FACE = " (PyTorch's is gpuaccel.torch.nn.{name})"
TORCH_NN_MODULE_REFUSALS = {
    "Module": "keras.layers.Layer / keras.Model" + _IN_TORCH_FACE.format(name="Module"),
    "Linear": "keras.layers.Dense" + _IN_TORCH_FACE.format(name="Linear"),
    "Conv2d": "keras.layers.Conv2D" + _IN_TORCH_FACE.format(name="Conv2d"),
    "ConvTranspose2d": "keras.layers.Conv2DTranspose or gpuaccel.torch.nn.functional."
                       "conv_transpose2d (nn.ConvTranspose2d is not there yet)",
    "CrossEntropyLoss": "gpuaccel.nn.functional.cross_entropy" +
                        _IN_TORCH_FACE.format(name="CrossEntropyLoss"),
    "MSELoss": "gpuaccel.nn.functional.mse_loss" + _IN_TORCH_FACE.format(name="MSELoss"),
    "Sequential": "keras.Sequential" + _IN_TORCH_FACE.format(name="Sequential"),
}

__getattr__ = _unsupported.module_getattr(__name__, "nn", {
    "depthwise_conv2d": "conv2d per channel (depthwise kernels are not there yet)",
    "ctc_loss": "nothing yet (no CTC kernel)",
    **TORCH_NN_MODULE_REFUSALS,
})
