"""What ``fit``/``evaluate``/``predict`` accept as data, turned into batches of gpuaccel
tensors: NumPy arrays (or lists of them, or gpuaccel tensors) sliced into shuffled batches per
epoch, a ``gpuaccel.data.Dataset`` of ``(x, y)`` batches iterated as it is, or a
``keras.utils.PyDataset`` whose batches are read by index.

Arrays are converted once, up front, to the dtypes the model computes in (float32 for floating
or image-like integer inputs, int64 for sparse labels), so a batch is a row gather and nothing
else."""
import collections.abc
import math

import numpy as np

from .. import _C
from .._tensor import Tensor, from_numpy
from ..data.dataset import _batches_stay_on_host
from ._py_dataset import PyDataset


def _is_dataset(value):
    """A gpuaccel.data.Dataset, or a torch DataLoader (fed to fit as one: DataLoaderData)."""
    return (hasattr(value, "cardinality") and hasattr(value, "__iter__") and not isinstance(
        value, (np.ndarray, Tensor, list, tuple, dict))) or is_data_loader(value)


def is_data_loader(value):
    """gpuaccel.torch's DataLoader (Keras 3 fits PyTorch DataLoaders), known by its class so
    that the Keras face imports nothing of the torch face."""
    return any(cls.__name__ == "DataLoader" and cls.__module__.startswith("gpuaccel.torch.")
               for cls in type(value).__mro__)


def _to_array(value, what):
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, np.ndarray):
        return value
    try:
        return np.asarray(value)
    except Exception as exc:  # noqa: BLE001 - reported with the argument's name
        raise ValueError(f"{what} must be a NumPy array, a gpuaccel Tensor or a "
                         f"gpuaccel.data.Dataset; got {type(value).__name__}") from exc


def shareable_array(array):
    """A C-contiguous array a tensor may share: a read-only one (np.load(mmap_mode='r'), a
    broadcast view) is copied, since a tensor sharing it could be written in place."""
    array = np.ascontiguousarray(array)
    return array if array.flags.writeable else array.copy()


def _input_array(value, keep_integers, what):
    array = _to_array(value, what)
    if array.dtype == np.float32:
        pass
    elif array.dtype.kind == "f" or (array.dtype.kind in "iub" and not keep_integers):
        array = array.astype(np.float32)
    elif array.dtype.kind in "iub":
        array = array.astype(np.int64)
    else:
        raise ValueError(f"{what} has dtype {array.dtype}, which is not numeric")
    return shareable_array(array)


def label_array(value):
    array = _to_array(value, "y")
    if array.dtype.kind in "iub":
        array = array.astype(np.int64)
    elif array.dtype != np.float32:
        if array.dtype.kind != "f":
            raise ValueError(f"y has dtype {array.dtype}, which is not numeric")
        array = array.astype(np.float32)
    return shareable_array(array)


class SeveralLabels(list):
    """The labels of a model with several outputs: one array (or per batch, one tensor) per
    output, in the model's output order (keras/_multi_output.py)."""


def _is_nested_numbers(value):
    """A Python list of numbers or of such lists is one input array (we accept what Keras 3
    refuses); a list of arrays or tensors is one entry per model input, as in Keras."""
    if not isinstance(value, list) or not value:
        return False
    return all(isinstance(v, (int, float, bool)) or _is_nested_numbers(v) for v in value)


def inputs_in_order(x, input_names):
    """Keras's dict of inputs keyed by the names of the model's ``keras.Input`` tensors, as the
    list of inputs in the model's order (extra keys are left out, as Keras leaves them);
    anything else as given. ``input_names``: the model's input names (None: it has none)."""
    if not isinstance(x, dict) or input_names is None:
        return x
    missing = [name for name in input_names if name not in x]
    if missing:
        raise ValueError(f'Missing data for input "{missing[0]}". You passed a data dictionary '
                         f"with keys {list(x)}. Expected the following keys: "
                         f"{list(input_names)}")  # Keras's words
    return [x[name] for name in input_names]


class ArrayData:
    """In-memory inputs and labels, batched by row gathers.

    ``x`` is a list of arrays (one per model input); ``y`` an array, a ``SeveralLabels`` of
    arrays (a model with several outputs) or None."""

    def __init__(self, x, y, batch_size, keep_integer_inputs):
        xs = list(x) if isinstance(x, (list, tuple)) and not _is_nested_numbers(x) else [x]
        self.x = [_input_array(v, keep_integer_inputs, "x") for v in xs]
        if isinstance(y, SeveralLabels):
            self.y = SeveralLabels(label_array(v) for v in y)
        else:
            self.y = None if y is None else label_array(y)
        self.num_samples = len(self.x[0]) if self.x[0].ndim else 0
        for i, array in enumerate(self.x):
            if array.ndim == 0:
                raise ValueError("x must have a batch dimension; got a scalar")
            if len(array) != self.num_samples:
                raise ValueError(f"Data cardinality is ambiguous: input 0 has {self.num_samples} "
                                 f"samples but input {i} has {len(array)}. Make sure all arrays "
                                 "contain the same number of samples.")
        for labels in self._label_arrays():
            if len(labels) != self.num_samples:
                raise ValueError(f"Data cardinality is ambiguous: x sizes: {self.num_samples}, "
                                 f"y sizes: {len(labels)}. Make sure all arrays contain the "
                                 "same number of samples.")
        if batch_size is None:
            batch_size = 32  # Keras's default
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
                or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        self.batch_size = int(batch_size)

    def _label_arrays(self):
        if self.y is None:
            return []
        return list(self.y) if isinstance(self.y, SeveralLabels) else [self.y]

    def _with_labels(self, arrays):
        """The labels of ``arrays`` (label arrays sliced as ``_label_arrays`` lists them) in
        the structure ``y`` has."""
        if self.y is None:
            return None
        return SeveralLabels(arrays) if isinstance(self.y, SeveralLabels) else arrays[0]

    @property
    def steps(self):
        return math.ceil(self.num_samples / self.batch_size)

    def split(self, fraction):
        """Keras's validation_split: the last ``fraction`` of the samples (before shuffling)
        become a second ArrayData."""
        if not 0.0 < fraction < 1.0:
            raise ValueError(f"validation_split must be in (0, 1), got {fraction}")
        if self.y is None:
            raise ValueError("validation_split needs labels (y)")
        cut = int(self.num_samples * (1.0 - fraction))
        if cut == 0 or cut == self.num_samples:
            raise ValueError(f"validation_split={fraction} leaves no samples for training or "
                             f"for validation out of {self.num_samples}")
        val = ArrayData.__new__(ArrayData)
        val.x = [a[cut:] for a in self.x]
        val.y = self._with_labels([a[cut:] for a in self._label_arrays()])
        val.num_samples = self.num_samples - cut
        val.batch_size = self.batch_size
        self.x = [a[:cut] for a in self.x]
        self.y = self._with_labels([a[:cut] for a in self._label_arrays()])
        self.num_samples = cut
        return val

    def batches(self, shuffle=False, rng=None, start_step=0):
        """Yields (list of x tensors, y tensor or None) per batch: contiguous row ranges shared
        with the arrays (no copy) in order, or rows gathered in C++ (GIL released) when
        shuffling. ``start_step`` skips that many batches (a resumed epoch): the order is
        drawn from ``rng`` all the same, so the remaining batches are the ones a full epoch
        would have had."""
        arrays = self.x + self._label_arrays()
        order = rng.permutation(self.num_samples).astype(np.int64) if shuffle else None
        for start in range(start_step * self.batch_size, self.num_samples, self.batch_size):
            stop = min(start + self.batch_size, self.num_samples)
            if order is None:
                parts = [from_numpy(a[start:stop]) for a in arrays]
            else:
                parts = _C.gather_rows(arrays, order[start:stop])
            yield (parts[:len(self.x)], self._with_labels(list(parts[len(self.x):])))


def _as_tensor(value, keep_integers):
    if isinstance(value, Tensor):
        if not keep_integers and not value.dtype.is_floating:
            return value.to("float32")
        return value
    return from_numpy(_input_array(value, keep_integers, "x"))


def _weight_tensor(value):
    """A batch's sample weights as float32 (N,), as fit(sample_weight=...) takes them."""
    array = _to_array(value, "sample_weight")
    if array.dtype.kind not in "fiub":
        raise TypeError(f"sample_weight must hold numbers, got dtype {array.dtype}")
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim != 1:
        raise ValueError(f"sample_weight must have one value per example, shape (batch,); a "
                         f"Dataset element gave shape {array.shape}")
    return from_numpy(shareable_array(array.astype(np.float32)))


def _label_tensor(value):
    if not isinstance(value, Tensor):
        return from_numpy(label_array(value))
    return value.to("int64") if value.dtype.name in ("uint8", "int8", "int16", "int32", "bool") else value


def _host_elements(dataset):
    """The dataset's elements with prefetched batches left in host memory: the Trainer uploads
    them on the GPU's copy stream (data.dataset._batches_stay_on_host says why)."""
    with _batches_stay_on_host():
        iterator = iter(dataset)
    while True:
        with _batches_stay_on_host():
            element = next(iterator, _END)
        if element is _END:
            return
        yield element


_END = object()


class InputsWithWeights(list):
    """A Dataset batch's inputs whose sample weights came with them: the element's third
    component ``(x, y, sample_weight)``, or weights made from ``y`` by ``fit(class_weight=)``."""

    def __init__(self, inputs, sample_weight):
        super().__init__(inputs)
        self.sample_weight = sample_weight


class DatasetData:
    """A ``gpuaccel.data.Dataset`` yielding ``(x, y)`` or ``(x, y, sample_weight)`` (or ``x``
    alone for predict) batches. ``weights_from_labels``, when set, makes each batch's sample
    weights from its labels (``fit(class_weight=...)``)."""

    weights_from_labels = None
    # A model with several outputs: a list/tuple or dict ``y`` is one label per output (else a
    # tuple of numbers is one label array, as before)
    labels_per_output = False
    # A model that trains without labels (compiled without a loss: _added_losses_only.py):
    # an element that is ``x`` alone gets a placeholder column of zeros as its labels
    placeholder_labels = False
    # The names of the model's inputs: an element's ``x`` may be a dict keyed by them
    input_names = None

    def __init__(self, dataset, keep_integer_inputs, steps=None):
        self.dataset = dataset
        self.keep_integers = keep_integer_inputs
        cardinality = int(dataset.cardinality())
        self.known_steps = cardinality if cardinality >= 0 else None
        self.steps_limit = steps
        self._iterator = None

    @property
    def steps(self):
        if self.steps_limit is not None:
            return self.steps_limit
        return self.known_steps

    def _convert(self, element, with_labels):
        weights = None
        if isinstance(element, tuple) and len(element) in (2, 3):
            x, y = element[0], element[1]
            if len(element) == 3 and element[2] is not None:
                weights = element[2]
        elif with_labels and not self.placeholder_labels:
            raise ValueError("a Dataset passed to fit/evaluate must yield (x, y) tuples; got "
                             f"elements of type {type(element).__name__}")
        else:
            x, y = (element[0] if isinstance(element, tuple) else element), None
        x = inputs_in_order(x, self.input_names)
        xs = list(x) if isinstance(x, (list, tuple)) else [x]
        xs = [_as_tensor(v, self.keep_integers) for v in xs]
        if y is None and with_labels and self.placeholder_labels:
            y = np.zeros((int(xs[0].shape[0]) if len(xs[0].shape) else 1,), np.float32)
        if self.weights_from_labels is not None and y is not None:
            if weights is not None:
                raise ValueError("You cannot pass both `class_weight` and `sample_weight` at "
                                 "the same time: the Dataset yields (x, y, sample_weight) "
                                 "elements; fold the class weights into them")
            weights = self.weights_from_labels(y)
        if weights is not None and with_labels:
            xs = InputsWithWeights(xs, self._weight_tensors(weights))
        if self.labels_per_output and isinstance(y, dict):  # ordered by the model's names
            return xs, {name: _label_tensor(v) for name, v in y.items()}
        if self.labels_per_output and isinstance(y, (list, tuple)):
            return xs, SeveralLabels(_label_tensor(v) for v in y)
        return xs, None if y is None else _label_tensor(y)

    def _weight_tensors(self, weights):
        """A batch's sample weights: one tensor, or for a model with several outputs a list or
        dict of them (one per output, as the element's labels are structured)."""
        if self.labels_per_output and isinstance(weights, dict):
            return {name: _weight_tensor(value) for name, value in weights.items()}
        if self.labels_per_output and isinstance(weights, (list, tuple)):
            return [_weight_tensor(value) for value in weights]
        return _weight_tensor(weights)

    def batches(self, with_labels=True, start_step=0, shuffle=False, rng=None):
        """One epoch: the whole dataset, or ``steps`` batches drawn from an iterator that
        carries over between epochs (Keras's steps_per_epoch on a repeated dataset).
        ``start_step`` drops that many batches first (a resumed epoch); they are still drawn
        from the dataset, which has no way to skip. ``shuffle`` is ignored, as Keras ignores
        it for a dataset (shuffle the dataset itself)."""
        if self.steps_limit is None:
            for index, element in enumerate(_host_elements(self.dataset)):
                if index >= start_step:
                    yield self._convert(element, with_labels)
            return
        for index in range(self.steps_limit):
            if self._iterator is None:
                self._iterator = _host_elements(self.dataset)
            try:
                element = next(self._iterator)
            except StopIteration:
                self._iterator = None
                self.exhausted = True
                return
            if index >= start_step:
                yield self._convert(element, with_labels)


class PyDatasetData(DatasetData):
    """A ``keras.utils.PyDataset``: its batches by index, in a new order each epoch with
    ``shuffle`` (as Keras), with the dataset's ``on_epoch_begin/end`` around each pass. An
    endless one, or one read ``steps`` batches at a time, is read in order as a Dataset is."""

    def __init__(self, py_dataset, keep_integer_inputs, steps=None):
        self.dataset = py_dataset
        self.keep_integers = keep_integer_inputs
        self.known_steps = py_dataset.num_batches
        self.steps_limit = steps
        self._iterator = None

    def batches(self, with_labels=True, start_step=0, shuffle=False, rng=None):
        count = self.known_steps
        if self.steps_limit is not None or count is None:
            yield from super().batches(with_labels, start_step)
            return
        order = rng.permutation(count) if shuffle and rng is not None else range(count)
        self.dataset.on_epoch_begin()
        for position, index in enumerate(order):
            if position >= start_step:
                yield self._convert(self.dataset[int(index)], with_labels)
        self.dataset.on_epoch_end()


def first_inputs(data):
    """The inputs of the first element of a Dataset's or DataLoader's ``data``, from a pass of
    its own (None for a PyDataset or an empty one): what a subclassed model not built yet is
    built for, as Keras builds it from the first batch."""
    if isinstance(data, PyDatasetData) or not isinstance(data, DatasetData):
        return None
    for element in _host_elements(data.dataset):
        return data._convert(element, False)[0]
    return None


class DataLoaderData(DatasetData):
    """A torch DataLoader's batches, as a Dataset's: ``len(loader)`` steps an epoch, each pass
    in the loader's own order (it shuffles itself), its [x, y] lists taken as (x, y)."""

    def __init__(self, loader, keep_integer_inputs, steps=None):
        self.dataset = loader
        self.keep_integers = keep_integer_inputs
        self.known_steps = len(loader)
        self.steps_limit = steps
        self._iterator = None

    def _convert(self, element, with_labels):
        return super()._convert(tuple(element) if isinstance(element, list) else element,
                                with_labels)


def adapt(x, y, batch_size, keep_integer_inputs, steps=None, what="fit",
          labels_per_output=False, input_names=None):
    """ArrayData or DatasetData for a fit/evaluate/predict call; ``labels_per_output``: the
    model has several outputs (a Dataset's ``y`` is then one label per output);
    ``input_names``: the names of the model's inputs, which a dict of inputs is keyed by."""
    x = inputs_in_order(x, input_names)
    if x is None:
        raise ValueError(f"{what}() needs x (input data); got None")
    if isinstance(x, collections.abc.Iterator):  # NumPy would make an object array of it
        raise TypeError(f"{what}() takes NumPy arrays, tensors or a gpuaccel.data.Dataset; got "
                        f"a Python {type(x).__name__}: wrap it with gpuaccel.data.Dataset."
                        "from_generator(lambda: ..., output_signature=...)")
    # Sources that bring their own labels: (is it, its adapter, the words for y= given too).
    for matches, adapter, words in (
            (lambda v: isinstance(v, PyDataset), PyDatasetData,
             "a PyDataset as input; its batches must be (x, y) pairs"),
            (is_data_loader, DataLoaderData,
             "a torch DataLoader as input; its batches must be (x, y) pairs"),
            (_is_dataset, DatasetData,
             "a dataset as input; the dataset must yield (x, y) pairs")):
        if matches(x):
            if y is not None:
                raise ValueError(f"`y` argument is not supported when using {words}")
            data = adapter(x, keep_integer_inputs, steps)
            data.labels_per_output, data.input_names = labels_per_output, input_names
            return data
    data = ArrayData(x, y, batch_size, keep_integer_inputs)
    return data
