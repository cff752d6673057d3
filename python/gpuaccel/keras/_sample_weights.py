"""``fit(sample_weight=..., class_weight=...)`` and ``evaluate(sample_weight=...)``: Keras's
per-example loss weights, carried through batching and shuffling as one more input array (so
``validation_split`` splits them with the data) and handed to the C++ step separately
(``_C.Trainer.train_step(x, y, sample_weight)``, ``nn::Loss::weighted``).

As in Keras, the weights scale the loss only (the compiled ``metrics`` are unweighted; Keras
weighs only ``weighted_metrics``), and the weighted loss is ``sum(loss * w) / n``."""
import numpy as np

from .._tensor import Tensor
from ._data_adapter import DatasetData, InputsWithWeights, SeveralLabels, _is_dataset
from ._py_dataset import PyDataset


def _is_array(value):
    return isinstance(value, (np.ndarray, Tensor))


def with_weights(x, y, sample_weight, class_weight):
    """(x with the weights appended as a last input, whether weights were given)."""
    if sample_weight is None and class_weight is None:
        return x, False
    if sample_weight is not None and class_weight is not None:
        raise ValueError("You cannot pass both `class_weight` and `sample_weight` at the same "
                         "time; fold the class weights into the sample weights")
    if (_is_dataset(x) or isinstance(x, PyDataset)) and sample_weight is None:
        return x, False  # the Dataset's batches get their weights (dataset_class_weights)
    if y is None or not (_is_array(x) or isinstance(x, (list, tuple))):
        raise ValueError("sample_weight needs x and y as arrays; a Dataset carries its sample "
                         "weights as the third component of its (x, y, sample_weight) "
                         "elements")
    # a model with several outputs: y is one array per output (their rows are the examples)
    first = y[0] if isinstance(y, SeveralLabels) else y
    labels = np.asarray(first.numpy() if isinstance(first, Tensor) else first)
    if class_weight is not None:
        weights = class_weights_to_sample_weights(labels, class_weight)
    elif isinstance(sample_weight, SeveralWeights):
        # one column per output, so the outputs' weights are shuffled and batched together
        # (MultiOutputTrainer splits the columns); an output given None weighs 1
        weights = np.stack([np.ones(len(labels), np.float32) if w is None
                            else _example_weights(w, len(labels)) for w in sample_weight], 1)
    else:
        weights = _example_weights(sample_weight, len(labels))
    weights = np.ascontiguousarray(weights, dtype=np.float32)
    inputs = list(x) if isinstance(x, (list, tuple)) and all(_is_array(v) for v in x) else [x]
    return inputs + [weights], True


class SeveralWeights(list):
    """``sample_weight`` given per output of a model with several outputs (a list, or a dict
    by output name, made a list in the model's output order)."""


def _example_weights(sample_weight, count):
    """One output's sample weights as a (count,) array (a (count, 1) one is accepted)."""
    weights = np.asarray(sample_weight.numpy() if isinstance(sample_weight, Tensor)
                         else sample_weight)
    if weights.dtype.kind not in "fiub":
        raise TypeError(f"sample_weight must hold numbers, got dtype {weights.dtype}")
    if weights.ndim == 2 and weights.shape[1] == 1:
        weights = weights[:, 0]
    if weights.ndim != 1 or len(weights) != count:
        raise ValueError(f"sample_weight must have one value per example, shape "
                         f"({count},); got shape {weights.shape}")
    return weights


def class_weights_to_sample_weights(labels, class_weight):
    """Keras's rule: the class of each example is its integer label, or the argmax of a one-hot
    or probability row; its weight is ``class_weight[class]``."""
    if not isinstance(class_weight, dict):
        raise ValueError(f"`class_weight` must be a dict mapping class indices to weights, got "
                         f"{type(class_weight).__name__}")
    if labels.ndim > 1 and labels.shape[-1] != 1:
        classes = np.argmax(labels, axis=-1)
    else:
        classes = np.round(labels.reshape(len(labels))).astype(np.int64)
    missing = sorted(set(int(c) for c in np.unique(classes)) - set(int(k) for k in class_weight))
    if missing:
        raise ValueError(f"`class_weight` has no weight for classes {missing} found in y; "
                         f"given: {sorted(class_weight)}")
    table = {int(k): float(v) for k, v in class_weight.items()}
    return np.array([table[int(c)] for c in classes], np.float32)


def dataset_class_weights(data, class_weight):
    """``fit(class_weight=...)`` on a Dataset: each batch's weights made from its labels."""
    if class_weight is None or not isinstance(data, DatasetData):
        return
    if not isinstance(class_weight, dict):  # checked before the first batch
        class_weights_to_sample_weights(np.zeros(0, np.int64), class_weight)

    def weights_of(labels):
        array = labels.numpy() if isinstance(labels, Tensor) else np.asarray(labels)
        return class_weights_to_sample_weights(array, class_weight)

    data.weights_from_labels = weights_of


def batches_weighed(data):
    """Whether a Dataset's batches will carry sample weights, known before the first: made
    from labels by ``fit(class_weight=...)``, or a ``gpuaccel.data.Dataset`` whose elements
    are ``(x, y, sample_weight)`` (its element_spec says so)."""
    if not isinstance(data, DatasetData):
        return False
    if data.weights_from_labels is not None:
        return True
    if isinstance(data.dataset, PyDataset) or not hasattr(type(data.dataset), "element_spec"):
        return False
    try:
        spec = data.dataset.element_spec
    except (ValueError, TypeError):  # no element, or not tensors: the first batch will say
        return False
    return isinstance(spec, tuple) and len(spec) == 3


def split_batch(xs, weighted):
    """(inputs, sample weights or None) of one batch: the weights are the last input column
    of in-memory data, or came with a Dataset's batch."""
    if isinstance(xs, InputsWithWeights):
        return list(xs), xs.sample_weight
    if not weighted:
        return xs, None
    return list(xs[:-1]), xs[-1]


class WithoutWeights:
    """The data as the model sees it (the weights column dropped), for building the model."""

    def __init__(self, data):
        self.x = data.x[:-1]
