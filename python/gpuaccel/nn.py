"""``tf.nn`` names (and a few ``torch.nn.functional`` ones) for the neural-network ops.

Images are NHWC and convolution kernels (height, width, in_channels, filters), as in Keras.
Every op here records its gradient."""
import numbers

from . import _C, errors
from ._promotion import as_operands, as_tensor
from ._tensor import Tensor, tensor

__all__ = ["conv2d", "max_pool2d", "avg_pool2d", "relu", "sigmoid", "tanh", "gelu", "softmax",
           "log_softmax", "dropout", "batch_normalization", "layer_normalization",
           "embedding_lookup", "scaled_dot_product_attention",
           "sparse_softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
           "mean_squared_error", "one_hot"]


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
    return float(value)


def _padding(padding):
    if not isinstance(padding, str):
        raise ValueError(f"padding must be 'VALID' or 'SAME', got {padding!r}")
    return padding


def conv2d(input, filters, strides=1, padding="VALID", dilations=1, bias=None):
    """``tf.nn.conv2d``: input (N, H, W, C), filters (KH, KW, C, F)."""
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilations, "dilations")
    return _C.conv2d(input, filters, bias, sh, sw, _padding(padding), dh, dw)


def max_pool2d(input, ksize, strides, padding="VALID"):
    kh, kw = _pair(ksize, "ksize")
    sh, sw = _pair(strides, "strides")
    return _C.pool2d(input, True, kh, kw, sh, sw, _padding(padding))


def avg_pool2d(input, ksize, strides, padding="VALID"):
    """Average pooling; padded positions are not counted in the average (Keras's rule)."""
    kh, kw = _pair(ksize, "ksize")
    sh, sw = _pair(strides, "strides")
    return _C.pool2d(input, False, kh, kw, sh, sw, _padding(padding))


def relu(x):
    return _C.unary("relu", as_tensor(x, "relu", "x"))


def sigmoid(x):
    return _C.unary("sigmoid", as_tensor(x, "sigmoid", "x"))


def tanh(x):
    return _C.unary("tanh", as_tensor(x, "tanh", "x"))


def gelu(x, approximate=False):
    if approximate:
        raise NotImplementedError("gelu(approximate=True) (the tanh form) is not implemented; "
                                  "the default exact form is")
    return _C.unary("gelu", x)


def softmax(logits, axis=-1):
    return _C.softmax(as_tensor(logits, "Softmax", "logits"), axis, False)


def log_softmax(logits, axis=-1):
    return _C.softmax(as_tensor(logits, "LogSoftmax", "logits"), axis, True)


def dropout(x, rate, training=True):
    """Inverted dropout (``tf.nn.dropout``): kept values are scaled by 1 / (1 - rate)."""
    return _C.dropout(as_tensor(x, "Dropout", "x"), _rate(rate), bool(training))


def batch_normalization(x, gamma, beta, moving_mean, moving_var, momentum=0.99, epsilon=1e-3,
                        training=False):
    """Keras's BatchNormalization math over the last axis; updates the moving statistics in
    place when training."""
    return _C.batch_norm(x, gamma, beta, moving_mean, moving_var, float(momentum), float(epsilon),
                         bool(training))


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


def one_hot(indices, depth, dtype="float32"):
    if not isinstance(indices, Tensor):
        indices = tensor(indices, dtype="int64")
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral):
        raise TypeError(f"[OneHot] depth must be an int, got {type(depth).__name__} {depth!r}")
    if not 0 <= depth < 2**63:
        raise errors.InvalidArgumentError(
            f"[OneHot] depth must be in [0, 2**63 - 1], got {depth}", "OneHot")
    return _C.one_hot(indices, int(depth), dtype)
