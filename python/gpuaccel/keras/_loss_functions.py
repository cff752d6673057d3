"""Keras's per-example loss formulas (``keras.losses.huber``, ``hinge``, ``kl_divergence``...),
composed from gpuaccel's ops so autograd gives their gradients and a Python loss traced into the
C++ step replays them.

One formula per name, shared: ``losses.py`` wraps each in its Loss class (reduction, sample
weights) and exposes it as Keras's function, and ``metrics.py`` averages the same function in its
metric (``keras.metrics.Hinge`` is the mean of ``keras.losses.hinge``). Every formula keeps
Keras's clipping constants (``EPSILON`` = Keras's ``backend.epsilon()``) so saturated inputs give
Keras's numbers. No Python branch looks at data: a loss must trace the same whatever the batch."""
import numpy as np

from ..dtypes import FLOATING_NAMES
from . import ops

EPSILON = 1e-7
_LEFT_OUT = -1e30  # a log-sum-exp term for an excluded pair (circle): exp() of it is 0


def _float_predictions(y_pred):
    """``y_pred`` as a tensor of a float dtype (integer predictions become float32)."""
    y_pred = ops.convert_to_tensor(y_pred)
    if y_pred.dtype not in FLOATING_NAMES:
        y_pred = ops.cast(y_pred, "float32")
    return y_pred


def _float_pair(y_true, y_pred):
    """(y_true, y_pred) as float tensors, y_true in y_pred's dtype (Keras casts the labels)."""
    y_pred = _float_predictions(y_pred)
    return ops.cast(ops.convert_to_tensor(y_true), y_pred.dtype), y_pred


def same_rank(x1, x2, expand_rank_1=True):
    """Keras's ``squeeze_or_expand_to_same_rank``: when the ranks differ by one and the longer has
    a last axis of 1, squeeze it (or expand a rank-1 partner when ``expand_rank_1``)."""
    r1, r2 = len(x1.shape), len(x2.shape)
    if r1 == r2 + 1 and x1.shape[-1] == 1:
        if r2 == 1 and expand_rank_1:
            x2 = ops.expand_dims(x2, -1)
        else:
            x1 = ops.squeeze(x1, -1)
    if r2 == r1 + 1 and x2.shape[-1] == 1:
        if r1 == 1 and expand_rank_1:
            x1 = ops.expand_dims(x1, -1)
        else:
            x2 = ops.squeeze(x2, -1)
    return x1, x2


def _aligned(y_true, y_pred):
    return same_rank(*_float_pair(y_true, y_pred))


def mean_squared_error(y_true, y_pred):
    y_true, y_pred = _aligned(y_true, y_pred)
    return ops.mean(ops.square(y_true - y_pred), axis=-1)


def mean_absolute_error(y_true, y_pred):
    y_true, y_pred = _aligned(y_true, y_pred)
    return ops.mean(ops.abs(y_true - y_pred), axis=-1)


def mean_absolute_percentage_error(y_true, y_pred):
    y_true, y_pred = _aligned(y_true, y_pred)
    diff = ops.abs((y_true - y_pred) / ops.maximum(ops.abs(y_true), EPSILON))
    return 100.0 * ops.mean(diff, axis=-1)


def mean_squared_logarithmic_error(y_true, y_pred):
    y_true, y_pred = _aligned(y_true, y_pred)
    first = ops.log(ops.maximum(y_pred, EPSILON) + 1.0)
    second = ops.log(ops.maximum(y_true, EPSILON) + 1.0)
    return ops.mean(ops.square(first - second), axis=-1)


def huber(y_true, y_pred, delta=1.0):
    y_true, y_pred = _aligned(y_true, y_pred)
    error = y_pred - y_true
    abs_error = ops.abs(error)
    delta = float(delta)
    return ops.mean(ops.where(abs_error <= delta, 0.5 * ops.square(error),
                              delta * abs_error - 0.5 * delta * delta), axis=-1)


def log_cosh(y_true, y_pred):
    """log(cosh(x)) as x + softplus(-2x) - log(2): finite for large |x| where cosh overflows."""
    y_true, y_pred = _aligned(y_true, y_pred)
    x = y_pred - y_true
    return ops.mean(x + ops.softplus(-2.0 * x) - 0.6931471805599453, axis=-1)


def _hinge_labels(y_true):
    """Keras's rule: labels that are all 0 or 1 become -1/1; any other labels are kept. Chosen by
    ``where`` on the batch's own test, not a Python ``if``, so it traces."""
    is_binary = ops.all(ops.logical_or(ops.equal(y_true, 0.0), ops.equal(y_true, 1.0)))
    return ops.where(is_binary, 2.0 * y_true - 1.0, y_true)


def hinge(y_true, y_pred):
    y_true, y_pred = _float_pair(y_true, y_pred)
    return ops.mean(ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0), axis=-1)


def squared_hinge(y_true, y_pred):
    y_true, y_pred = _float_pair(y_true, y_pred)
    return ops.mean(ops.square(ops.maximum(1.0 - _hinge_labels(y_true) * y_pred, 0.0)), axis=-1)


def categorical_hinge(y_true, y_pred):
    y_true, y_pred = _float_pair(y_true, y_pred)
    positive = ops.sum(y_true * y_pred, axis=-1)
    negative = ops.max((1.0 - y_true) * y_pred, axis=-1)
    return ops.maximum(negative - positive + 1.0, 0.0)


def kl_divergence(y_true, y_pred):
    y_true, y_pred = _float_pair(y_true, y_pred)
    y_true = ops.clip(y_true, EPSILON, 1.0)
    y_pred = ops.clip(y_pred, EPSILON, 1.0)
    return ops.sum(y_true * ops.log(y_true / y_pred), axis=-1)


def poisson(y_true, y_pred):
    y_true, y_pred = _float_pair(y_true, y_pred)
    return ops.mean(y_pred - y_true * ops.log(y_pred + EPSILON), axis=-1)


def cosine_similarity(y_true, y_pred, axis=-1):
    y_true, y_pred = _aligned(y_true, y_pred)
    return -ops.sum(ops.normalize(y_true, axis=axis) * ops.normalize(y_pred, axis=axis),
                    axis=axis)


def _smoothed(y_true, label_smoothing, classes):
    """Keras's label smoothing: y (1 - s) + s / classes (classes = 2 for binary labels)."""
    if not label_smoothing:
        return y_true
    return y_true * (1.0 - label_smoothing) + label_smoothing / classes


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _float_pair(y_true, y_pred)
    y_true = _smoothed(y_true, label_smoothing, 2.0)
    return ops.mean(ops.binary_crossentropy(y_true, y_pred, from_logits=from_logits), axis=axis)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _float_pair(y_true, y_pred)
    y_true = _smoothed(y_true, label_smoothing, float(y_true.shape[-1]))
    return ops.categorical_crossentropy(y_true, y_pred, from_logits=from_logits, axis=axis)


def binary_focal_crossentropy(y_true, y_pred, apply_class_balancing=False, alpha=0.25,
                              gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1):
    y_true, y_pred = _float_pair(y_true, y_pred)
    y_true = _smoothed(y_true, label_smoothing, 2.0)
    if from_logits:
        y_pred = ops.sigmoid(y_pred)
    bce = ops.binary_crossentropy(y_true, y_pred)
    p_t = y_true * y_pred + (1.0 - y_true) * (1.0 - y_pred)
    focal = ops.power(1.0 - p_t, gamma) * bce
    if apply_class_balancing:
        focal = (y_true * alpha + (1.0 - y_true) * (1.0 - alpha)) * focal
    return ops.mean(focal, axis=axis)


def categorical_focal_crossentropy(y_true, y_pred, alpha=0.25, gamma=2.0, from_logits=False,
                                   label_smoothing=0.0, axis=-1):
    y_true, y_pred = _float_pair(y_true, y_pred)
    y_true = _smoothed(y_true, label_smoothing, float(y_true.shape[-1]))
    if from_logits:
        y_pred = ops.softmax(y_pred, axis=axis)
    output = ops.clip(y_pred / ops.sum(y_pred, axis=axis, keepdims=True), EPSILON, 1.0 - EPSILON)
    cross_entropy = -y_true * ops.log(output)
    weight = ops.power(1.0 - output, gamma) * alpha
    return ops.sum(weight * cross_entropy, axis=axis)


def categorical_generalized_cross_entropy(y_true, y_pred, q):
    """(1 - p^q) / q of the true class's probability p; integer labels as Keras takes them."""
    y_pred = _float_predictions(y_pred)
    picks = ops.one_hot(ops.cast(ops.convert_to_tensor(y_true), "int64"), y_pred.shape[-1],
                        dtype=y_pred.dtype)
    p = ops.sum(y_pred * picks, axis=-1)
    return (1.0 - ops.power(p, q)) / q


def dice(y_true, y_pred, axis=None):
    y_true, y_pred = _float_pair(y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    union = ops.sum(y_true, axis=axis) + ops.sum(y_pred, axis=axis) + EPSILON
    return 1.0 - 2.0 * intersection / union


def tversky(y_true, y_pred, alpha=0.5, beta=0.5, axis=None):
    y_true, y_pred = _float_pair(y_true, y_pred)
    intersection = ops.sum(y_true * y_pred, axis=axis)
    false_positives = ops.sum((1.0 - y_pred) * y_true, axis=axis)
    false_negatives = ops.sum(y_pred * (1.0 - y_true), axis=axis)
    return 1.0 - intersection / (intersection + false_positives * alpha
                                 + false_negatives * beta + EPSILON)


def circle(y_true, y_pred, ref_labels=None, ref_embeddings=None, remove_diagonal=True,
           gamma=80, margin=0.4):
    """Circle loss (Sun et al. 2020) of L2-normalized embeddings ``y_pred`` with integer labels
    ``y_true``, against themselves or ``ref_embeddings``/``ref_labels``: softplus of the
    log-sum-exp over the positive pairs plus that over the negative pairs, per query. A query
    with no positive (or no negative) pair has loss 0, which Keras masks out of the mean
    (``circle_mean_weights``)."""
    y_pred = ops.convert_to_tensor(y_pred)
    labels = ops.reshape(ops.cast(ops.convert_to_tensor(y_true), "float32"), (-1, 1))
    references = y_pred if ref_embeddings is None else ops.convert_to_tensor(ref_embeddings)
    ref = labels if ref_labels is None else ops.reshape(
        ops.cast(ops.convert_to_tensor(ref_labels), "float32"), (-1, 1))
    distances = ops.maximum(1.0 - ops.matmul(y_pred, ops.transpose(references)), 0.0)
    positive = ops.equal(labels, ops.transpose(ref))
    negative = ops.logical_not(positive)
    if remove_diagonal:
        positive = ops.logical_and(positive, ops.logical_not(
            ops.eye(labels.shape[0], ref.shape[0], dtype="bool")))
    positive_f, negative_f = ops.cast(positive, "float32"), ops.cast(negative, "float32")
    positive_weights = ops.maximum((margin + distances) * positive_f, 0.0)
    negative_weights = ops.maximum((1.0 + margin - distances) * negative_f, 0.0)
    positive_terms = -gamma * positive_weights * (margin - distances)
    negative_terms = gamma * negative_weights * ((1.0 - margin) - distances)
    # Keras fills the pairs left out with -inf; gpuaccel's where multiplies both branches by
    # the mask (0 * -inf = NaN), so a finite stand-in that exp() still takes to 0
    positive_loss = ops.logsumexp(ops.where(positive, positive_terms, _LEFT_OUT), axis=1)
    negative_loss = ops.logsumexp(ops.where(negative, negative_terms, _LEFT_OUT), axis=1)
    return ops.softplus(positive_loss + negative_loss)


def circle_mean_weights(losses):
    """Keras's mask of a circle loss (the queries with a loss above 0), as the per-query weights
    that make the batch mean Keras's: ``total / valid`` for those queries, 0 for the others."""
    valid = ops.cast(ops.greater(losses, 0.0), losses.dtype)
    return valid * ops.divide_no_nan(float(np.prod(losses.shape)), ops.sum(valid))


def _log_add(*terms):
    """log(sum(exp(terms))) of same-shaped tensors, stable (the largest is factored out)."""
    peak = terms[0]
    for term in terms[1:]:
        peak = ops.maximum(peak, term)
    total = ops.exp(terms[0] - peak)
    for term in terms[1:]:
        total = total + ops.exp(term - peak)
    return peak + ops.log(total)


def _shifted(alpha, by):
    """alpha moved ``by`` places along the label axis, the vacated places left out."""
    filler = ops.full((alpha.shape[0], by), _LEFT_OUT, dtype=alpha.dtype)
    return ops.concatenate([filler, alpha[:, :alpha.shape[1] - by]], axis=1)


def ctc(y_true, y_pred):
    """Keras's CTC loss: integer labels (batch, max_length) padded with 0, which is also the
    blank, against logits (batch, time, classes) (log-softmaxed here, as tf.nn.ctc_loss does),
    every sequence using all time steps. The forward algorithm over the blank-interleaved labels,
    one step of ops per time step, so the trace and autograd follow it."""
    y_pred = ops.convert_to_tensor(y_pred)
    labels = ops.convert_to_tensor(y_true)
    if len(labels.shape) != 2:
        raise ValueError(f"Targets `y_true` are expected to be a tensor of shape "
                         f"`(batch_size, max_length)` in integer format. Received: "
                         f"y_true.shape={tuple(labels.shape)}")
    if len(y_pred.shape) != 3:
        raise ValueError(f"Logits `y_pred` are expected to be a tensor of shape "
                         f"`(batch_size, max_length, num_classes)`. Received: "
                         f"y_pred.shape={tuple(y_pred.shape)}")
    y_pred = _float_predictions(y_pred)
    batch, steps, classes = y_pred.shape
    labels = ops.cast(labels, "float32")
    # blank, l1, blank, l2, ..., blank: S = 2 max_length + 1 states
    extended = ops.concatenate([ops.reshape(ops.stack([ops.zeros_like(labels), labels], -1),
                                            (batch, -1)), ops.zeros((batch, 1))], axis=1)
    states = extended.shape[1]
    picks = ops.one_hot(ops.cast(extended, "int64"), classes, dtype=y_pred.dtype)  # (B, S, C)
    emissions = ops.matmul(ops.log_softmax(y_pred, axis=-1),
                           ops.transpose(picks, (0, 2, 1)))  # (B, T, S)
    skip_allowed = ops.logical_and(ops.not_equal(extended, 0.0),
                                   ops.not_equal(extended, _shifted(extended, 2)))
    start = ops.less(ops.arange(states), 2)
    alpha = ops.where(start, emissions[:, 0], _LEFT_OUT)
    for t in range(1, steps):
        skip = ops.where(skip_allowed, _shifted(alpha, 2), _LEFT_OUT)
        alpha = _log_add(alpha, _shifted(alpha, 1), skip) + emissions[:, t]
    lengths = ops.sum(ops.cast(ops.not_equal(labels, 0.0), "int64"), axis=-1)
    ends = ops.one_hot(2 * lengths, states, dtype=y_pred.dtype) + \
        ops.one_hot(2 * lengths - 1, states, dtype=y_pred.dtype)
    return -ops.logsumexp(ops.where(ops.greater(ends, 0.0), alpha, _LEFT_OUT), axis=-1)
