"""TensorFlow's candidate samplers (``tf.random.*_candidate_sampler``, also in ``tf.nn``),
``tf.nn.compute_accidental_hits``, and the logits of the sampled losses built on them
(``tf.nn.nce_loss`` and ``tf.nn.sampled_softmax_loss`` in nn.py: word2vec's training loss in
the TF tutorials).

A sampler draws ``num_sampled`` class ids from its distribution (uniform, log-uniform/Zipfian,
fixed unigram weights, or simply all of [0, num_sampled)) on the host, from gpuaccel's global
stream, and returns TF's three results: the ids and the expected counts of the true and sampled
classes, p * num_sampled, or with ``unique`` -expm1(tries * log1p(-p)) after ``tries`` draws
(TF's formula). The losses compose gathers, matmuls and cross-entropies, so their gradients
reach the weights, biases and inputs.
"""
import collections
import math

import numpy as np

from . import _C, _random_samplers as samplers, errors
from ._array_ops import concat, gather, reshape
from ._convert import convert_to_tensor
from ._tensor import tensor

__all__ = ["uniform_candidate_sampler", "log_uniform_candidate_sampler",
           "fixed_unigram_candidate_sampler", "all_candidate_sampler",
           "compute_accidental_hits", "sampled_logits"]

CandidateSample = collections.namedtuple(
    "CandidateSample", ["sampled_candidates", "true_expected_count", "sampled_expected_count"])
AccidentalHits = collections.namedtuple("AccidentalHits", ["indices", "ids", "weights"])


def _true_classes(true_classes, num_true):
    table = np.asarray(true_classes.numpy() if hasattr(true_classes, "numpy") else true_classes)
    if table.ndim != 2:
        raise errors.InvalidArgumentError("true_classes must be a matrix")
    if table.shape[1] != num_true:
        raise errors.InvalidArgumentError(f"true_classes must have num_true columns, expected: "
                                          f"{table.shape[1]} was: {num_true}")
    return table.astype(np.int64)


def _draw(count, unique, sample):
    """``count`` ids from ``sample(n)`` (n ids drawn i.i.d.), distinct when ``unique``; and how
    many draws that took."""
    if not unique:
        return sample(count), count
    chosen, seen, tries = [], set(), 0
    while len(chosen) < count:
        for value in sample(max(2 * (count - len(chosen)), 8)).tolist():
            tries += 1
            if value not in seen:
                seen.add(value)
                chosen.append(value)
                if len(chosen) == count:
                    break
    return np.array(chosen, np.int64), tries


def _expected(p, count, tries):
    p = np.asarray(p, np.float64)
    if tries == count:
        return (p * count).astype(np.float32)
    return (-np.expm1(tries * np.log1p(-p))).astype(np.float32)


def _sampler(true_classes, num_true, num_sampled, unique, range_max, probability, sample):
    table = _true_classes(true_classes, num_true)
    if unique and num_sampled > range_max:
        raise errors.InvalidArgumentError("Sampler's range is too small.")
    ids, tries = _draw(int(num_sampled), bool(unique), sample)
    return CandidateSample(tensor(ids), tensor(_expected(probability(table), num_sampled, tries)),
                           tensor(_expected(probability(ids), num_sampled, tries)))


def _inverse_cdf_sampler(weights):
    cdf = np.cumsum(weights) / np.sum(weights)
    return lambda n: np.minimum(np.searchsorted(cdf, samplers.uniform_array((n,)), "right"),
                                len(weights) - 1).astype(np.int64)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                              name=None):
    """Ids drawn uniformly from [0, range_max)."""
    samplers.no_op_seed(seed)
    return _sampler(true_classes, num_true, num_sampled, unique, range_max,
                    lambda ids: np.full(np.shape(ids), 1.0 / range_max),
                    _inverse_cdf_sampler(np.ones(range_max)))


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """Ids drawn from the log-uniform (Zipfian) distribution over [0, range_max):
    P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1), small ids most often."""
    samplers.no_op_seed(seed)
    log_range = math.log(range_max + 1)

    def sample(n):
        values = np.exp(samplers.uniform_array((n,)) * log_range).astype(np.int64) - 1
        return np.clip(values, 0, range_max - 1)

    return _sampler(true_classes, num_true, num_sampled, unique, range_max,
                    lambda ids: np.log((np.asarray(ids) + 2.0) / (np.asarray(ids) + 1.0)) /
                    log_range, sample)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """Ids drawn with probability proportional to unigrams[id] ** distortion (the first
    ``num_reserved_ids`` ids never drawn). Only the ``unigrams`` list form is supported."""
    samplers.no_op_seed(seed)
    if vocab_file or num_shards != 1:
        raise NotImplementedError("fixed_unigram_candidate_sampler takes its counts from "
                                  "`unigrams` here (no vocab_file, one shard)")
    weights = np.concatenate([np.zeros(num_reserved_ids),
                              np.asarray(unigrams, np.float64) ** distortion])
    if len(weights) != range_max:
        raise errors.InvalidArgumentError(f"Range max {range_max} must equal the number of "
                                          f"unigrams plus reserved ids, {len(weights)}")
    probability = weights / weights.sum()
    return _sampler(true_classes, num_true, num_sampled, unique, range_max,
                    lambda ids: probability[np.asarray(ids)], _inverse_cdf_sampler(weights))


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every id in [0, num_sampled), each with expected count 1 (for testing the losses)."""
    table = _true_classes(true_classes, num_true)
    outside = table[(table < 0) | (table >= num_sampled)]
    if outside.size:
        raise errors.InvalidArgumentError(f"`true_candidate` out of range [0, {num_sampled}), "
                                          f"received {outside[0]}")
    return CandidateSample(tensor(np.arange(num_sampled, dtype=np.int64)),
                           tensor(np.ones(table.shape, np.float32)),
                           tensor(np.ones(num_sampled, np.float32)))


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """(row indices int32, sampled positions int64, weights -FLT_MAX) for every sampled id
    that equals one of its row's true classes, as TF lists them."""
    table = _true_classes(true_classes, num_true)
    sampled = np.asarray(sampled_candidates.numpy() if hasattr(sampled_candidates, "numpy")
                         else sampled_candidates).astype(np.int64)
    rows, positions = [], []
    for i, row in enumerate(table):
        for label in row:
            for j in np.flatnonzero(sampled == label):
                rows.append(i)
                positions.append(j)
    lowest = np.full(len(rows), np.finfo(np.float32).min, np.float32)
    return AccidentalHits(tensor(np.array(rows, np.int32)), tensor(np.array(positions, np.int64)),
                          tensor(lowest))


def sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                    sampled_values, remove_accidental_hits):
    """TF's _compute_sampled_logits: the logits of each row's true classes and of the sampled
    ones (both minus log expected count), and the matching labels (1/num_true, 0)."""
    x = convert_to_tensor(inputs)
    label_table = _true_classes(labels, num_true)
    if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(label_table, num_true, num_sampled,
                                                       True, num_classes)
    sampled, true_expected, sampled_expected = (
        np.asarray(v.numpy() if hasattr(v, "numpy") else v) for v in sampled_values)
    w = concat(list(weights), 0) if isinstance(weights, (list, tuple)) else \
        convert_to_tensor(weights)
    b = convert_to_tensor(biases)
    batch = label_table.shape[0]
    true_ids = tensor(label_table.reshape(-1), device=x._device_name)
    sampled_ids = tensor(sampled.astype(np.int64), device=x._device_name)
    true_w = reshape(gather(w, true_ids), [batch, num_true, -1])
    true_logits = _C.reduce("sum", _C.binary("mul", _C.expand_dims(x, 1), true_w), [2], False)
    true_logits = _C.binary("add", true_logits, reshape(gather(b, true_ids), [batch, num_true]))
    sampled_logits = _C.binary("add", _C.matmul(x, _C.transpose(gather(w, sampled_ids), 0, 1)),
                               gather(b, sampled_ids))
    if remove_accidental_hits:
        hits = compute_accidental_hits(label_table, sampled, num_true)
        penalty = np.zeros((batch, len(sampled)), np.float32)
        penalty[hits.indices.numpy(), hits.ids.numpy()] += hits.weights.numpy()
        sampled_logits = _C.binary("add", sampled_logits, tensor(penalty, device=x._device_name))
    true_logits = _C.binary("sub", true_logits, tensor(np.log(true_expected.astype(np.float32)),
                                                       device=x._device_name))
    sampled_logits = _C.binary("sub", sampled_logits, tensor(
        np.log(sampled_expected.astype(np.float32)), device=x._device_name))
    logits = concat([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.full((batch, num_true), 1.0 / num_true, np.float32),
                              np.zeros((batch, len(sampled)), np.float32)], 1)
    return logits, tensor(targets, device=x._device_name)
