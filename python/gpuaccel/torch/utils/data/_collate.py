"""torch.utils.data's default collation: a list of samples becomes one batch of the same
structure (tensors and arrays stacked along a new first axis, numbers made tensors, dicts by key,
tuples and lists position by position, strings kept as lists). One difference: a batch of
Python floats is float32 (gpuaccel has no float64; PyTorch's is float64)."""
import collections.abc
import numbers

import numpy as np

from ...._array_ops import stack
from ...._tensor import Tensor, tensor

_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
          "found {}")


def _is_numeric_array(value):
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "biuf"


def default_collate(batch):
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, (np.ndarray, np.generic)):
        if not _is_numeric_array(elem):
            raise TypeError(_ERROR.format(elem.dtype))
        return tensor(np.stack([np.asarray(b) for b in batch]))
    if isinstance(elem, bool):
        return tensor(list(batch), dtype="bool")
    if isinstance(elem, numbers.Integral):
        return tensor(list(batch), dtype="int64")
    if isinstance(elem, numbers.Real):
        return tensor(list(batch), dtype="float32")
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:  # the sample's own mapping type where it can be built from a dict, as PyTorch
            return type(elem)(collated)
        except TypeError:
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(samples)) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(samples)) for samples in zip(*batch)]
    raise TypeError(_ERROR.format(type(elem)))


def default_convert(data):
    """What a DataLoader with ``batch_size=None`` gives for each sample: NumPy arrays as
    tensors, containers converted element by element, anything else as it is."""
    if isinstance(data, np.ndarray) and _is_numeric_array(data):
        return tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return {key: default_convert(value) for key, value in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return [default_convert(d) for d in data]
    return data
