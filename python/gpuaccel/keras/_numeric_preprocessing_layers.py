"""Keras's numeric and categorical preprocessing layers (Normalization, Discretization,
CategoryEncoding, IntegerLookup), written in Python from gpuaccel's ops and traced into the C++
step like any Python layer (_python_layer.py).

What they learn, ``adapt()`` computes on the host with NumPy, as Keras does, before training;
the forward pass is tensor ops only (comparisons against the learned boundaries or vocabulary,
one-hot products), so it replays in the step. Checks that need the values of the inputs (a
negative token to count) run in ``__call__`` on host inputs, since a traced call cannot read
values back.
"""
import numbers

import numpy as np

from .. import _C
from .. import errors
from .. import math as _math
from .._tensor import Tensor
from ._layer_base import Layer
from ._symbolic import KerasTensor

_EPSILON = 1e-7  # keras.config.epsilon(): the floor of Normalization's standard deviation


def _host_array(value):
    if isinstance(value, Tensor):
        return _C.detach(value)._numpy()
    return np.asarray(value)


def _batches(data):
    """The host batches of ``adapt``'s data: an array or tensor (one batch), a gpuaccel
    Dataset or any iterable of batches ((x, y) elements give x)."""
    if isinstance(data, (np.ndarray, Tensor)):
        return [_host_array(data)]
    spec = getattr(data, "element_spec", None)
    if spec is not None:
        x_spec = spec[0] if isinstance(spec, tuple) else spec
        if len(getattr(x_spec, "shape", ())) <= 1:
            data = data.batch(128)  # Keras batches a dataset of single values
    if not hasattr(data, "__iter__") or isinstance(data, (str, bytes)):
        raise TypeError(f"Unsupported data type: {type(data)}. `adapt` supports `np.ndarray`, "
                        "tensors, `gpuaccel.data.Dataset`, and iterables of batches (e.g. list, "
                        "generator).")
    batches = [_host_array(b[0] if isinstance(b, (tuple, list)) else b) for b in data]
    if not batches:
        raise ValueError("adapt() received an empty iterable (no batches). Expected at least one "
                         "batch. Pass a non-empty iterable of arrays or tensors, e.g. "
                         "layer.adapt([x]) or layer.adapt(list_of_batches).")
    return batches


def _check_output_mode(layer, output_mode, allowed):
    if output_mode not in allowed:
        raise ValueError(f"Unknown value for `output_mode`. Allowed values are: {list(allowed)}. "
                         f"Received: output_mode={output_mode!r} ({type(layer).__name__})")


def encode_categories(indices, output_mode, depth, dtype, count_weights=None):
    """Keras's ``encode_categorical_inputs``: integer ``indices`` as they are ('int'), or one
    (rank-1 one-hot of each), multi-hot or count vectors of ``depth`` over the last axis (each
    token counting its ``count_weights`` entry when given)."""
    if output_mode == "int":
        return _C.cast(indices, dtype)
    if indices.ndim == 0:
        indices = _C.expand_dims(indices, -1)
    if output_mode == "one_hot":
        if indices.ndim > 1 and indices.shape[-1] == 1:
            indices = _C.squeeze(indices, [-1])
        return _C.one_hot(_C.contiguous(indices), depth, dtype)
    hot = _C.one_hot(_C.contiguous(indices), depth, "float32")  # (..., n, depth)
    if count_weights is not None:
        weights = _C.cast(count_weights, "float32") if count_weights._dtype_name != "float32" \
            else count_weights
        hot = _C.binary("mul", hot, _C.expand_dims(weights, -1))
    reduced = _C.reduce("max" if output_mode == "multi_hot" else "sum", hot, [-2], False)
    return reduced if dtype == "float32" else _C.cast(reduced, dtype)


def _check_counted_tokens(layer, inputs):
    """Keras's error (from TensorFlow's bincount) for negative host tokens in the modes that
    count them; tokens at or past num_tokens are dropped there, as in Keras."""
    if isinstance(inputs, (Tensor, KerasTensor)) or layer.output_mode == "one_hot":
        return  # device values are not read back; one-hot rows of such tokens are zeros
    values = np.asarray(inputs)
    if values.size and values.dtype.kind in "iuf" and values.min() < 0:
        raise errors.InvalidArgumentError(
            f"Input values must be non-negative for output_mode={layer.output_mode!r} (layer "
            f"'{layer.name}'); received {values.min()}", "CategoryEncoding")


def _int_floormod(values, divisor):
    """int64 ``values`` mod a positive Python int, sign of the divisor (tf.math.floormod).
    The quotient comes from float32 division, so one pass leaves a remainder off by at most
    |x| * 2^-24; a second pass on that remainder is exact for |x| < 2^48."""
    remainder = values
    for _ in range(2):
        quotient = _math.floor(_C.binary("div", _C.cast(remainder, "float32"),
                                         _C.scalar_like(float(divisor), _C.cast(remainder, "float32"))))
        remainder = _C.binary("sub", remainder, _C.binary(
            "mul", _C.cast(quotient, "int64"), _C.scalar_like(divisor, remainder)))
    return remainder


class Normalization(Layer):
    """``keras.layers.Normalization(axis=-1, mean=None, variance=None, invert=False)``:
    (x - mean) / max(sqrt(variance), 1e-7) per position of the kept ``axis`` (or its inverse),
    with mean and variance given or learnt by ``adapt(data)``."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        if axis is None:
            axis = ()
        elif isinstance(axis, numbers.Integral):
            axis = (int(axis),)
        else:
            axis = tuple(int(a) for a in axis)
        self.axis = axis
        self.input_mean, self.input_variance = mean, variance
        self.invert = bool(invert)
        if (mean is not None) != (variance is not None):
            raise ValueError("When setting values directly, both `mean` and `variance` must be "
                             f"set. Received: mean={mean} and variance={variance}")
        if mean is not None:
            if np.shape(mean) != np.shape(variance):
                raise ValueError("When setting values directly, `mean` and `variance` must have "
                                 f"the same shape. Received: mean shape {np.shape(mean)} and "
                                 f"variance shape {np.shape(variance)}")
            if len(np.shape(mean)) > len(self.axis):
                raise ValueError("The rank of `mean` must be less than or equal to the number of "
                                 f"axes ({len(self.axis)}). Received: mean shape "
                                 f"{np.shape(mean)} for axis {self.axis}")
        self._statistics_shape = None
        super().__init__(**kwargs)

    def build(self, input_shape):
        ndim = len(input_shape)
        if any(a < -ndim or a >= ndim for a in self.axis):
            raise ValueError("All `axis` values must be in the range [-ndim, ndim). Received "
                             f"inputs with ndim={ndim}, while axis={self.axis}")
        self._keep_axis = tuple(sorted(a % ndim for a in self.axis))
        for d in self._keep_axis:
            if input_shape[d] is None:
                raise ValueError(f"All `axis` values to be kept must have a known shape. "
                                 f"Received axis={self.axis}, inputs.shape={tuple(input_shape)}, "
                                 f"with unknown axis at index {d}")
        self._build_input_shape = tuple(input_shape)
        self._reduce_axis = tuple(d for d in range(ndim) if d not in self._keep_axis)
        self._broadcast_shape = [input_shape[d] if d in self._keep_axis else 1
                                 for d in range(ndim)]
        self._statistics_shape = tuple(input_shape[d] for d in self._keep_axis)
        if self.input_mean is None:
            self.adapt_mean = self.add_weight(name="mean", shape=self._statistics_shape,
                                              initializer="zeros", trainable=False)
            self.adapt_variance = self.add_weight(name="variance", shape=self._statistics_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight(name="count", shape=(), dtype="int64",
                                         initializer="zeros", trainable=False)
        else:
            self._fixed_mean = self._fixed_statistic(self.input_mean)
            self._fixed_variance = self._fixed_statistic(self.input_variance)
            self._fixed_on_device = {}
        self._cpp.build([])

    def _fixed_statistic(self, value):
        """A given mean or variance laid out along the kept axes, broadcast over the rest."""
        value = np.asarray(value, np.float32)
        expanded = [1] * len(self._broadcast_shape)
        for i in range(1, value.ndim + 1):
            expanded[self._keep_axis[-i]] = value.shape[-i]
        return np.ascontiguousarray(np.broadcast_to(value.reshape(expanded),
                                                    self._broadcast_shape))

    def _fixed_statistics_on(self, device):
        """The given (mean, variance) as tensors on ``device``, made once per device (a trace
        captures them as constants)."""
        cached = self._fixed_on_device.get(device)
        if cached is None:
            cached = tuple(_C.tensor_from_numpy(v, device, None, True)
                           for v in (self._fixed_mean, self._fixed_variance))
            self._fixed_on_device[device] = cached
        return cached

    def adapt(self, data):
        """Learns the mean and variance of ``data`` (an array, tensor, Dataset or iterable of
        batches) over every axis but ``axis``."""
        batches = _batches(data)
        if not self.built:
            self.build((None,) + tuple(batches[0].shape[1:]))
        count, mean, variance = 0, 0.0, 0.0
        for batch in batches:
            batch = batch.astype(np.float64)
            for d in self._keep_axis:
                if batch.ndim != len(self._build_input_shape) or \
                        batch.shape[d] != self._build_input_shape[d]:
                    raise ValueError(f"The layer was built with input_shape="
                                     f"{self._build_input_shape}, but adapt() is being called "
                                     f"with data with an incompatible shape, data.shape="
                                     f"{batch.shape}")
            n = int(np.prod([batch.shape[d] for d in self._reduce_axis]))
            batch_mean = batch.mean(axis=self._reduce_axis)
            batch_variance = batch.var(axis=self._reduce_axis)
            total = count + n
            delta = batch_mean - mean
            # Chan et al.'s merge of two (count, mean, variance) summaries.
            variance = (variance * count + batch_variance * n + delta ** 2 * count * n / total) / total
            mean = mean + delta * n / total
            count = total
        if self.input_mean is not None:
            return  # Keras ignores adapt() when mean and variance were given
        # on the statistics' own device (a GPU's, when there is one): Assign needs both there
        for statistic, value in ((self.adapt_mean, mean), (self.adapt_variance, variance)):
            _C.copy_into(_C.tensor_from_numpy(np.asarray(value, np.float32).reshape(
                self._statistics_shape), statistic._device_name, None, True), statistic)

    def call(self, inputs):
        if self.input_mean is None:
            mean = _C.reshape(self.adapt_mean, self._broadcast_shape)
            variance = _C.reshape(self.adapt_variance, self._broadcast_shape)
        else:
            mean, variance = self._fixed_statistics_on(inputs._device_name)
        mean, variance = _C.cast(mean, inputs._dtype_name), _C.cast(variance, inputs._dtype_name)
        std = _C.binary("maximum", _C.unary("sqrt", variance), _C.scalar_like(_EPSILON, variance))
        if self.invert:
            return _C.binary("add", mean, _C.binary("mul", inputs, std))
        return _C.binary("div", _C.binary("sub", inputs, mean), std)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def _layer_config(self):
        return {"axis": self.axis, "invert": self.invert,
                "mean": np.array(self.input_mean).tolist(),
                "variance": np.array(self.input_variance).tolist()}


def _quantile_summary(values, epsilon):
    """Every (1/epsilon)-th sorted value with the number of values it stands for: Keras's
    approximate-quantile summary of one batch."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(values.size * epsilon, 1)
    kept = values[int(step - 1)::int(step)]
    return np.stack([kept, np.full_like(kept, step)])


def _compress_summary(summary, epsilon):
    """A summary reduced to 1/epsilon points by interpolating the cumulative weights."""
    if summary.shape[1] * epsilon < 1:
        return summary
    quantiles = epsilon + np.arange(0.0, 1.0, epsilon)
    cumulative = summary[1].cumsum()
    fractions = cumulative / cumulative[-1]
    points = np.interp(quantiles, fractions, summary[0])
    cumulative_at = np.interp(quantiles, fractions, cumulative)
    weights = np.diff(cumulative_at, prepend=0.0)
    return np.stack((points, weights)).astype("float32")


class Discretization(Layer):
    """``keras.layers.Discretization(bin_boundaries=None, num_bins=None, epsilon=0.01,
    output_mode='int')``: the bin index of each value (bins [b_i, b_{i+1})), as int32 or as
    one-hot / multi-hot / count vectors."""
    _integer_inputs = False

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None):
        if sparse:
            raise ValueError("`sparse=True` cannot be used with backend gpuaccel (no sparse "
                             "tensors)")
        _check_output_mode(self, output_mode, ("int", "one_hot", "multi_hot", "count"))
        if num_bins is not None and num_bins < 0:
            raise ValueError("`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError("Both `num_bins` and `bin_boundaries` should not be set. Received: "
                             f"`num_bins={num_bins}` and `bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else list(bin_boundaries)
        self.num_bins, self.epsilon = num_bins, epsilon
        self.output_mode, self.sparse = output_mode, sparse
        super().__init__(name=name, dtype=dtype)

    def adapt(self, data, steps=None):
        """Learns ``num_bins`` - 1 boundaries at the quantiles of ``data`` (approximate, with
        Keras's ``epsilon`` summaries)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized with "
                             "`bin_boundaries`, use `num_bins` instead.")
        if isinstance(data, (np.ndarray, Tensor)):
            batches = [_host_array(data)]
        else:
            batches = [_host_array(b) for i, b in enumerate(data) if steps is None or i < steps]
        summary = np.array([[], []], dtype="float32")
        for batch in batches:
            merged = np.concatenate((_quantile_summary(batch.astype("float32"), self.epsilon),
                                     summary), axis=1)
            merged = merged[:, np.argsort(merged[0], kind="stable")]
            summary = _compress_summary(merged, self.epsilon)
        self.bin_boundaries = _compress_summary(summary, 1.0 / self.num_bins)[0, :-1].tolist()
        self._boundaries_tensor = None

    def _depth(self):
        return len(self.bin_boundaries) + 1

    def _symbolic_output_dtype(self, input_dtype):
        return "int32" if self.output_mode == "int" else None

    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at "
                             "construction time or call `adapt(dataset)` before you can start "
                             "using the `Discretization` layer.")
        boundaries = _C.tensor_from_numpy(np.asarray(self.bin_boundaries, np.float32),
                                          inputs._device_name, None, True)
        # np.digitize: how many boundaries are <= x.
        below = _C.cast(_C.binary("less", _C.expand_dims(inputs, -1), boundaries), "int64")
        above = _C.reduce("sum", below, [-1], False)
        indices = _C.binary("sub", _C.scalar_like(len(self.bin_boundaries), above), above)
        dtype = "int32" if self.output_mode == "int" else self.compute_dtype
        return encode_categories(indices, self.output_mode, self._depth(), dtype)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.output_mode == "int":
            return input_shape
        depth = self._depth() if self.bin_boundaries is not None else self.num_bins
        if self.output_mode == "one_hot":
            if input_shape and input_shape[-1] == 1 and len(input_shape) > 1:
                return input_shape[:-1] + (depth,)
            return input_shape + (depth,)
        return input_shape[:-1] + (depth,) if len(input_shape) >= 2 else (depth,)

    def get_config(self):
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        boundaries = config.pop("bin_boundaries", None)
        if boundaries is not None and config.get("num_bins") is not None:
            layer = cls(**config)
            layer.bin_boundaries = boundaries
            return layer
        return cls(bin_boundaries=boundaries, **config)


class CategoryEncoding(Layer):
    """``keras.layers.CategoryEncoding(num_tokens, output_mode='multi_hot')``: integer tokens
    in [0, num_tokens) as one-hot, multi-hot or count vectors (float32); in 'count' mode,
    ``layer(tokens, count_weights=w)`` sums each token's weight instead of 1."""
    _integer_inputs = True

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode not in ("count", "one_hot", "multi_hot"):
            raise ValueError(f"Unknown arg for output_mode: {output_mode}")
        if num_tokens is None:
            raise ValueError("num_tokens must be set to use this layer. If the number of tokens "
                             "is not known beforehand, use the IntegerLookup layer instead.")
        if num_tokens < 1:
            raise ValueError(f"`num_tokens` must be >= 1. Received: num_tokens={num_tokens}.")
        if sparse:
            raise ValueError("CategoryEncoding(sparse=True): gpuaccel has no sparse tensors; "
                             "use sparse=False")
        self.num_tokens, self.output_mode, self.sparse = int(num_tokens), output_mode, False
        super().__init__(**kwargs)

    def __call__(self, inputs, *args, **kwargs):
        _check_counted_tokens(self, inputs)
        return super().__call__(inputs, *args, **kwargs)

    def _call_inputs(self, inputs, count_weights=None, **kwargs):
        if count_weights is None:
            return super()._call_inputs(inputs, **kwargs)
        if self.output_mode != "count":
            raise ValueError("`count_weights` is not used when `output_mode` is not `'count'`. "
                             f"Received `count_weights={count_weights}`.")
        return [inputs, count_weights]

    def call(self, inputs):
        count_weights = None
        if isinstance(inputs, list):  # (tokens, count_weights)
            inputs, count_weights = inputs
        indices = inputs if inputs._dtype_name in ("int32", "int64") else _C.cast(inputs, "int64")
        return encode_categories(indices, self.output_mode, self.num_tokens, self.compute_dtype,
                                 count_weights)

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if not input_shape:
            return (self.num_tokens,)
        if self.output_mode == "one_hot" and (input_shape[-1] != 1 or len(input_shape) == 1):
            return input_shape + (self.num_tokens,)
        return input_shape[:-1] + (self.num_tokens,)

    def _layer_config(self):
        return {"num_tokens": self.num_tokens, "output_mode": self.output_mode}


class IntegerLookup(Layer):
    """``keras.layers.IntegerLookup``: integer tokens to indices into a vocabulary (given, or
    learnt by ``adapt`` in order of decreasing frequency), laid out as [mask token if any,
    ``num_oov_indices`` out-of-vocabulary indices, tokens]; or indices back to tokens
    (``invert=True``). Out-of-vocabulary tokens take index oov_start + token %
    num_oov_indices (Keras's default 'floormod')."""
    _integer_inputs = True

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False,
                 oov_method="floormod", salt=None, name=None, **kwargs):
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError("If `max_tokens` is set for `IntegerLookup`, it must be greater "
                             f"than 1. Received: max_tokens={max_tokens}")
        if num_oov_indices < 0:
            raise ValueError("The value of `num_oov_indices` argument for `IntegerLookup` must "
                             f">= 0. Received: num_oov_indices={num_oov_indices}")
        if vocabulary_dtype != "int64":
            raise ValueError("Only `vocabulary_dtype='int64'` is supported at this time. "
                             f"Received: vocabulary_dtype={vocabulary_dtype}")
        if output_mode == "binary":
            output_mode = "multi_hot"
        if output_mode in ("tf_idf", "tf-idf") or idf_weights is not None:
            raise NotImplementedError("IntegerLookup(output_mode='tf_idf') is not supported yet; "
                                      "use 'count' and weight the counts")
        _check_output_mode(self, output_mode, ("int", "one_hot", "multi_hot", "count"))
        if invert and output_mode != "int":
            raise ValueError("`output_mode` must be `'int'` when `invert` is true. Received: "
                             f"output_mode={output_mode}")
        if sparse:
            raise ValueError("IntegerLookup(sparse=True): gpuaccel has no sparse tensors")
        if pad_to_max_tokens and max_tokens is None:
            raise ValueError("If pad_to_max_tokens is True, must set `max_tokens`. Received: "
                             f"max_tokens={max_tokens}")
        if oov_method != "floormod" or salt is not None:
            raise NotImplementedError("IntegerLookup(oov_method='farmhash'/salt) is not "
                                      "supported: gpuaccel has no FarmHash; use 'floormod'")
        self.max_tokens, self.num_oov_indices = max_tokens, int(num_oov_indices)
        self.mask_token, self.oov_token = mask_token, oov_token
        self.invert, self.output_mode = bool(invert), output_mode
        self.pad_to_max_tokens, self.sparse = bool(pad_to_max_tokens), False
        self.vocabulary_dtype, self.oov_method, self.salt = "int64", oov_method, salt
        self._tokens = None
        kwargs.pop("vocabulary_size", None)  # in Keras's config: follows from the vocabulary
        super().__init__(name=name, **kwargs)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary)

    def _oov_start(self):
        return 1 if self.mask_token is not None else 0

    def _token_start(self):
        return self._oov_start() + self.num_oov_indices

    def set_vocabulary(self, vocabulary, idf_weights=None):
        if isinstance(vocabulary, str):
            raise NotImplementedError(f"IntegerLookup(vocabulary={vocabulary!r}): reading a "
                                      "vocabulary file is not supported yet; pass the tokens "
                                      "as a list or array")
        if idf_weights is not None:
            raise ValueError("`idf_weights` should only be set if output_mode is `'tf_idf'`. "
                             f"Received: output_mode={self.output_mode} and "
                             f"idf_weights={idf_weights}")
        vocabulary = np.asarray(_host_array(vocabulary)).reshape(-1)
        if vocabulary.size == 0:
            raise ValueError(f"Cannot set an empty vocabulary. Received: vocabulary={vocabulary}")
        special = [self.mask_token] * self._oov_start() + [self.oov_token] * self.num_oov_indices
        start = self._token_start()
        tokens = vocabulary[start:] if np.array_equal(special, vocabulary[:start]) else vocabulary
        values, counts = np.unique(tokens, return_counts=True)
        if np.any(counts > 1):
            raise ValueError("The passed vocabulary has at least one repeated term. Please "
                             "uniquify your dataset. The repeated terms are: "
                             f"{list(values[counts > 1])}")
        if self.mask_token is not None and self.mask_token in tokens:
            raise ValueError("Found reserved mask token at unexpected location in `vocabulary`. "
                             "Note that passed `vocabulary` does not need to include the OOV and "
                             "mask tokens. Either remove all mask and OOV tokens, or include "
                             "them only at the start of the vocabulary in precisely this order: "
                             f"{special}. Received: mask_token={self.mask_token}")
        if self.invert and self.oov_token is not None and self.oov_token in tokens:
            raise ValueError("Found reserved OOV token at unexpected location in `vocabulary`. "
                             "Either remove all mask and OOV tokens, or include them only at the "
                             f"start of the vocabulary in precisely this order: {special}. "
                             f"Received: oov_token={self.oov_token}")
        if self.max_tokens is not None and start + len(tokens) > self.max_tokens:
            raise ValueError("Attempted to set a vocabulary larger than the maximum vocab size. "
                             f"Received vocabulary size is {start + len(tokens)}; `max_tokens` "
                             f"is {self.max_tokens}.")
        self._tokens = tokens.astype(np.int64)

    def adapt(self, data, steps=None):
        """The vocabulary of ``data``: its tokens but the mask and OOV tokens by decreasing
        count (ties: larger token first, as Keras), at most ``max_tokens`` minus the reserved
        indices."""
        if isinstance(data, (np.ndarray, Tensor)):
            batches = [_host_array(data)]
        else:
            batches = [_host_array(b) for i, b in enumerate(data) if steps is None or i < steps]
        values = np.concatenate([b.reshape(-1) for b in batches]).astype(np.int64)
        for reserved in (self.mask_token, self.oov_token):  # never learnt, as Keras
            if reserved is not None:
                values = values[values != reserved]
        tokens, counts = np.unique(values, return_counts=True)
        order = np.lexsort((tokens, counts))[::-1]
        if self.max_tokens is not None:
            order = order[:max(self.max_tokens - self._token_start(), 0)]
        self._tokens = tokens[order]

    def get_vocabulary(self, include_special_tokens=True):
        tokens = [] if self._tokens is None else self._tokens.tolist()
        if not include_special_tokens:
            return tokens
        return ([self.mask_token] * self._oov_start() + [self.oov_token] * self.num_oov_indices
                + tokens)

    def vocabulary_size(self):
        size = self._token_start() + (0 if self._tokens is None else len(self._tokens))
        return max(size, self.max_tokens) if self.pad_to_max_tokens else size

    def call(self, inputs):
        if self._tokens is None:
            raise ValueError(f"IntegerLookup layer '{self.name}' has no vocabulary: pass "
                             "`vocabulary=` or call `adapt(data)` before using it")
        inputs = inputs if inputs._dtype_name == "int64" else _C.cast(inputs, "int64")
        if self.invert:
            return self._tokens_of(inputs)
        return self._indices_of(inputs)

    def _indices_of(self, tokens):
        device = tokens._device_name
        vocabulary = _C.tensor_from_numpy(self._tokens, device, None, True)
        positions = _C.tensor_from_numpy(np.arange(self._token_start(), self._token_start()
                                                   + len(self._tokens), dtype=np.int64),
                                         device, None, True)
        matches = _C.cast(_C.binary("equal", _C.expand_dims(tokens, -1), vocabulary), "int64")
        found = _C.reduce("sum", matches, [-1], False)
        indices = _C.reduce("sum", _C.binary("mul", matches, positions), [-1], False)
        missing = _C.binary("sub", _C.scalar_like(1, found), found)
        if self.num_oov_indices == 0:
            oov_index = _C.scalar_like(-1, tokens)
        elif self.num_oov_indices == 1:
            oov_index = _C.scalar_like(self._oov_start(), tokens)
        else:
            oov_index = _C.binary("add", _int_floormod(tokens, self.num_oov_indices),
                                  _C.scalar_like(self._oov_start(), tokens))
        indices = _C.binary("add", indices, _C.binary("mul", missing, oov_index))
        if self.mask_token is not None:
            # The mask token: index 0 ('int'), no count in the vector modes.
            unmasked = _C.cast(_C.binary("sub", _C.scalar_like(1, tokens), _C.cast(_C.binary(
                "equal", tokens, _C.scalar_like(self.mask_token, tokens)), "int64")), "int64")
            indices = _C.binary("mul", indices, unmasked)
            if self.output_mode != "int":
                # The vectors have no slot for the mask: indices move down by one, and the mask
                # token goes past the depth, which one-hots to zeros.
                indices = _C.binary("sub", indices, _C.scalar_like(1, indices))
                indices = _C.binary("add", indices, _C.binary(
                    "mul", _C.binary("sub", _C.scalar_like(1, unmasked), unmasked),
                    _C.scalar_like(self._encoded_depth() + 1, unmasked)))
        # Keras's IntegerLookup gives int64 in every output mode.
        return encode_categories(indices, self.output_mode, self._encoded_depth(), "int64")

    def _symbolic_output_dtype(self, input_dtype):
        # Keras's output spec: int64 indices; its vector modes say float32 symbolically (and
        # give int64 eagerly, as here)
        return "int64" if self.output_mode == "int" else None

    def _encoded_depth(self):
        """The length of the one-hot/multi-hot/count vectors: no slot for the mask token."""
        return self.vocabulary_size() - (self.mask_token is not None)

    def _tokens_of(self, indices):
        table = np.asarray(self.get_vocabulary(), dtype=object)
        table[:self._token_start()] = [self.mask_token if i < self._oov_start() else
                                       self.oov_token for i in range(self._token_start())]
        table = np.array([self.oov_token if t is None else t for t in table], np.int64)
        device = indices._device_name
        picks = _C.cast(_C.binary("equal", _C.expand_dims(indices, -1), _C.tensor_from_numpy(
            np.arange(len(table), dtype=np.int64), device, None, True)), "int64")
        found = _C.reduce("sum", picks, [-1], False)
        values = _C.reduce("sum", _C.binary("mul", picks, _C.tensor_from_numpy(
            table, device, None, True)), [-1], False)
        missing = _C.binary("sub", _C.scalar_like(1, found), found)
        return _C.binary("add", values, _C.binary("mul", missing, _C.scalar_like(
            self.oov_token, missing)))

    def compute_output_shape(self, input_shape):
        input_shape = tuple(input_shape)
        if self.output_mode == "int":
            return input_shape
        depth = self._encoded_depth()
        if self.output_mode == "one_hot" and (not input_shape or input_shape[-1] != 1):
            return input_shape + (depth,)
        return input_shape[:-1] + (depth,)

    def _layer_config(self):
        return {"max_tokens": self.max_tokens, "num_oov_indices": self.num_oov_indices,
                "mask_token": self.mask_token, "oov_token": self.oov_token,
                "vocabulary": self.get_vocabulary(include_special_tokens=False) or None,
                "vocabulary_dtype": self.vocabulary_dtype, "invert": self.invert,
                "output_mode": self.output_mode, "sparse": self.sparse,
                "pad_to_max_tokens": self.pad_to_max_tokens, "oov_method": self.oov_method,
                "salt": self.salt, "idf_weights": None,
                "vocabulary_size": self.vocabulary_size()}
