"""Keras's per-example metric functions that are not losses (``keras.metrics.binary_accuracy``,
``top_k_categorical_accuracy``, ``pearson_correlation``...), composed from gpuaccel's ops as the
loss formulas are (``_loss_functions.py``). ``metrics.py`` averages each in its metric class.
Results are float32 as Keras's (floatx)."""
from . import ops
from ._loss_functions import EPSILON, same_rank


def _as_tensor(value):
    return ops.convert_to_tensor(value)


def _floatx(values):
    return ops.cast(values, "float32")


def accuracy(y_true, y_pred):
    y_true, y_pred = same_rank(_as_tensor(y_true), _as_tensor(y_pred))
    return _floatx(ops.equal(y_true, ops.cast(y_pred, y_true.dtype)))


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true, y_pred = same_rank(_as_tensor(y_true), _as_tensor(y_pred))
    return _floatx(ops.equal(y_true, ops.cast(ops.greater(y_pred, threshold), y_true.dtype)))


def _label_matches(labels, y_pred):
    """Whether each integer label is its row's argmax; a trailing label axis of 1 is kept in
    the result's shape, as Keras keeps it."""
    shape = tuple(labels.shape)
    if len(shape) == len(y_pred.shape) and shape[-1] == 1:
        labels = ops.squeeze(labels, -1)
    predicted = ops.cast(ops.argmax(y_pred, axis=-1), "float32")
    return ops.reshape(_floatx(ops.equal(ops.cast(labels, "float32"), predicted)),
                       shape if len(shape) == len(y_pred.shape) else tuple(labels.shape))


def categorical_accuracy(y_true, y_pred):
    y_pred = _as_tensor(y_pred)
    return _label_matches(ops.argmax(_as_tensor(y_true), axis=-1), y_pred)


def sparse_categorical_accuracy(y_true, y_pred):
    matches = _label_matches(_as_tensor(y_true), _as_tensor(y_pred))
    if len(matches.shape) > 1 and matches.shape[-1] == 1:
        matches = ops.squeeze(matches, -1)
    return matches


def _in_top_k(labels, y_pred, k):
    shape = tuple(labels.shape)
    scores = ops.reshape(y_pred, (-1, y_pred.shape[-1])) if len(y_pred.shape) > 2 else y_pred
    matches = _floatx(ops.in_top_k(ops.reshape(labels, (-1,)), scores, k))
    return ops.reshape(matches, shape)


def top_k_categorical_accuracy(y_true, y_pred, k=5):
    return _in_top_k(ops.argmax(_as_tensor(y_true), axis=-1), _as_tensor(y_pred), k)


def sparse_top_k_categorical_accuracy(y_true, y_pred, k=5, from_sorted_ids=False):
    y_true, y_pred = _as_tensor(y_true), _as_tensor(y_pred)
    if from_sorted_ids:  # y_pred holds the ids, best first: is the label among the first k?
        labels = ops.cast(ops.reshape(y_true, (-1, 1)), y_pred.dtype)
        hits = ops.any(ops.equal(labels, y_pred[:, :k]), axis=1)
        return ops.reshape(_floatx(hits), tuple(y_true.shape))
    return _in_top_k(ops.cast(y_true, "int64"), y_pred, k)


def cosine_similarity(y_true, y_pred, axis=-1):
    """The metric's sign: +1 for equal directions (the loss of the same name is its negative)."""
    y_true, y_pred = same_rank(_floatx(_as_tensor(y_true)), _floatx(_as_tensor(y_pred)))
    return ops.sum(ops.normalize(y_true, axis=axis) * ops.normalize(y_pred, axis=axis), axis=axis)


def pearson_correlation(y_true, y_pred, axis=-1):
    y_true, y_pred = same_rank(_floatx(_as_tensor(y_true)), _floatx(_as_tensor(y_pred)))
    true_centered = y_true - ops.mean(y_true, axis=axis, keepdims=True)
    pred_centered = y_pred - ops.mean(y_pred, axis=axis, keepdims=True)
    true_centered = true_centered / ops.std(true_centered, axis=axis, keepdims=True)
    pred_centered = pred_centered / ops.std(pred_centered, axis=axis, keepdims=True)
    return ops.mean(true_centered * pred_centered, axis=axis)


def concordance_correlation(y_true, y_pred, axis=-1):
    """Keras's formula verbatim, including its covariance term (y_true - mean(y_pred))."""
    y_true, y_pred = same_rank(_floatx(_as_tensor(y_true)), _floatx(_as_tensor(y_pred)))
    true_mean = ops.mean(y_true, axis=axis, keepdims=True)
    pred_mean = ops.mean(y_pred, axis=axis, keepdims=True)
    true_var = ops.var(y_true - true_mean, axis=axis, keepdims=True)
    pred_var = ops.var(y_pred - pred_mean, axis=axis, keepdims=True)
    covariance = (y_true - pred_mean) * (y_pred - pred_mean)
    norm = true_var + pred_var + ops.square(true_mean - pred_mean)
    return ops.mean(2.0 * covariance / (norm + EPSILON), axis=axis)
