"""``torch.nn.functional`` (``import gpuaccel.nn.functional as F``): PyTorch's layouts (NCHW
images, (out, in) linear weights, (out, in, kh, kw) convolution weights) and argument names over
the NHWC C++ ops; ``gpuaccel.nn`` itself keeps ``tf.nn``'s NHWC names.

Losses take ``reduction='mean' | 'sum' | 'none'`` as torch does.
"""
import functools
import math
import numbers

from . import _C
from . import _array_ops
from . import _conv3d
from . import _torch_autocast as _autocast
from . import _unsupported
from . import image as _image
from . import math as _math
from ._array_ops import clamp as _clamp
from ._array_ops import pad as _tf_pad
from ._array_ops import where as _where
from ._convert import as_tensors, convert_to_tensor
from ._int_range import check_int
from .dtypes import INTEGER_NAMES
from ._tensor import Tensor, no_grad
from ._torch_grid_sample import affine_grid, grid_sample  # noqa: F401 - F's names
from ._torch_interpolate import (interpolate, upsample, upsample_bilinear,  # noqa: F401
                                 upsample_nearest)

__all__ = ["relu", "leaky_relu", "sigmoid", "tanh", "gelu", "silu", "softplus", "softmax",
           "log_softmax", "dropout", "linear", "conv2d", "conv_transpose2d", "conv3d",
           "conv_transpose3d", "max_pool2d",
           "avg_pool2d", "unfold",
           "pad", "one_hot", "embedding", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "normalize",
           "relu_", "elu", "elu_", "celu", "celu_", "selu", "selu_", "relu6", "hardtanh",
           "hardtanh_", "leaky_relu_", "threshold", "threshold_", "hardsigmoid", "hardswish",
           "mish", "logsigmoid", "softsign", "tanhshrink", "softmin", "hardshrink", "softshrink",
           "glu", "prelu", "dropout1d", "dropout2d", "dropout3d", "conv1d", "avg_pool1d",
           "max_pool1d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_max_pool1d",
           "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d", "pixel_shuffle", "pixel_unshuffle",
           "channel_shuffle", "bilinear", "batch_norm", "layer_norm", "group_norm",
           "instance_norm", "local_response_norm", "smooth_l1_loss", "huber_loss", "kl_div",
           "cosine_similarity", "pairwise_distance", "margin_ranking_loss",
           "hinge_embedding_loss", "soft_margin_loss", "triplet_margin_loss",
           "cosine_embedding_loss", "poisson_nll_loss", "gaussian_nll_loss",
           "multilabel_soft_margin_loss", "interpolate", "upsample", "upsample_nearest",
           "upsample_bilinear", "affine_grid", "grid_sample"]


def _pair(value, name):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return int(value), int(value)
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return int(value[0]), int(value[1])
    raise ValueError(f"{name} must be an int or a pair of ints, got {value!r}")


def _reduce(loss, reduction):
    if reduction == "mean":
        return _C.reduce("mean", loss, None, False)
    if reduction == "sum":
        return _C.reduce("sum", loss, None, False)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction ('none', 'mean', 'sum')")


def relu(input, inplace=False):
    return _in_place_if(inplace, input, _C.unary("relu", convert_to_tensor(input)))


def _in_place_if(inplace, input, result):
    """torch's ``inplace=True`` (and the ``F.name_`` forms): the result written into ``input``
    under Tensor.copy_'s rules (refused on a tensor that requires grad while recording)."""
    return input.copy_(result) if inplace else result


def leaky_relu(input, negative_slope=0.01, inplace=False):
    x = convert_to_tensor(input)
    return _in_place_if(inplace, input, _C.binary(
        "maximum", x, _C.binary("mul", x, _C.scalar_like(float(negative_slope), x))))


def sigmoid(input):
    return _C.unary("sigmoid", convert_to_tensor(input))


def tanh(input):
    return _C.unary("tanh", convert_to_tensor(input))


def gelu(input, approximate="none"):
    """The exact form (erf), or ``approximate='tanh'``:
    x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    x = convert_to_tensor(input)
    if approximate == "none":
        return _C.unary("gelu", x)
    if approximate != "tanh":
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    inner = (x + x * x * x * 0.044715) * math.sqrt(2.0 / math.pi)
    return x * 0.5 * (_C.unary("tanh", inner) + 1.0)


def silu(input, inplace=False):
    x = convert_to_tensor(input)
    return _in_place_if(inplace, input, _C.binary("mul", x, _C.unary("sigmoid", x)))


def softplus(input, beta=1.0, threshold=20.0):
    x = convert_to_tensor(input)
    if beta == 1.0:
        return _math.softplus(x)
    scaled = _C.binary("mul", x, _C.scalar_like(float(beta), x))
    return _C.binary("div", _math.softplus(scaled), _C.scalar_like(float(beta), x))


def _dim(dim, x):
    if dim is None:  # torch's legacy implicit dim: 0 for 0-D, 1-D and 3-D inputs, else 1
        return 0 if x.ndim in (0, 1, 3) else 1
    return check_int(dim, "dim")  # int() would read 1.5 as 1


def softmax(input, dim=None, dtype=None):
    """``F.softmax(input, dim)``; computed in float32 for half inputs, as Keras and torch."""
    x = convert_to_tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    return _C.softmax(x, _dim(dim, x), False)


def log_softmax(input, dim=None, dtype=None):
    x = convert_to_tensor(input)
    if dtype is not None:
        x = x.to(dtype)
    return _C.softmax(x, _dim(dim, x), True)


def dropout(input, p=0.5, training=True, inplace=False):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    return _C.dropout(convert_to_tensor(input), float(p), bool(training))


def linear(input, weight, bias=None):
    """x @ weightᵀ + bias with torch's (out_features, in_features) weight."""
    x, w = as_tensors(input, weight)
    out = _C.matmul(x, _C.transpose(w, 0, 1))
    return out if bias is None else _C.binary("add", *as_tensors(out, bias))


def _nhwc(x):
    return _C.permute(x, [0, 2, 3, 1])


def _nchw(x):
    return _C.permute(x, [0, 3, 1, 2])


def _check_image(x, op):
    if x.ndim != 4:
        raise RuntimeError(f"{op}: expected a 4-D (N, C, H, W) input, got shape {list(x.shape)}")


def _one_image_or_batch(name):
    """torch's 2-D convolutions and poolings take one unbatched (C, H, W) image as well as an
    (N, C, H, W) batch (a tutorial pools ``torch.rand(1, 6, 6)``): the decorated op runs on a
    batch of one and the batch axis is dropped again; anything else gets torch's error."""
    def decorate(op):
        @functools.wraps(op)
        def one_or_batch(input, *args, **kwargs):
            x = convert_to_tensor(input)
            if x.ndim == 4:
                return op(x, *args, **kwargs)
            if x.ndim != 3:
                raise RuntimeError(f"{name}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) "
                                   f"input, got shape {list(x.shape)}")
            return _C.squeeze(op(_C.expand_dims(x, 0), *args, **kwargs), [0])
        return one_or_batch
    return decorate


def _padded_nhwc(x, padding, value=0.0):
    ph, pw = _pair(padding, "padding")
    x = _nhwc(x)
    return _tf_pad(x, [[0, 0], [ph, ph], [pw, pw], [0, 0]], constant_values=value) \
        if ph or pw else x


def _conv_operands(op, input, weight, bias, groups, in_axis):
    """Input, weight and bias as tensors, after torch's checks: an (N, C, H, W) image, and C
    on the weight's axis ``in_axis`` (1 for conv2d's (out, in / groups, kh, kw), where torch's
    groups split C and out; 0 for conv_transpose2d's (in, out, kh, kw), groups=1 only)."""
    x, w = as_tensors(input, weight)
    _check_image(x, op)
    if in_axis == 1 and groups != 1:
        return _grouped_conv_operands(op, x, w, bias, groups)
    if groups != 1:
        raise ValueError(f"{op}(groups != 1) is not supported yet")
    if w.ndim != 4 or w.shape[in_axis] != x.shape[1]:
        expected = ["out", "kh", "kw"]
        expected.insert(in_axis, str(x.shape[1]))
        raise RuntimeError(f"{op}: weight of shape {list(w.shape)} does not fit an input with "
                           f"{x.shape[1]} channels (expected ({', '.join(expected)}))")
    return x, w, None if bias is None else as_tensors(x, bias)[1]


def _grouped_conv_operands(op, x, w, bias, groups):
    """_conv_operands for a grouped conv2d, with torch's checks and words."""
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral):
        raise TypeError(f"{op}(): argument 'groups' must be int, not {type(groups).__name__}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w.ndim != 4 or w.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{list(w.shape)}] instead")
    if w.shape[1] * groups != x.shape[1]:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[1] * groups} channels, but "
                           f"got {x.shape[1]} channels instead")
    return x, w, None if bias is None else as_tensors(x, bias)[1]


@_one_image_or_batch("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv2d``: input (N, C, H, W), weight (F, C / groups, kh, kw); ``padding`` an int, a
    pair, 'valid' or 'same'."""
    x, w, bias = _conv_operands("conv2d", input, weight, bias, groups, in_axis=1)
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    kernel = _C.permute(w, [2, 3, 1, 0])
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("VALID", "SAME") or (mode == "SAME" and (sh, sw) != (1, 1)):
            raise ValueError(f"padding={padding!r}: use 'valid', or 'same' with stride 1")
        out = _C.conv2d(_nhwc(x), kernel, bias, sh, sw, mode, dh, dw, "linear", groups)
    else:
        out = _C.conv2d(_padded_nhwc(x, padding), kernel, bias, sh, sw, "VALID", dh, dw,
                        "linear", groups)
    return _nchw(out)


@_one_image_or_batch("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """``F.conv_transpose2d``: input (N, C, H, W), weight (C, F, kh, kw) (torch's (in,
    out / groups, kh, kw)); output size
    (H - 1) * stride - 2 * padding + dilation * (kh - 1) + output_padding + 1."""
    x, w, bias = _conv_operands("conv_transpose2d", input, weight, bias, groups, in_axis=0)
    sh, sw = _pair(stride, "stride")
    ph, pw = _pair(padding, "padding")
    oph, opw = _pair(output_padding, "output_padding")
    dh, dw = _pair(dilation, "dilation")
    if oph >= sh or opw >= sw or min(oph, opw) < 0:
        raise ValueError(f"conv_transpose2d: output_padding {(oph, opw)} must be >= 0 and smaller "
                         f"than the stride {(sh, sw)}")
    out_h = (x.shape[2] - 1) * sh - 2 * ph + dh * (w.shape[2] - 1) + oph + 1
    out_w = (x.shape[3] - 1) * sw - 2 * pw + dw * (w.shape[3] - 1) + opw + 1
    kernel = _C.permute(w, [2, 3, 1, 0])  # (kh, kw, out, in): Keras's Conv2DTranspose kernel
    out = _C.conv2d_transpose_padded(_nhwc(x), kernel, bias, out_h, out_w, sh, sw, dh, dw,
                                     [ph, ph, pw, pw])
    return _nchw(out)


def _triple(value, name):
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),) * 3
    if isinstance(value, (list, tuple)) and len(value) == 3:
        return tuple(check_int(v, name) for v in value)
    raise ValueError(f"{name} must be an int or a triple of ints, got {value!r}")


def _volume_operands(op, input, weight, bias, groups, in_axis):
    """An (N, C, D, H, W) input and a 5-D weight with C on ``in_axis`` (1 for conv3d's
    (out, in / groups, kd, kh, kw), 0 for conv_transpose3d's (in, out, kd, kh, kw)), after
    torch's checks; the input as NDHWC."""
    x, w = as_tensors(input, weight)
    if x.ndim != 5 or w.ndim != 5:
        raise RuntimeError(f"{op}: expected a 5-D (N, C, D, H, W) input and a 5-D weight, got "
                           f"shapes {list(x.shape)} and {list(w.shape)}")
    if in_axis == 0 and groups != 1:
        raise ValueError(f"{op}(groups != 1) is not supported yet")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups <= 0:
        raise RuntimeError(f"{op}: groups must be a positive int, got {groups!r}")
    if w.shape[in_axis] * (groups if in_axis == 1 else 1) != x.shape[1]:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(w.shape)}, expected "
                           f"input{list(x.shape)} to have {w.shape[in_axis] * groups} channels, "
                           f"but got {x.shape[1]} channels instead")
    bias = None if bias is None else as_tensors(x, bias)[1]
    return _C.permute(x, [0, 2, 3, 4, 1]), w, bias


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv3d``: input (N, C, D, H, W), weight (F, C / groups, kd, kh, kw); ``padding`` an
    int, a triple, 'valid' or 'same' (stride 1). Computed by gpuaccel/_conv3d.py."""
    x, w, bias = _volume_operands("conv3d", input, weight, bias, groups, in_axis=1)
    strides, dilations = _triple(stride, "stride"), _triple(dilation, "dilation")
    kernel = _C.permute(w, [2, 3, 4, 1, 0])  # (kd, kh, kw, in / groups, out)
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("VALID", "SAME") or (mode == "SAME" and strides != (1, 1, 1)):
            raise ValueError(f"padding={padding!r}: use 'valid', or 'same' with stride 1")
        pads = _conv3d.padding_pairs(mode, x.shape[1:4], kernel.shape[:3], strides, dilations)
    else:
        pads = [(p, p) for p in _triple(padding, "padding")]
    out = _conv3d.conv3d(x, kernel, bias, strides, pads, dilations, groups)
    return _C.permute(out, [0, 4, 1, 2, 3])


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """``F.conv_transpose3d``: input (N, C, D, H, W), weight (C, F, kd, kh, kw); each output
    size (D - 1) * stride - 2 * padding + dilation * (k - 1) + output_padding + 1."""
    x, w, bias = _volume_operands("conv_transpose3d", input, weight, bias, groups, in_axis=0)
    strides, dilations = _triple(stride, "stride"), _triple(dilation, "dilation")
    pads, extras = _triple(padding, "padding"), _triple(output_padding, "output_padding")
    if any(e >= s or e < 0 for e, s in zip(extras, strides)):
        raise ValueError(f"conv_transpose3d: output_padding {extras} must be >= 0 and smaller "
                         f"than the stride {strides}")
    out = [(size - 1) * s - 2 * p + d * (k - 1) + e + 1 for size, s, p, d, k, e in
           zip(x.shape[1:4], strides, pads, dilations, w.shape[2:], extras)]
    kernel = _C.permute(w, [2, 3, 4, 1, 0])  # (kd, kh, kw, out, in): Keras's layout
    y = _conv3d.conv3d_transpose(x, kernel, bias, out, strides, [(p, p) for p in pads],
                                 dilations)
    return _C.permute(y, [0, 4, 1, 2, 3])


@_one_image_or_batch("max_pool2d")
def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    x = convert_to_tensor(input)
    _check_image(x, "max_pool2d")
    if dilation != 1 or ceil_mode or return_indices:
        raise ValueError("max_pool2d(dilation, ceil_mode, return_indices) are not supported yet")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride if stride is not None else kernel_size, "stride")
    padded = _padded_nhwc(x, padding, value=float("-inf"))
    return _nchw(_C.pool2d(padded, True, kh, kw, sh, sw, "VALID"))


@_one_image_or_batch("avg_pool2d")
def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    x = convert_to_tensor(input)
    _check_image(x, "avg_pool2d")
    if ceil_mode or (padding and not count_include_pad):
        raise ValueError("avg_pool2d(ceil_mode, count_include_pad=False) are not supported yet")
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(stride if stride is not None else kernel_size, "stride")
    return _nchw(_C.pool2d(_padded_nhwc(x, padding), False, kh, kw, sh, sw, "VALID"))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """``F.unfold`` (im2col): (N, C, H, W) to (N, C*kh*kw, L) with L the number of patches;
    the second axis runs over channels, then patch rows, then columns (torch's order)."""
    x = convert_to_tensor(input)
    _check_image(x, "unfold")
    kernel = _pair(kernel_size, "kernel_size")
    slices = _image.patch_slices(_padded_nhwc(x, padding), kernel, _pair(stride, "stride"),
                                 _pair(dilation, "dilation"))
    stacked = _C.concat([_C.expand_dims(s, 4) for s in slices], 4)  # (N, OH, OW, C, K)
    n, oh, ow = stacked.shape[:3]
    return _C.transpose(_C.reshape(stacked, [n, oh * ow, -1]), 1, 2)


def pad(input, pad, mode="constant", value=0.0):  # noqa: A002 - torch's names
    """``F.pad(input, pad)``: ``pad`` lists (before, after) pairs from the last axis backwards."""
    x = convert_to_tensor(input)
    if mode != "constant":
        raise ValueError(f"pad mode {mode!r} is not supported yet; only 'constant' is")
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ValueError(f"Padding length must be divisible by 2 and at most 2 * ndim, got {pad}")
    pairs = [[0, 0] for _ in range(x.ndim)]
    for k in range(len(pad) // 2):
        pairs[x.ndim - 1 - k] = [int(pad[2 * k]), int(pad[2 * k + 1])]
    return _tf_pad(x, pairs, constant_values=0.0 if value is None else value)


def one_hot(tensor, num_classes=-1):
    """``F.one_hot``: int64 output; ``num_classes=-1`` means max + 1."""
    ids = tensor if isinstance(tensor, Tensor) else convert_to_tensor(tensor, dtype="int64")
    if num_classes == -1:
        num_classes = int(ids.numpy().max()) + 1 if ids.numel() else 0
    _check_classes(ids, num_classes, "one_hot")
    return _C.one_hot(ids, int(num_classes), "int64")


def _check_classes(labels, num_classes, op):
    """torch refuses a class index outside [0, num_classes); the core's one_hot gives it a row
    of zeros (TF's rule), which here would be a silently different result or loss."""
    if labels._dtype_name in INTEGER_NAMES and labels.numel():
        values = labels.numpy()
        low, high = int(values.min()), int(values.max())
        if low < 0 or high >= num_classes:
            raise IndexError(f"{op}: class values must be in [0, {num_classes}), got values "
                             f"from {low} to {high}")


def embedding(input, weight):
    ids = input if isinstance(input, Tensor) else convert_to_tensor(input, dtype="int64")
    return _C.embedding(ids, weight)


def _class_last(x):
    return x if x.ndim <= 2 else _C.permute(x, [0] + list(range(2, x.ndim)) + [1])


def cross_entropy(input, target, weight=None, ignore_index=-100, reduction="mean",
                  label_smoothing=0.0):
    """Softmax cross-entropy of logits (N, C) against class indices (N,) or probabilities
    (N, C), as ``F.cross_entropy``; computed in float32."""
    if weight is not None or label_smoothing:
        raise ValueError("cross_entropy(weight=, label_smoothing=) are not supported yet")
    logits = convert_to_tensor(input)
    labels = target if isinstance(target, Tensor) else convert_to_tensor(target)
    if labels._dtype_name in ("int32", "int64"):
        if labels.numel() and (labels.numpy() == ignore_index).any():
            raise ValueError("cross_entropy: targets equal to ignore_index are not supported yet")
        flat_logits = _C.reshape(_C.contiguous(_class_last(logits)), [-1, logits.shape[1]]) \
            if logits.ndim > 2 else logits
        loss = _C.sparse_softmax_cross_entropy(_C.reshape(_C.contiguous(labels), [-1]),
                                               flat_logits)
        if logits.ndim > 2:
            loss = _C.reshape(loss, list(labels.shape))
    else:
        loss = _C.softmax_cross_entropy(_class_last(labels), _class_last(logits))
    return _reduce(loss, reduction)


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    """Negative log-likelihood of log-probabilities (N, C) at class indices (N,)."""
    if weight is not None:
        raise ValueError("nll_loss(weight=) is not supported yet")
    log_probs = convert_to_tensor(input)
    labels = target if isinstance(target, Tensor) else convert_to_tensor(target, dtype="int64")
    _check_classes(labels, log_probs.shape[1], "nll_loss")
    picks = _C.one_hot(labels, log_probs.shape[1], log_probs._dtype_name)
    loss = _C.unary("neg", _C.reduce("sum", _C.binary("mul", picks, log_probs), [1], False))
    return _reduce(loss, reduction)


def mse_loss(input, target, reduction="mean"):
    x, y = as_tensors(input, target)
    return _reduce(_C.unary("square", _C.binary("sub", x, y)), reduction)


def l1_loss(input, target, reduction="mean"):
    x, y = as_tensors(input, target)
    return _reduce(_C.unary("abs", _C.binary("sub", x, y)), reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    """-(y log p + (1 - y) log(1 - p)) with each log clamped at -100, as torch."""
    if weight is not None:
        raise ValueError("binary_cross_entropy(weight=) is not supported yet")
    p, y = as_tensors(input, target)
    floor = _C.scalar_like(-100.0, p)
    log_p = _C.binary("maximum", _C.unary("log", p), floor)
    log_q = _C.binary("maximum", _C.unary("log", _C.binary("sub", _C.scalar_like(1.0, p), p)),
                      floor)
    one_minus_y = _C.binary("sub", _C.scalar_like(1.0, y), y)
    loss = _C.unary("neg", _C.binary("add", _C.binary("mul", y, log_p),
                                     _C.binary("mul", one_minus_y, log_q)))
    return _reduce(loss, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    """max(x, 0) - x y + log(1 + exp(-|x|)): the stable form, as torch and TF compute it."""
    if weight is not None or pos_weight is not None:
        raise ValueError("binary_cross_entropy_with_logits(weight=, pos_weight=) are not "
                         "supported yet")
    x, y = as_tensors(input, target)
    loss = _C.binary("add", _C.binary("sub", _C.unary("relu", x), _C.binary("mul", x, y)),
                     _math.log1p(_C.unary("exp", _C.unary("neg", _C.unary("abs", x)))))
    return _reduce(loss, reduction)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """x / max(||x||_p, eps) along ``dim`` (p = 2 only)."""
    if p != 2:
        raise ValueError("normalize(p != 2) is not supported yet")
    x = convert_to_tensor(input)
    norm = _C.unary("sqrt", _C.reduce("sum", _C.unary("square", x), [check_int(dim, "dim")], True))
    return _C.binary("div", x, _C.binary("maximum", norm, _C.scalar_like(float(eps), norm)))


# ---- more activations (composed from the element-wise ops; autograd gives their gradients) ----

def _negative_part(x):
    return _C.binary("minimum", x, _C.scalar_like(0.0, x))


def elu(input, alpha=1.0, inplace=False):
    """x for x > 0, alpha (exp(x) - 1) otherwise; the exp branch sees min(x, 0), so it never
    overflows (a masked inf would turn the gradient into NaN)."""
    x = convert_to_tensor(input)
    out = _C.unary("relu", x) + _math.expm1(_negative_part(x)) * float(alpha)
    return _in_place_if(inplace, input, out)


def celu(input, alpha=1.0, inplace=False):
    x = convert_to_tensor(input)
    out = _C.unary("relu", x) + _math.expm1(_negative_part(x) / float(alpha)) * float(alpha)
    return _in_place_if(inplace, input, out)


_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def selu(input, inplace=False):
    return _in_place_if(inplace, input, elu(input, _SELU_ALPHA) * _SELU_SCALE)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                         f"({max_val})")
    return _in_place_if(inplace, input, _clamp(convert_to_tensor(input), float(min_val),
                                               float(max_val)))


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


def threshold(input, threshold, value, inplace=False):  # noqa: A002 - torch's names
    """x where x > threshold, else ``value``."""
    x = convert_to_tensor(input)
    return _in_place_if(inplace, input, _where(x > float(threshold), x,
                                               _C.scalar_like(float(value), x)))


def hardsigmoid(input, inplace=False):
    return _in_place_if(inplace, input, relu6(convert_to_tensor(input) + 3.0) / 6.0)


def hardswish(input, inplace=False):
    x = convert_to_tensor(input)
    return _in_place_if(inplace, input, x * hardsigmoid(x))


def mish(input, inplace=False):
    x = convert_to_tensor(input)
    return _in_place_if(inplace, input, x * _C.unary("tanh", _math.softplus(x)))


def logsigmoid(input):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    return -_math.softplus(-convert_to_tensor(input))


def softsign(input):
    x = convert_to_tensor(input)
    return x / (_C.unary("abs", x) + 1.0)


def tanhshrink(input):
    x = convert_to_tensor(input)
    return x - _C.unary("tanh", x)


def softmin(input, dim=None, dtype=None):
    x = convert_to_tensor(input)
    return softmax(-x, _dim(dim, x), dtype)


def hardshrink(input, lambd=0.5):
    x = convert_to_tensor(input)
    return _where(_C.unary("abs", x) > float(lambd), x, _C.scalar_like(0.0, x))


def softshrink(input, lambd=0.5):
    x = convert_to_tensor(input)
    return x - _clamp(x, -float(lambd), float(lambd))


def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves (a, b) of ``input`` along ``dim``."""
    x = convert_to_tensor(input)
    axis = check_int(dim, "dim") % max(x.ndim, 1)
    if x.ndim == 0 or x.shape[axis] % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} of shape "
                           f"{list(x.shape)} is not")
    a, b = _array_ops.split_by_size(x, x.shape[axis] // 2, axis)
    return a * _C.unary("sigmoid", b)


def prelu(input, weight):
    """max(0, x) + weight * min(0, x), ``weight`` one value or one per channel (dim 1)."""
    x, w = as_tensors(input, weight)
    if w.numel() != 1:
        if x.ndim < 2 or w.numel() != x.shape[1]:
            raise RuntimeError(f"prelu: weight has {w.numel()} values; expected 1 or one per "
                               f"channel of the input of shape {list(x.shape)}")
        w = _C.reshape(w, [w.numel()] + [1] * (x.ndim - 2))
    return _C.unary("relu", x) + w * _negative_part(x)


# ---- dropout of whole channels ------------------------------------------------------------------

def _feature_dropout(dims):
    def fn(input, p=0.5, training=True, inplace=False):
        """Zeroes whole channels (one draw per (sample, channel)) with probability ``p`` and
        scales the kept ones by 1 / (1 - p), as torch's feature dropout."""
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        x = convert_to_tensor(input)
        if x.ndim not in (dims + 1, dims + 2):
            raise RuntimeError(f"dropout{dims}d: expected a {dims + 1}-D or {dims + 2}-D input, "
                               f"got shape {list(x.shape)}")
        if not training or p == 0.0:
            return x
        channels = x.ndim - dims
        mask = _C.dropout(_array_ops.ones_like(_C.reshape(
            _C.reduce("sum", _C.detach(x), list(range(channels, x.ndim)), True), list(
                x.shape[:channels]) + [1] * dims)), float(p), True)
        return _in_place_if(inplace, input, x * mask)
    fn.__name__ = f"dropout{dims}d"
    return fn


dropout1d, dropout2d, dropout3d = (_feature_dropout(d) for d in (1, 2, 3))


# ---- 1-D forms over the 2-D ops, adaptive and power-average pooling -----------------------------

def _as_image(x, op):
    if x.ndim != 3:
        raise RuntimeError(f"{op}: expected a 3-D (N, C, L) input, got shape {list(x.shape)}")
    return _C.expand_dims(x, 2)  # (N, C, 1, L)


def _single(value, name):
    if isinstance(value, (list, tuple)):
        if len(value) != 1:
            raise ValueError(f"{name} must be an int or a 1-tuple, got {value!r}")
        value = value[0]
    return check_int(value, name)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv1d``: input (N, C, L), weight (F, C, k); conv2d over an (N, C, 1, L) view."""
    x, w = as_tensors(input, weight)
    if w.ndim != 3:
        raise RuntimeError(f"conv1d: expected a 3-D (out, in, k) weight, got shape "
                           f"{list(w.shape)}")
    pad_arg = padding if isinstance(padding, str) else (0, _single(padding, "padding"))
    out = conv2d(_as_image(x, "conv1d"), _C.expand_dims(w, 2), bias,
                 (1, _single(stride, "stride")), pad_arg, (1, _single(dilation, "dilation")),
                 groups)
    return _C.squeeze(out, [2])


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    k = _single(kernel_size, "kernel_size")
    s = k if stride is None else _single(stride, "stride")
    out = avg_pool2d(_as_image(convert_to_tensor(input), "avg_pool1d"), (1, k), (1, s),
                     (0, _single(padding, "padding")), ceil_mode, count_include_pad)
    return _C.squeeze(out, [2])


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    k = _single(kernel_size, "kernel_size")
    s = k if stride is None else _single(stride, "stride")
    out = max_pool2d(_as_image(convert_to_tensor(input), "max_pool1d"), (1, k), (1, s),
                     (0, _single(padding, "padding")), dilation, ceil_mode, return_indices)
    return _C.squeeze(out, [2])


def _adaptive_bounds(size, out):
    """torch's adaptive windows: [floor(i size / out), ceil((i + 1) size / out))."""
    return [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]


def _adaptive_pool2d(x, output_size, op, name):
    _check_image(x, name)
    if isinstance(output_size, numbers.Integral):
        output_size = (output_size, output_size)
    oh, ow = (x.shape[2 + i] if s is None else check_int(s, "output_size")
              for i, s in enumerate(output_size))
    rows = []
    for h0, h1 in _adaptive_bounds(x.shape[2], oh):
        cells = [_C.reduce(op, x[:, :, h0:h1, w0:w1], [2, 3], False)
                 for w0, w1 in _adaptive_bounds(x.shape[3], ow)]
        rows.append(_array_ops.stack(cells, 2))  # (N, C, ow)
    return _array_ops.stack(rows, 2)  # (N, C, oh, ow)


@_one_image_or_batch("adaptive_avg_pool2d")
def adaptive_avg_pool2d(input, output_size):
    """``F.adaptive_avg_pool2d``: each output cell averages torch's window of the input (a
    Python loop over the output cells: meant for small outputs such as (1, 1) or (7, 7))."""
    return _adaptive_pool2d(convert_to_tensor(input), output_size, "mean",
                            "adaptive_avg_pool2d")


@_one_image_or_batch("adaptive_max_pool2d")
def adaptive_max_pool2d(input, output_size, return_indices=False):
    if return_indices:
        raise ValueError("adaptive_max_pool2d(return_indices=True) is not supported yet")
    return _adaptive_pool2d(convert_to_tensor(input), output_size, "max", "adaptive_max_pool2d")


def adaptive_avg_pool1d(input, output_size):
    x = _as_image(convert_to_tensor(input), "adaptive_avg_pool1d")
    return _C.squeeze(adaptive_avg_pool2d(x, (1, _single(output_size, "output_size"))), [2])


def adaptive_max_pool1d(input, output_size, return_indices=False):
    x = _as_image(convert_to_tensor(input), "adaptive_max_pool1d")
    return _C.squeeze(adaptive_max_pool2d(x, (1, _single(output_size, "output_size")),
                                          return_indices), [2])


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """(sum over each window of x^p)^(1/p), torch's power-average pooling."""
    kh, kw = _pair(kernel_size, "kernel_size")
    x = convert_to_tensor(input)
    p = float(norm_type)
    total = avg_pool2d(x ** p, (kh, kw), stride, 0, ceil_mode) * float(kh * kw)
    return total ** (1.0 / p)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _single(kernel_size, "kernel_size")
    p = float(norm_type)
    total = avg_pool1d(convert_to_tensor(input) ** p, k, stride, 0, ceil_mode) * float(k)
    return total ** (1.0 / p)


# ---- channel rearrangements ---------------------------------------------------------------------

def pixel_shuffle(input, upscale_factor):
    """(N, C r², H, W) to (N, C, H r, W r)."""
    x = convert_to_tensor(input)
    r = check_int(upscale_factor, "upscale_factor")
    _check_image(x, "pixel_shuffle")
    n, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's channels ({c}) to be divisible "
                           f"by the square of upscale_factor ({r * r})")
    x = _C.reshape(_C.contiguous(x), [n, c // (r * r), r, r, h, w])
    return _C.reshape(_C.contiguous(_C.permute(x, [0, 1, 4, 2, 5, 3])), [n, c // (r * r),
                                                                         h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """(N, C, H r, W r) to (N, C r², H, W), pixel_shuffle's inverse."""
    x = convert_to_tensor(input)
    r = check_int(downscale_factor, "downscale_factor")
    _check_image(x, "pixel_unshuffle")
    n, c, h, w = x.shape
    if h % r or w % r:
        raise RuntimeError(f"pixel_unshuffle expects height ({h}) and width ({w}) to be "
                           f"divisible by downscale_factor ({r})")
    x = _C.reshape(_C.contiguous(x), [n, c, h // r, r, w // r, r])
    return _C.reshape(_C.contiguous(_C.permute(x, [0, 1, 3, 5, 2, 4])), [n, c * r * r,
                                                                         h // r, w // r])


def channel_shuffle(input, groups):
    x = convert_to_tensor(input)
    g = check_int(groups, "groups")
    c = x.shape[1]
    if g <= 0 or c % g:
        raise RuntimeError(f"channel_shuffle: the number of channels ({c}) must be divisible "
                           f"by groups ({g})")
    rest = list(x.shape[2:])
    grouped = _C.reshape(_C.contiguous(x), [x.shape[0], g, c // g] + rest)
    return _C.reshape(_C.contiguous(_C.transpose(grouped, 1, 2)), list(x.shape))


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1ᵀ W_o x2 + b_o with ``weight`` (out, in1, in2)."""
    x1, x2, w = (convert_to_tensor(v) for v in (input1, input2, weight))
    out_features, in1, in2 = w.shape
    left = _C.matmul(x1, _C.reshape(_C.contiguous(_C.permute(w, [1, 0, 2])),
                                    [in1, out_features * in2]))  # (..., out * in2)
    left = _C.reshape(left, list(x1.shape[:-1]) + [out_features, in2])
    out = _C.reduce("sum", left * _C.expand_dims(x2, x2.ndim - 1), [x1.ndim], False)
    return out if bias is None else out + bias


# ---- normalization ------------------------------------------------------------------------------

def _normalized(x, axes, eps):
    mean = _C.reduce("mean", x, axes, True)
    centered = x - mean
    var = _C.reduce("mean", centered * centered, axes, True)
    return centered * _C.unary("rsqrt", var + float(eps))


def _channel_shaped(v, x):
    """A per-channel (C,) vector shaped to broadcast over (N, C, ...)."""
    return _C.reshape(convert_to_tensor(v), [x.shape[1]] + [1] * (x.ndim - 2))


def _affine(y, x, weight, bias):
    if weight is not None:
        y = y * _channel_shaped(weight, x)
    if bias is not None:
        y = y + _channel_shaped(bias, x)
    return y


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """``F.batch_norm`` over (N, C, ...): training normalizes with the batch's statistics
    (population variance) and moves ``running_mean``/``running_var`` toward them in place
    (unbiased variance, torch's rule); eval uses the running statistics."""
    x = convert_to_tensor(input)
    if x.ndim < 2:
        raise ValueError(f"batch_norm: expected an (N, C, ...) input, got shape {list(x.shape)}")
    axes = [0] + list(range(2, x.ndim))
    if training:
        count = x.numel() // x.shape[1]
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input "
                             f"size {list(x.shape)}")
        y = _normalized(x, axes, eps)
        if running_mean is not None and running_var is not None:
            with no_grad():
                stats = _C.detach(x)
                mean = _C.reduce("mean", stats, axes, False)
                var = _C.reduce("mean", (stats - _channel_shaped(mean, stats)) ** 2.0, axes,
                                False) * (count / (count - 1))
                m = float(momentum)
                running_mean.copy_(running_mean * (1.0 - m) + mean * m)
                running_var.copy_(running_var * (1.0 - m) + var * m)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var are needed when not "
                             "training")
        y = (x - _channel_shaped(running_mean, x)) * _C.unary(
            "rsqrt", _channel_shaped(running_var, x) + float(eps))
    return _affine(y, x, weight, bias)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Each (sample, channel) normalized over its own spatial positions."""
    x = convert_to_tensor(input)
    if not use_input_stats or running_mean is not None or running_var is not None:
        raise ValueError("instance_norm with running statistics is not supported yet")
    return _affine(_normalized(x, list(range(2, x.ndim)), eps), x, weight, bias)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalizes over the last ``len(normalized_shape)`` dimensions, whose shape they must be;
    ``weight``/``bias`` have that shape."""
    x = convert_to_tensor(input)
    shape = [normalized_shape] if isinstance(normalized_shape, numbers.Integral) else \
        [int(s) for s in normalized_shape]
    if list(x.shape[x.ndim - len(shape):]) != shape or len(shape) > x.ndim:
        raise RuntimeError(f"layer_norm: normalized_shape {shape} does not match the last "
                           f"dimensions of the input of shape {list(x.shape)}")
    y = _normalized(x, list(range(x.ndim - len(shape), x.ndim)), eps)
    if weight is not None:
        y = y * weight
    return y if bias is None else y + bias


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    x = convert_to_tensor(input)
    n, c = x.shape[0], x.shape[1]
    g = check_int(num_groups, "num_groups")
    if g <= 0 or c % g:
        raise RuntimeError(f"group_norm: the number of channels ({c}) must be divisible by "
                           f"num_groups ({g})")
    grouped = _C.reshape(_C.contiguous(x), [n, g, -1])
    y = _C.reshape(_normalized(grouped, [2], eps), list(x.shape))
    return _affine(y, x, weight, bias)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha/size * sum of x² over ``size`` neighbouring channels)^beta, with torch's
    window (size // 2 channels before, (size - 1) // 2 after, zero-padded)."""
    x = convert_to_tensor(input)
    if x.ndim < 3:
        raise ValueError(f"local_response_norm: expected 3D or higher input, got shape "
                         f"{list(x.shape)}")
    square = x * x
    pairs = [[0, 0] for _ in range(x.ndim)]
    pairs[1] = [size // 2, (size - 1) // 2]
    padded = _tf_pad(square, pairs)
    c = x.shape[1]
    window = padded[:, 0:c]
    for offset in range(1, size):
        window = window + padded[:, offset:offset + c]
    return x / (window * (float(alpha) / size) + float(k)) ** float(beta)


# ---- more losses --------------------------------------------------------------------------------

def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d²/beta where |d| < beta, else |d| - beta/2."""
    x, y = as_tensors(input, target)
    d = _C.unary("abs", x - y)
    if beta == 0:
        return _reduce(d, reduction)
    quadratic = _clamp(d, None, float(beta))  # |d| up to beta, then the linear part
    loss = quadratic * quadratic * (0.5 / beta) + (d - quadratic)
    return _reduce(loss, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d² where |d| < delta, else delta (|d| - delta/2): smooth_l1_loss * delta."""
    return smooth_l1_loss(input, target, reduction=reduction, beta=delta) * float(delta)


def _reduce_batchmean(loss, reduction, batch):
    if reduction == "batchmean":
        return _C.reduce("sum", loss, None, False) / float(batch)
    return _reduce(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target (log target - input) summed as ``reduction`` says ('batchmean' divides the sum by
    the batch size, the mathematically correct KL divergence); ``input`` is log-probabilities."""
    x, y = as_tensors(input, target)
    if log_target:
        loss = _C.unary("exp", y) * (y - x)
    else:  # xlogy: 0 log 0 = 0
        safe = _where(y > 0.0, y, _C.scalar_like(1.0, y))
        loss = y * _C.unary("log", safe) - y * x
    return _reduce_batchmean(loss, reduction, x.shape[0] if x.ndim else 1)


def _norm_along(x, dim, keepdim=False):
    return _C.unary("sqrt", _C.reduce("sum", x * x, [dim], keepdim))


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """x1·x2 / max(||x1|| ||x2||, eps) along ``dim`` (torch 1.13's formula)."""
    a, b = as_tensors(x1, x2)
    d = check_int(dim, "dim")
    dot = _C.reduce("sum", a * b, [d], False)
    norms = _C.reduce("sum", a * a, [d], False) * _C.reduce("sum", b * b, [d], False)
    return dot * _C.unary("rsqrt", _C.binary("maximum", norms, _C.scalar_like(
        float(eps) ** 2, norms)))


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """||x1 - x2 + eps||_p over the last dimension."""
    a, b = as_tensors(x1, x2)
    diff = a - b + float(eps)
    if p == 2:
        return _norm_along(diff, -1, keepdim)
    if p == 1:
        return _C.reduce("sum", _C.unary("abs", diff), [-1], bool(keepdim))
    p = float(p)
    return _C.reduce("sum", _C.unary("abs", diff) ** p, [-1], bool(keepdim)) ** (1.0 / p)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    a, b, y = (convert_to_tensor(v) for v in (input1, input2, target))
    return _reduce(_C.unary("relu", -y * (a - b) + float(margin)), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target is 1, max(0, margin - x) where it is -1 (torch adds both terms with
    their masks, so any other target value mixes them the same way)."""
    x, y = as_tensors(input, target)
    zero = _C.scalar_like(0.0, x)
    positive = _where(y != -1.0, x, zero)
    negative = _where(y != 1.0, _C.unary("relu", float(margin) - x), zero)
    return _reduce(positive + negative, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    x, y = as_tensors(input, target)
    return _reduce(_math.softplus(-y * x), reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _C.binary("minimum", d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(_C.unary("relu", d_pos - d_neg + float(margin)), reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos where target is 1, max(0, cos - margin) where it is -1; cos with torch's
    eps of 1e-12 on each squared norm."""
    a, b, y = (convert_to_tensor(v) for v in (input1, input2, target))
    eps = 1e-12
    dot = _C.reduce("sum", a * b, [-1], False)
    cos = dot / _C.unary("sqrt", (_C.reduce("sum", a * a, [-1], False) + eps) *
                         (_C.reduce("sum", b * b, [-1], False) + eps))
    zero = _C.scalar_like(0.0, cos)
    loss = _where(y == 1.0, 1.0 - cos, zero) + _where(
        y == -1.0, _C.unary("relu", cos - float(margin)), zero)
    return _reduce(loss, reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    if full:
        raise ValueError("poisson_nll_loss(full=True) is not supported yet")
    x, y = as_tensors(input, target)
    loss = _C.unary("exp", x) - y * x if log_input else x - y * _C.unary("log", x + float(eps))
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """0.5 (log max(var, eps) + (input - target)² / max(var, eps)) (+ 0.5 log 2π if ``full``)."""
    x, y, v = (convert_to_tensor(v) for v in (input, target, var))
    if v.ndim == x.ndim - 1 or (v.ndim == x.ndim and v.shape[-1] == 1 and x.shape[-1] != 1):
        v = v if v.ndim == x.ndim else _C.expand_dims(v, v.ndim)
    with no_grad():  # torch clamps var without a gradient through the clamp
        floor = _C.binary("maximum", _C.detach(v), _C.scalar_like(float(eps), v)) - _C.detach(v)
    v = v + floor
    loss = (_C.unary("log", v) + (x - y) ** 2.0 / v) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    if weight is not None:
        raise ValueError("multilabel_soft_margin_loss(weight=) is not supported yet")
    x, y = as_tensors(input, target)
    per_class = -(y * logsigmoid(x) + (1.0 - y) * logsigmoid(-x))
    return _reduce(_C.reduce("mean", per_class, [x.ndim - 1], False), reduction)


relu_ = lambda input: relu(input, True)  # noqa: E731 - torch's F.name_ forms
elu_ = lambda input, alpha=1.0: elu(input, alpha, True)  # noqa: E731
celu_ = lambda input, alpha=1.0: celu(input, alpha, True)  # noqa: E731
selu_ = lambda input: selu(input, True)  # noqa: E731
hardtanh_ = lambda input, min_val=-1.0, max_val=1.0: hardtanh(input, min_val, max_val, True)  # noqa
leaky_relu_ = lambda input, negative_slope=0.01: leaky_relu(input, negative_slope, True)  # noqa
threshold_ = lambda input, threshold, value: globals()["threshold"](input, threshold, value, True)  # noqa


__getattr__ = _unsupported.module_getattr(__name__, "torch.nn.functional", {
    "fold": "reshaping unfold's output (fold is not there yet)",
    "scaled_dot_product_attention": "gpuaccel.nn.scaled_dot_product_attention",
})


# torch.cuda.amp.autocast's lists (_torch_autocast): these compute in the block's half dtype on
# GPU tensors, and these in float32.
linear, conv1d, conv2d, conv3d, conv_transpose2d, conv_transpose3d, bilinear = map(
    _autocast.lower_precision,
    (linear, conv1d, conv2d, conv3d, conv_transpose2d, conv_transpose3d, bilinear))
(softmax, log_softmax, cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss,
 binary_cross_entropy, binary_cross_entropy_with_logits, kl_div, layer_norm, group_norm) = map(
    _autocast.full_precision,
    (softmax, log_softmax, cross_entropy, nll_loss, mse_loss, l1_loss, smooth_l1_loss,
     binary_cross_entropy, binary_cross_entropy_with_logits, kl_div, layer_norm, group_norm))
