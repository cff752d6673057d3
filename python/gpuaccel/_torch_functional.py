"""``torch.nn.functional`` (``import gpuaccel.nn.functional as F``): PyTorch's layouts (NCHW
images, (out, in) linear weights, (out, in, kh, kw) convolution weights) and argument names over
the NHWC C++ ops; ``gpuaccel.nn`` itself keeps ``tf.nn``'s NHWC names.

Losses take ``reduction='mean' | 'sum' | 'none'`` as torch does.
"""
import numbers

from . import _C
from . import _unsupported
from . import image as _image
from . import math as _math
from ._array_ops import pad as _tf_pad
from ._convert import as_tensors, convert_to_tensor
from ._int_range import check_int
from ._tensor import Tensor

__all__ = ["relu", "leaky_relu", "sigmoid", "tanh", "gelu", "silu", "softplus", "softmax",
           "log_softmax", "dropout", "linear", "conv2d", "conv_transpose2d", "max_pool2d",
           "avg_pool2d", "unfold",
           "pad", "one_hot", "embedding", "cross_entropy", "nll_loss", "mse_loss", "l1_loss",
           "binary_cross_entropy", "binary_cross_entropy_with_logits", "normalize"]


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
    return _C.unary("relu", convert_to_tensor(input))


def leaky_relu(input, negative_slope=0.01, inplace=False):
    x = convert_to_tensor(input)
    return _C.binary("maximum", x, _C.binary("mul", x, _C.scalar_like(float(negative_slope), x)))


def sigmoid(input):
    return _C.unary("sigmoid", convert_to_tensor(input))


def tanh(input):
    return _C.unary("tanh", convert_to_tensor(input))


def gelu(input, approximate="none"):
    if approximate != "none":
        raise ValueError("gelu(approximate='tanh') is not supported yet; the exact form is")
    return _C.unary("gelu", convert_to_tensor(input))


def silu(input, inplace=False):
    x = convert_to_tensor(input)
    return _C.binary("mul", x, _C.unary("sigmoid", x))


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


def _padded_nhwc(x, padding, value=0.0):
    ph, pw = _pair(padding, "padding")
    x = _nhwc(x)
    return _tf_pad(x, [[0, 0], [ph, ph], [pw, pw], [0, 0]], constant_values=value) \
        if ph or pw else x


def _conv_operands(op, input, weight, bias, groups, in_axis):
    """Input, weight and bias as tensors, after torch's checks: an (N, C, H, W) image, groups=1,
    and C on the weight's axis ``in_axis`` (1 for conv2d's (out, in, kh, kw), 0 for
    conv_transpose2d's (in, out, kh, kw))."""
    x, w = as_tensors(input, weight)
    _check_image(x, op)
    if groups != 1:
        raise ValueError(f"{op}(groups != 1) is not supported yet")
    if w.ndim != 4 or w.shape[in_axis] != x.shape[1]:
        expected = ["out", "kh", "kw"]
        expected.insert(in_axis, str(x.shape[1]))
        raise RuntimeError(f"{op}: weight of shape {list(w.shape)} does not fit an input with "
                           f"{x.shape[1]} channels (expected ({', '.join(expected)}))")
    return x, w, None if bias is None else as_tensors(x, bias)[1]


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """``F.conv2d``: input (N, C, H, W), weight (F, C, kh, kw); ``padding`` an int, a pair,
    'valid' or 'same'."""
    x, w, bias = _conv_operands("conv2d", input, weight, bias, groups, in_axis=1)
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    kernel = _C.permute(w, [2, 3, 1, 0])
    if isinstance(padding, str):
        mode = padding.upper()
        if mode not in ("VALID", "SAME") or (mode == "SAME" and (sh, sw) != (1, 1)):
            raise ValueError(f"padding={padding!r}: use 'valid', or 'same' with stride 1")
        out = _C.conv2d(_nhwc(x), kernel, bias, sh, sw, mode, dh, dw)
    else:
        out = _C.conv2d(_padded_nhwc(x, padding), kernel, bias, sh, sw, "VALID", dh, dw)
    return _nchw(out)


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
    if labels._dtype_name in ("int32", "int64", "uint8") and labels.numel():
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


__getattr__ = _unsupported.module_getattr(__name__, "torch.nn.functional", {
    "interpolate": "resizing the images with NumPy/PIL before building the tensor",
    "batch_norm": "gpuaccel.nn.batch_normalization (NHWC) or keras.layers.BatchNormalization",
    "layer_norm": "gpuaccel.nn.layer_normalization or keras.layers.LayerNormalization",
    "fold": "reshaping unfold's output (fold is not there yet)",
    "conv1d": "conv2d on an (N, C, 1, L) view",
    "scaled_dot_product_attention": "gpuaccel.nn.scaled_dot_product_attention",
})
