"""``gpuaccel.keras.layers``: Keras 3's layer classes over the C++ layers of ``cpp/nn``.

Each class here only checks Keras's arguments (names, defaults and errors as Keras 3 has them)
and constructs its C++ twin, ``layer._cpp`` (``gpuaccel._C.layers``). Weights, shape checks
and the forward pass live in C++, composed of op frontends, so gradients come from autograd and
the training loop can run a model with the GIL released::

    from gpuaccel import keras
    conv = keras.layers.Conv2D(32, 3, activation="relu")
    y = conv(np.zeros((8, 28, 28, 1)))          # eager: builds, then runs in C++
    x = keras.Input((28, 28, 1)); y = conv(x)   # functional: a symbolic KerasTensor

Every layer takes ``dtype=`` (a policy name such as 'mixed_bfloat16' or a
``keras.mixed_precision.DTypePolicy``; default: the global policy when the layer is constructed):
the C++ layer casts floating inputs and its float32 weights to the policy's compute dtype.
"""
import collections
import numbers
import re

import numpy as np

from .. import _C
from .. import _unsupported
from .._int_range import check_range
from .._tensor import Tensor, tensor as _make_tensor
from ..dtypes import as_dtype
from . import _symbolic
from . import _layer_variables
from . import mixed_precision as _mixed_precision
from . import _python_layer
from . import _layer_extras
from ._symbolic import Input, KerasTensor

_cpp_layers = _C.layers

__all__ = [
    "Layer", "Input", "InputLayer", "Dense", "Conv2D", "MaxPooling2D", "MaxPool2D",
    "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling2D", "GlobalAvgPool2D", "Flatten",
    "Dropout", "Activation", "BatchNormalization", "LayerNormalization", "Embedding",
    "MultiHeadAttention", "Softmax", "ReLU", "Reshape", "Rescaling", "Add", "Concatenate", "Conv1D",
]

# ``keras.layers.InputLayer(shape=...)`` in a Sequential list is the same as ``keras.Input``:
# both give the model its input placeholder.
InputLayer = Input

_BASE_KWARGS = ("input_shape", "input_dim", "batch_input_shape", "batch_size")
_uids = collections.defaultdict(int)


def _snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower()


def _unique_name(prefix):
    """Keras's automatic names: 'dense', 'dense_1', 'dense_2', ... per prefix, per process."""
    _uids[prefix] += 1
    count = _uids[prefix]
    return prefix if count == 1 else f"{prefix}_{count - 1}"


def _none_shape(shape):
    return tuple(None if d is None or d < 0 else int(d) for d in shape)


def _cpp_shape(shape, what="input_shape"):
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        items = list(shape)
    except TypeError:
        raise ValueError(f"{what} must be a tuple of integers or None, received {shape!r}") from None
    out = []
    for d in items:
        if d is None:
            out.append(-1)
        elif isinstance(d, numbers.Integral) and not isinstance(d, bool) and d >= 0:
            out.append(int(d))
        else:
            raise ValueError(f"{what} entries must be non-negative integers or None, received {shape!r}")
    return out


def _is_shape_list(value):
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(
        isinstance(v, (list, tuple)) for v in value)


def _positive_int(value, arg, layer):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"Received an invalid value for `{arg}`, expected a positive integer. "
                         f"Received: {arg}={value!r}")
    return check_range(int(value), arg, 1)  # sizes reach the C++ layers as int64


def _int_tuple(value, n, arg):
    """An int or a tuple of ``n`` positive ints, as Keras's standardize_tuple."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        values = (int(value),) * n
    else:
        try:
            values = tuple(value)
        except TypeError:
            raise ValueError(f"The `{arg}` argument must be a tuple of {n} integers. "
                             f"Received {arg}={value!r}") from None
        if len(values) != n or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                       for v in values):
            raise ValueError(f"The `{arg}` argument must be a tuple of {n} integers. "
                             f"Received {arg}={value!r}")
        values = tuple(int(v) for v in values)
    if any(v <= 0 for v in values):
        raise ValueError(f"The `{arg}` argument must be a tuple of {n} integers. Received {arg}="
                         f"{value!r}, including values {set(v for v in values if v <= 0)} that do "
                         "not satisfy `value > 0`")
    for v in values:
        check_range(v, arg, 1)
    return values


def _padding(value):
    if not isinstance(value, str) or value.lower() not in ("valid", "same"):
        raise ValueError("The `padding` argument must be one of 'valid', 'same'. "
                         f"Received: padding={value!r}")
    return value.lower()


def _data_format(value):
    if value is None or value == "channels_last":
        return "channels_last"
    if value == "channels_first":
        raise NotImplementedError("data_format='channels_first' is not supported: gpuaccel layers "
                                  "use channels_last (NHWC) images; transpose the input instead")
    raise ValueError("The `data_format` argument must be one of {'channels_first', "
                     f"'channels_last'}}. Received: data_format={value!r}")


def _activation(value):
    """Keras's activation argument as a name (None -> 'linear'): a name or a function named as
    one of ``keras.activations`` (gpuaccel's, Keras's or tf.nn's). The C++ layers run the
    names cpp/nn/activations.cc has; the others run in Python after the C++ layer, traced with
    it (``_layer_extras``; the Activation layer as a Python layer)."""
    from . import activations
    if value is None:
        return "linear"
    name = value if isinstance(value, str) else getattr(value, "__name__", None)
    if isinstance(value, str) and name not in activations.names():
        # Keras's text (keras.activations.get), plus what would be accepted.
        raise ValueError(f"Could not interpret activation function identifier: {value!r} "
                         f"(supported: {activations.names()}, or None)")
    if not isinstance(value, str) and (not callable(value) or name not in activations.names()):
        raise NotImplementedError(f"activation {value!r} is not supported: pass a name or a "
                                  f"function of keras.activations ({activations.names()}) or "
                                  "None")
    return activations.get(name).__name__  # Keras's config names it so: 'swish' -> 'silu'


def _initializer(value, arg):
    """An initializer name for the C++ layer: a name, or a ``keras.initializers`` object with
    its default arguments (``HeNormal()``), which is the same draw."""
    from . import initializers
    if isinstance(value, str):
        return value
    if isinstance(value, initializers.Initializer) and \
            _snake_case(type(value).__name__) in _cpp_layers.initializer_names() and \
            value.get_config() == type(value)().get_config():
        return _snake_case(type(value).__name__)
    raise NotImplementedError(f"`{arg}` must be an initializer name such as 'glorot_uniform' "
                              f"(accepted: {_cpp_layers.initializer_names()}) or such an "
                              "initializer with its default arguments; seeded or "
                              f"parametrized initializer objects are not supported on the "
                              f"built-in layers yet, received {value!r}")


def _reject(layer_cls, **kwargs):
    """Keras arguments we accept only at their default (regularizers, constraints, ...)."""
    for arg, value in kwargs.items():
        if value is not None and value is not False:
            raise NotImplementedError(f"{layer_cls}: `{arg}` is not supported by gpuaccel yet; "
                                      f"received {arg}={value!r}")


class Layer:
    """Base of gpuaccel's Keras layers: the Python side of a C++ ``nn::Layer``.

    Subclasses set their configuration and call ``super().__init__(**kwargs)``, which checks
    the base arguments and constructs the C++ layer via ``_make_cpp()``. A subclass written
    in Python (``build`` with ``add_weight``, ``call`` with tensor ops, ``add_loss``) gets a C++
    layer that replays its ``call`` (``_python_layer.py``)."""

    # Embedding: integer inputs stay integer (every other layer casts them to float, then to its
    # compute dtype). (Not _symbolic's `_keeps_input_dtype`, which means the *output* keeps an
    # integer input dtype.)
    _integer_inputs = False

    def __init__(self, name=None, dtype=None, trainable=True, **kwargs):
        unknown = {k: v for k, v in kwargs.items() if k not in _BASE_KWARGS}
        if unknown:
            raise ValueError(f"Unrecognized keyword arguments passed to {type(self).__name__}: {unknown}")
        if name is None:
            name = _unique_name(_snake_case(type(self).__name__))
        elif not isinstance(name, str) or "/" in name:
            raise ValueError("Argument `name` must be a string and cannot contain character `/`. "
                             f"Received: name={name!r} (of type {type(name)})")
        self.name = name
        self._dtype_policy = _mixed_precision.get(dtype)
        self._input_shape_arg = None
        if kwargs.get("input_shape") is not None:
            self._input_shape_arg = _none_shape(_cpp_shape(kwargs["input_shape"]))
        elif kwargs.get("batch_input_shape") is not None:
            self._input_shape_arg = _none_shape(_cpp_shape(kwargs["batch_input_shape"]))[1:]
        elif kwargs.get("input_dim") is not None:
            self._input_shape_arg = (_positive_int(kwargs["input_dim"], "input_dim", self),)
        self._batch_size_arg = kwargs.get("batch_size")
        self._cpp = self._make_cpp()
        self._cpp.compute_dtype = self._dtype_policy.compute_dtype
        self.trainable = trainable

    def __new__(cls, *args, **kwargs):
        layer = super().__new__(cls)
        if not cls.__module__.startswith("gpuaccel."):
            # Keras 3 records a Python subclass's constructor arguments: its get_config,
            # when the subclass does not write one, returns them.
            object.__setattr__(layer, "_auto_config",
                               _python_layer.constructor_arguments(cls, args, kwargs))
        return layer

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and cls.__module__ != __name__ and not getattr(
                build, "_gpuaccel_build_wrapper", False):
            cls.build = _python_layer.wrap_build(build)

    def _make_cpp(self):
        if _python_layer.defines_python_call(type(self)):
            return _python_layer.make_cpp_layer(self)
        raise NotImplementedError(f"{type(self).__name__} does not define its C++ layer: "
                                  "define call(self, inputs) (and build, add_weight) as in Keras")

    def _is_python_layer(self):
        return isinstance(self._cpp, _cpp_layers.TracedLayer)

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(f"Layer {type(self).__name__} does not have a `call()` method "
                                  "implemented.")

    # ---- Python layers' API (Keras's Layer) ----
    def add_weight(self, shape=None, initializer=None, dtype=None, trainable=True, **kwargs):
        if not self._is_python_layer():
            raise TypeError(f"add_weight() is for layers written in Python; {type(self).__name__} "
                            "creates its weights in C++")
        return _python_layer.add_weight(self, shape, initializer, dtype, trainable, **kwargs)

    def add_loss(self, loss):
        _python_layer.add_loss(self, loss)

    @property
    def losses(self):
        """The losses the last call added (``add_loss``)."""
        if not self._is_python_layer():
            return []
        return list(self._cpp.added_losses())

    def _layer_config(self):
        return {}

    # ---- dtypes (Keras 3: dtype is the variable dtype) ----
    @property
    def dtype_policy(self):
        return self._dtype_policy

    @dtype_policy.setter
    def dtype_policy(self, value):
        self._dtype_policy = _mixed_precision.get(value)
        self._cpp.compute_dtype = self._dtype_policy.compute_dtype

    @property
    def compute_dtype(self):
        return self._dtype_policy.compute_dtype

    @property
    def variable_dtype(self):
        return self._dtype_policy.variable_dtype

    @property
    def dtype(self):
        return self._dtype_policy.variable_dtype

    # ---- state ----
    @property
    def built(self):
        return self._cpp.built

    @built.setter
    def built(self, value):
        # Keras 2 style builds end with `self.built = True` (or super().build(input_shape)).
        if value and not self._cpp.built:
            self._cpp.build([])

    @property
    def trainable(self):
        return self._cpp.trainable

    @trainable.setter
    def trainable(self, value):
        self._cpp.trainable = bool(value)

    @property
    def weights(self):
        return [_layer_variables.labelled(self, n, w, t) for n, w, t in self._cpp.weights]

    def __getattr__(self, attribute):
        # Only for names normal lookup did not find: Keras's weight attributes (dense.kernel).
        if not attribute.startswith("_") and "_cpp" in self.__dict__:
            variable = _layer_variables.find(self, attribute)
            if variable is not _layer_variables.MISSING:
                return variable
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute}'")

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for w in self.weights if w.trainable]

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return self.weights
        return [w for w in self.weights if not w.trainable]

    @property
    def variables(self):
        return self.weights

    def _weight_names(self):
        return [name for name, _, _ in self._cpp.weights]

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on layer '{self.name}', but the "
                             "layer isn't built. You can build it manually via: "
                             f"`{self.name}.build(batch_input_shape)`.")
        return int(self._cpp.count_params())

    def get_weights(self):
        return [np.array(_C.detach(w).numpy(), dtype=np.float32, copy=True) for w in self.weights]

    def set_weights(self, weights):
        current = self.weights
        weights = list(weights)
        if len(weights) != len(current):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a "
                             f"weight list of length {len(weights)}, but the layer was expecting "
                             f"{len(current)} weights.")
        arrays = []
        for index, (target, value) in enumerate(zip(current, weights)):
            array = np.asarray(_C.detach(value).numpy() if isinstance(value, Tensor) else value)
            if array.dtype.kind not in "fiub" and array.dtype.name != "bfloat16":
                # NumPy's cast would drop an imaginary part or parse strings as numbers
                raise TypeError(f"Layer {self.name} weight {index} must hold real numbers, got "
                                f"an array of dtype {array.dtype}")
            array = array.astype(np.float32, copy=False)
            if tuple(array.shape) != tuple(target.shape):
                raise ValueError(f"Layer {self.name} weight shape {tuple(target.shape)} is not "
                                 f"compatible with provided weight shape {tuple(array.shape)}.")
            arrays.append(array)
        for target, array in zip(current, arrays):
            _C.copy_into(_make_tensor(np.ascontiguousarray(array), device=target._device_name), target)

    def get_config(self):
        config = {"name": self.name, "trainable": self.trainable, "dtype": self._dtype_policy.name}
        config.update(self._layer_config())
        if "_auto_config" in self.__dict__ and type(self).get_config is Layer.get_config:
            config.update(_python_layer.auto_config(self))
        return config

    @classmethod
    def from_config(cls, config):
        try:
            return cls(**config)
        except Exception as error:  # Keras 3's type and words, naming the failing class
            raise TypeError(f"Error when deserializing class '{cls.__name__}' using "
                            f"config={config}.\n\nException encountered: {error}") from error

    # ---- shapes ----
    def _shape_list(self, input_shape):
        if _is_shape_list(input_shape):
            return [_cpp_shape(s) for s in input_shape]
        return [_cpp_shape(input_shape)]

    def build(self, input_shape):
        self._cpp.build(self._shape_list(input_shape))

    def compute_output_shape(self, input_shape):
        if self._is_python_layer():
            return _python_layer.compute_output_shape(self, input_shape)
        return _none_shape(self._cpp.output_shape(self._shape_list(input_shape)))

    # ---- calls ----
    def _call_inputs(self, inputs, **kwargs):
        """The layer's list of inputs from its call arguments (single-input layers: [x])."""
        kwargs.pop("mask", None)
        if kwargs:
            raise TypeError(f"{type(self).__name__}.call() got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        if self._is_python_layer() and isinstance(inputs, (list, tuple)):
            return list(inputs)  # a Python layer's call takes a list of inputs as a list
        return [inputs]

    def _to_tensor(self, value):
        if isinstance(value, Tensor):
            if not self._integer_inputs and not as_dtype(value._dtype_name).is_floating:
                return _C.cast(value, "float32")
            return value
        array = np.asarray(value)
        if array.dtype == np.float64 or not (self._integer_inputs or
                                             np.issubdtype(array.dtype, np.floating)):
            array = array.astype(np.float32)
        return _make_tensor(array)

    def __call__(self, *args, training=None, **kwargs):
        inputs = self._call_inputs(*args, **kwargs)
        if any(isinstance(t, KerasTensor) for t in inputs):
            return _symbolic.call_symbolic(self, inputs)
        tensors = [self._to_tensor(x) for x in inputs]
        if not self.built:
            shapes = [(None,) + tuple(t.shape[1:]) if len(t.shape) else () for t in tensors]
            self.build(shapes[0] if len(shapes) == 1 else shapes)
        return self._cpp.call(tensors, bool(training))

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


class Dense(Layer):
    """``keras.layers.Dense(units, activation=None, use_bias=True, ...)``."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 lora_rank=None, **kwargs):
        _reject("Dense", lora_rank=lora_rank)
        self.units = _positive_int(units, "units", self)
        self.activation = _activation(activation)
        self._extras = _layer_extras.Extras(
            self.activation, _cpp_layers.activation_names(), kernel_regularizer,
            bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializer(kernel_initializer, "kernel_initializer")
        self.bias_initializer = _initializer(bias_initializer, "bias_initializer")
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _layer_extras.make_cpp(self, _cpp_layers.Dense(
            self.name, self.units, self._extras.cpp_activation(self.activation), self.use_bias,
            self.kernel_initializer, self.bias_initializer))

    def _layer_config(self):
        return {"units": self.units, "activation": self.activation, "use_bias": self.use_bias,
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer, **self._extras.config()}

    build = _layer_extras.build_method(Layer.build)
    call = _layer_extras.call


class _Conv(Layer):
    """What Conv1D and Conv2D share: Keras's arguments, their checks and their config.
    ``_rank`` is the number of spatial axes."""
    _rank = None

    def __init__(self, filters, kernel_size, strides, padding, data_format, dilation_rate, groups,
                 activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint,
                 **kwargs):
        kind = type(self).__name__
        if groups != 1:
            raise NotImplementedError(f"{kind}: grouped convolutions are not supported yet; "
                                      f"received groups={groups!r}")
        if isinstance(filters, bool) or not isinstance(filters, numbers.Integral) or filters <= 0:
            raise ValueError("Invalid value for argument `filters`. Expected a strictly positive "
                             f"value. Received filters={filters!r}.")
        self.filters = check_range(int(filters), "filters", 1)
        self.kernel_size = _int_tuple(kernel_size, self._rank, "kernel_size")
        self.strides = _int_tuple(strides, self._rank, "strides")
        self.dilation_rate = _int_tuple(dilation_rate, self._rank, "dilation_rate")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                             f"Received: strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.activation = _activation(activation)
        self._extras = _layer_extras.Extras(
            self.activation, _cpp_layers.activation_names(), kernel_regularizer,
            bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializer(kernel_initializer, "kernel_initializer")
        self.bias_initializer = _initializer(bias_initializer, "bias_initializer")
        super().__init__(**kwargs)

    def _layer_config(self):
        return {"filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "activation": self.activation,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer, **self._extras.config()}

    build = _layer_extras.build_method(Layer.build)
    call = _layer_extras.call


class Conv2D(_Conv):
    """``keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding='valid', ...)`` on
    channels-last images; kernel (kh, kw, in, filters)."""
    _rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)

    def _make_cpp(self):
        return _layer_extras.make_cpp(self, _cpp_layers.Conv2D(
            self.name, self.filters, *self.kernel_size, *self.strides, self.padding,
            *self.dilation_rate, self._extras.cpp_activation(self.activation), self.use_bias,
            self.kernel_initializer, self.bias_initializer))


class Conv1D(_Conv):
    """``keras.layers.Conv1D(filters, kernel_size, strides=1, padding='valid', ...)`` on
    (batch, steps, channels); kernel (k, in, filters) as in Keras."""
    _rank = 1

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        if padding == "causal":
            raise NotImplementedError("Conv1D(padding='causal') is not supported yet; use "
                                      "'valid' or 'same'")
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         groups, activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)

    def _make_cpp(self):
        return _layer_extras.make_cpp(self, _cpp_layers.Conv1D(
            self.name, self.filters, self.kernel_size[0], self.strides[0], self.padding,
            self.dilation_rate[0], self._extras.cpp_activation(self.activation), self.use_bias,
            self.kernel_initializer, self.bias_initializer))


class _Pooling2D(Layer):
    _cpp_class = None

    def __init__(self, pool_size=(2, 2), strides=None, padding="valid", data_format=None, **kwargs):
        self.pool_size = _int_tuple(pool_size, 2, "pool_size")
        self.strides = self.pool_size if strides is None else _int_tuple(strides, 2, "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def _make_cpp(self):
        return self._cpp_class(self.name, *self.pool_size, *self.strides, self.padding)

    def _layer_config(self):
        return {"pool_size": self.pool_size, "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format}


class MaxPooling2D(_Pooling2D):
    """``keras.layers.MaxPooling2D(pool_size=(2, 2), strides=None, padding='valid')``."""
    _cpp_class = _cpp_layers.MaxPooling2D


class AveragePooling2D(_Pooling2D):
    """``keras.layers.AveragePooling2D(pool_size, strides=None, padding='valid')``; pool_size
    has no default (as Keras 3); 'same' padding averages over the in-image elements only."""
    _cpp_class = _cpp_layers.AveragePooling2D

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


MaxPool2D = MaxPooling2D
AvgPool2D = AveragePooling2D


class GlobalAveragePooling2D(Layer):
    """``keras.layers.GlobalAveragePooling2D(data_format=None, keepdims=False)``."""

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        self.data_format = _data_format(data_format)
        self.keepdims = bool(keepdims)
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.GlobalAveragePooling2D(self.name, self.keepdims)

    def _layer_config(self):
        return {"data_format": self.data_format, "keepdims": self.keepdims}


GlobalAvgPool2D = GlobalAveragePooling2D


class Flatten(Layer):
    """``keras.layers.Flatten()``: (batch, ...) -> (batch, product of the rest)."""

    def __init__(self, data_format=None, **kwargs):
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.Flatten(self.name)

    def _layer_config(self):
        return {"data_format": self.data_format}


class Dropout(Layer):
    """``keras.layers.Dropout(rate)``: the identity unless called with ``training=True``.

    ``seed`` is accepted for compatibility; the mask comes from gpuaccel's global generator
    (``gpuaccel.random.set_seed``)."""

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0 <= rate <= 1:
            raise ValueError("Invalid value received for argument `rate`. Expected a float value "
                             f"between 0 and 1. Received: rate={rate!r}")
        _reject("Dropout", noise_shape=noise_shape)
        self.rate = float(rate)
        self.seed = seed
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.Dropout(self.name, self.rate)

    def _layer_config(self):
        return {"rate": self.rate, "seed": self.seed, "noise_shape": None}


class Activation(Layer):
    """``keras.layers.Activation(activation)``: any name of ``keras.activations``. The ones the
    C++ layers have run there; the others are a Python layer (traced into the C++ step) calling
    the ``keras.activations`` function."""

    def __init__(self, activation, **kwargs):
        self.activation = _activation(activation)
        super().__init__(**kwargs)

    def _make_cpp(self):
        if self.activation in _cpp_layers.activation_names():
            return _cpp_layers.Activation(self.name, self.activation)
        return _python_layer.make_cpp_layer(self)

    def call(self, inputs):
        from . import activations
        return activations.get(self.activation)(inputs)

    def _layer_config(self):
        return {"activation": self.activation}


class Softmax(Activation):
    """``keras.layers.Softmax(axis=-1)``: softmax over the last axis (computed in float32),
    the C++ activation layer. Over another axis it is an AxisSoftmax, a Python-traced layer
    (_activation_layers.py)."""

    def __new__(cls, axis=-1, **kwargs):
        if cls is Softmax and _last_axis_only("Softmax", axis) != -1:
            from ._activation_layers import AxisSoftmax
            cls = AxisSoftmax
        return super().__new__(cls)

    def __init__(self, axis=-1, **kwargs):
        _last_axis_only("Softmax", axis)
        self.axis = -1
        super().__init__("softmax", **kwargs)

    def _call_inputs(self, inputs, mask=None, **kwargs):
        # Keras's Softmax applies a mask (masked entries get probability 0); ignoring it, as
        # layers without masking may, would give other probabilities silently.
        if mask is not None:
            raise NotImplementedError("Softmax: the mask argument is not supported yet; add a "
                                      "large negative number to the masked logits instead")
        return super()._call_inputs(inputs, **kwargs)

    def _layer_config(self):
        return {"axis": self.axis}


class ReLU(Activation):
    """``keras.layers.ReLU()``: max(x, 0), the C++ activation layer. With ``max_value``,
    ``negative_slope`` or ``threshold`` other than their defaults it is a ClippedReLU, a
    Python-traced layer (_activation_layers.py)."""

    def __new__(cls, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        if cls is ReLU and (max_value is not None or negative_slope != 0.0 or threshold != 0.0):
            from ._activation_layers import ClippedReLU
            cls = ClippedReLU
        return super().__new__(cls)

    def __init__(self, max_value=None, negative_slope=0.0, threshold=0.0, **kwargs):
        super().__init__("relu", **kwargs)

    def _layer_config(self):
        return {"max_value": None, "negative_slope": 0.0, "threshold": 0.0}


class Reshape(Layer):
    """``keras.layers.Reshape(target_shape)``: the batch axis stays; one entry may be -1."""

    def __init__(self, target_shape, **kwargs):
        if isinstance(target_shape, numbers.Integral) and not isinstance(target_shape, bool):
            target_shape = (target_shape,)
        if not isinstance(target_shape, (tuple, list)) or not all(
                isinstance(d, numbers.Integral) and not isinstance(d, bool) for d in target_shape):
            # int() would read 1.5 as 1 and "2" as 2
            raise TypeError(f"Reshape: target_shape must be a tuple of ints, got "
                            f"{target_shape!r}")
        self.target_shape = tuple(check_range(int(d), "target_shape entry")
                                  for d in target_shape)
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.Reshape(self.name, list(self.target_shape))

    def _layer_config(self):
        return {"target_shape": self.target_shape}


class Rescaling(Layer):
    """``keras.layers.Rescaling(scale, offset=0.0)``: x * scale + offset (scalars), e.g.
    ``Rescaling(1. / 255)`` on uint8 images (integer inputs are cast to float first)."""

    def __init__(self, scale, offset=0.0, **kwargs):
        for value, arg in ((scale, "scale"), (offset, "offset")):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise NotImplementedError(f"Rescaling: only a scalar `{arg}` is supported yet, "
                                          f"got {value!r}")
        self.scale, self.offset = float(scale), float(offset)
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.Rescaling(self.name, self.scale, self.offset)

    def _layer_config(self):
        return {"scale": self.scale, "offset": self.offset}


class _Merge(Layer):
    """Merging layers take a list of tensors: ``Add()([a, b])``."""

    def _call_inputs(self, inputs, **kwargs):
        kwargs.pop("mask", None)
        if kwargs:
            raise TypeError(f"{type(self).__name__}.call() got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer should be called on a list of at least 2 inputs. "
                             f"Got {len(inputs) if isinstance(inputs, (list, tuple)) else 1} "
                             "inputs.")
        return list(inputs)


class Add(_Merge):
    """``keras.layers.Add()``: the element-wise sum of same-shaped inputs."""

    def _make_cpp(self):
        return _cpp_layers.Add(self.name)


class Concatenate(_Merge):
    """``keras.layers.Concatenate(axis=-1)``."""

    def __init__(self, axis=-1, **kwargs):
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"Concatenate: axis must be an int, got {axis!r}")
        self.axis = check_range(int(axis), "axis")
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.Concatenate(self.name, self.axis)

    def _layer_config(self):
        return {"axis": self.axis}


def _last_axis_only(layer_cls, axis):
    if isinstance(axis, (list, tuple)):
        if len(axis) != 1:
            raise NotImplementedError(f"{layer_cls}: only one normalization axis (the last) is "
                                      f"supported; received axis={axis!r}")
        axis = axis[0]
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        raise TypeError(f"{layer_cls}: Expected an int or a list/tuple of ints for the argument "
                        f"'axis', but received: {axis!r}")
    return int(axis)


class _LastAxisNormalization(Layer):
    def _check_axis(self, input_shape):
        shapes = self._shape_list(input_shape)
        ndim = len(shapes[0])
        if self.axis != -1 and self.axis != ndim - 1:
            if not -ndim <= self.axis < ndim:
                raise ValueError(f"Invalid axis: {self.axis} for an input of rank {ndim} "
                                 f"(shape {_none_shape(shapes[0])})")
            raise NotImplementedError(f"{type(self).__name__} normalizes the last axis only; "
                                      f"axis={self.axis} is not the last axis of an input of "
                                      f"rank {ndim}")

    def build(self, input_shape):
        self._check_axis(input_shape)
        super().build(input_shape)

    def compute_output_shape(self, input_shape):
        self._check_axis(input_shape)
        return super().compute_output_shape(input_shape)


class BatchNormalization(_LastAxisNormalization):
    """``keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001, ...)``; weights
    gamma, beta, moving_mean, moving_variance (the last two not trainable)."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, synchronized=False, **kwargs):
        _reject("BatchNormalization", beta_regularizer=beta_regularizer,
                gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
                gamma_constraint=gamma_constraint)
        self.axis = _last_axis_only("BatchNormalization", axis)
        self.momentum = float(momentum)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.synchronized = bool(synchronized)
        self.beta_initializer = _initializer(beta_initializer, "beta_initializer")
        self.gamma_initializer = _initializer(gamma_initializer, "gamma_initializer")
        self.moving_mean_initializer = _initializer(moving_mean_initializer, "moving_mean_initializer")
        self.moving_variance_initializer = _initializer(moving_variance_initializer,
                                                        "moving_variance_initializer")
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.BatchNormalization(
            self.name, -1, self.momentum, self.epsilon, self.center, self.scale,
            self.beta_initializer, self.gamma_initializer, self.moving_mean_initializer,
            self.moving_variance_initializer)

    def _layer_config(self):
        return {"axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "synchronized": self.synchronized,
                "beta_initializer": self.beta_initializer,
                "gamma_initializer": self.gamma_initializer,
                "moving_mean_initializer": self.moving_mean_initializer,
                "moving_variance_initializer": self.moving_variance_initializer}


class LayerNormalization(_LastAxisNormalization):
    """``keras.layers.LayerNormalization(axis=-1, epsilon=0.001, center=True, scale=True)``."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        _reject("LayerNormalization", rms_scaling=rms_scaling, beta_regularizer=beta_regularizer,
                gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
                gamma_constraint=gamma_constraint)
        self.axis = _last_axis_only("LayerNormalization", axis)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = _initializer(beta_initializer, "beta_initializer")
        self.gamma_initializer = _initializer(gamma_initializer, "gamma_initializer")
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.LayerNormalization(self.name, -1, self.epsilon, self.center, self.scale,
                                              self.beta_initializer, self.gamma_initializer)

    def _layer_config(self):
        return {"axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                "scale": self.scale, "beta_initializer": self.beta_initializer,
                "gamma_initializer": self.gamma_initializer}


class Embedding(Layer):
    """``keras.layers.Embedding(input_dim, output_dim, embeddings_initializer='uniform')``:
    integer ids -> rows of the (input_dim, output_dim) ``embeddings`` weight."""

    _integer_inputs = True

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 weights=None, lora_rank=None, input_length=None, **kwargs):
        _reject("Embedding", embeddings_regularizer=embeddings_regularizer,
                embeddings_constraint=embeddings_constraint, mask_zero=mask_zero,
                lora_rank=lora_rank)
        for arg, value in (("input_dim", input_dim), ("output_dim", output_dim)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
                raise ValueError("Both `input_dim` and `output_dim` should be positive, Received "
                                 f"input_dim = {input_dim} and output_dim = {output_dim}")
        self.input_dim = check_range(int(input_dim), "input_dim", 1)
        self.output_dim = check_range(int(output_dim), "output_dim", 1)
        self.embeddings_initializer = _initializer(embeddings_initializer, "embeddings_initializer")
        super().__init__(**kwargs)
        if weights is not None:
            self.build((None,) if self._input_shape_arg is None else (None,) + self._input_shape_arg)
            self.set_weights(weights)

    def _make_cpp(self):
        return _cpp_layers.Embedding(self.name, self.input_dim, self.output_dim,
                                     self.embeddings_initializer)

    def _layer_config(self):
        return {"input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": self.embeddings_initializer, "mask_zero": False}


class MultiHeadAttention(Layer):
    """``keras.layers.MultiHeadAttention(num_heads, key_dim, value_dim=None, dropout=0.0,
    use_bias=True, output_shape=None)``, called as ``layer(query, value, key=None)`` on
    (batch, seq, features) inputs."""

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 seed=None, **kwargs):
        _reject("MultiHeadAttention", attention_axes=attention_axes,
                kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                bias_constraint=bias_constraint)
        self.num_heads = _positive_int(num_heads, "num_heads", self)
        self.key_dim = _positive_int(key_dim, "key_dim", self)
        self.value_dim = self.key_dim if value_dim is None else _positive_int(value_dim, "value_dim", self)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
            raise ValueError(f"Invalid value received for argument `dropout`. Expected a float "
                             f"value in [0, 1). Received: dropout={dropout!r}")
        self.dropout = float(dropout)
        self.use_bias = bool(use_bias)
        if output_shape is None:
            self._output_dim = 0
        else:
            dims = (output_shape,) if isinstance(output_shape, numbers.Integral) else tuple(output_shape)
            if len(dims) != 1:
                raise NotImplementedError("MultiHeadAttention: output_shape must be one integer "
                                          f"(the output feature size); received {output_shape!r}")
            self._output_dim = _positive_int(dims[0], "output_shape", self)
        self._output_shape_arg = output_shape
        self.kernel_initializer = _initializer(kernel_initializer, "kernel_initializer")
        self.bias_initializer = _initializer(bias_initializer, "bias_initializer")
        self.seed = seed
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.MultiHeadAttention(self.name, self.num_heads, self.key_dim,
                                              self.value_dim, self.dropout, self.use_bias,
                                              self._output_dim, self.kernel_initializer,
                                              self.bias_initializer)

    def _layer_config(self):
        return {"num_heads": self.num_heads, "key_dim": self.key_dim, "value_dim": self.value_dim,
                "dropout": self.dropout, "use_bias": self.use_bias,
                "output_shape": self._output_shape_arg,
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer}

    def _call_inputs(self, query, value, key=None, query_mask=None, value_mask=None,
                     key_mask=None, attention_mask=None, return_attention_scores=False,
                     use_causal_mask=False):
        if any(m is not None for m in (query_mask, value_mask, key_mask, attention_mask)) or \
                use_causal_mask or return_attention_scores:
            raise NotImplementedError("MultiHeadAttention: masks (attention_mask, query/value/key "
                                      "masks, use_causal_mask) and return_attention_scores are "
                                      "not supported yet")
        return [query, value] if key is None else [query, value, key]

    def build(self, query_shape, value_shape=None, key_shape=None):
        """Keras's build(query_shape, value_shape, key_shape=None), or one list of shapes."""
        if value_shape is None:
            if not _is_shape_list(query_shape):
                raise ValueError("MultiHeadAttention.build needs the query and value shapes: "
                                 "build(query_shape, value_shape[, key_shape])")
            shapes = list(query_shape)
        else:
            shapes = [query_shape, value_shape] + ([] if key_shape is None else [key_shape])
        self._cpp.build([_cpp_shape(s) for s in shapes])

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None:
            shapes = list(query_shape) if _is_shape_list(query_shape) else [query_shape, query_shape]
        else:
            shapes = [query_shape, value_shape] + ([] if key_shape is None else [key_shape])
        return _none_shape(self._cpp.output_shape([_cpp_shape(s) for s in shapes]))


# Built-in layers written in Python from gpuaccel's ops (traced into the C++ step like any
# Python layer; docs/training.md lists them). Imported last: they subclass the classes above.
from ._reshaping_layers import (  # noqa: E402
    Cropping1D, Cropping2D, Cropping3D, Identity, Permute, RepeatVector, UpSampling1D,
    UpSampling2D, UpSampling3D, ZeroPadding1D, ZeroPadding2D, ZeroPadding3D)
from ._pooling_layers import (  # noqa: E402
    AveragePooling1D, AvgPool1D, GlobalAveragePooling1D, GlobalAveragePooling3D, GlobalAvgPool1D,
    GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D, GlobalMaxPooling1D,
    GlobalMaxPooling2D, GlobalMaxPooling3D, MaxPool1D, MaxPooling1D, AdaptiveAveragePooling1D,
    AdaptiveAveragePooling2D, AdaptiveMaxPooling1D, AdaptiveMaxPooling2D)
from ._activation_layers import ELU, LeakyReLU, PReLU  # noqa: E402
from ._merging_layers import (  # noqa: E402
    Average, Dot, Maximum, Minimum, Multiply, Subtract, add, average, concatenate, dot, maximum,
    minimum, multiply, subtract)
from ._regularization_layers import (  # noqa: E402
    ActivityRegularization, SpatialDropout1D, SpatialDropout2D, SpatialDropout3D)
from ._normalization_layers import (  # noqa: E402
    GroupNormalization, RMSNormalization, UnitNormalization)
from ._lambda_layer import Lambda  # noqa: E402
from ._preprocessing_layers import CenterCrop  # noqa: E402

# Keras's other names for the same classes.
Convolution1D = Conv1D
Convolution2D = Conv2D

__all__ += [
    "Convolution1D", "Convolution2D",
    "ZeroPadding2D", "Cropping2D", "UpSampling2D", "Permute", "RepeatVector", "Identity",
    "GlobalMaxPooling2D", "GlobalMaxPool2D", "GlobalAveragePooling1D", "GlobalAvgPool1D",
    "GlobalMaxPooling1D", "GlobalMaxPool1D", "MaxPooling1D", "MaxPool1D", "AveragePooling1D",
    "AvgPool1D", "LeakyReLU", "ELU", "PReLU", "Subtract", "Multiply", "Average", "Maximum",
    "Minimum", "Dot", "ActivityRegularization", "SpatialDropout1D", "SpatialDropout2D",
    "ZeroPadding1D", "ZeroPadding3D", "Cropping1D", "Cropping3D", "UpSampling1D", "UpSampling3D",
    "GlobalAveragePooling3D", "GlobalAvgPool3D", "GlobalMaxPooling3D", "GlobalMaxPool3D",
    "SpatialDropout3D", "add", "subtract", "multiply", "average", "maximum", "minimum",
    "concatenate", "dot", "GroupNormalization", "RMSNormalization", "UnitNormalization",
    "Lambda", "CenterCrop", "AdaptiveAveragePooling1D", "AdaptiveAveragePooling2D",
    "AdaptiveMaxPooling1D", "AdaptiveMaxPooling2D",
]

__getattr__ = _unsupported.module_getattr(__name__, "keras.layers", {
    "SeparableConv2D": "Conv2D",
    "DepthwiseConv2D": "Conv2D",
    "Conv2DTranspose": "UpSampling2D + Conv2D",
    "LSTM": "Dense layers or MultiHeadAttention (no recurrent layers yet)",
    "GRU": "Dense layers or MultiHeadAttention (no recurrent layers yet)",
    "SimpleRNN": "Dense layers or MultiHeadAttention (no recurrent layers yet)",
    "Resizing": "resizing images with NumPy/PIL before the model",
    "RandomFlip": "augmenting with NumPy in a Dataset.map",
    "RandomRotation": "augmenting with NumPy in a Dataset.map",
    "Normalization": "Rescaling, or normalising the data with NumPy",
})
