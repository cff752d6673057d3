"""``keras.layers.Layer``, the base of every gpuaccel layer, and the argument checks the layer
modules share (``_int_tuple``, ``_padding``, ``_data_format``, ``_reject``, ...).

``keras.layers`` (``layers.py``) re-exports the layers of several modules (``_activation_layers``,
``_merging_layers``, ``_pooling_layers``, ...), and each of those subclasses ``Layer``; with the
base class here, below all of them, none of those modules imports ``layers.py`` back.
"""
import collections
import numbers
import re

import numpy as np

from .. import _C
from .._int_range import check_range
from .._tensor import Tensor, no_grad, tape_active, tensor as _make_tensor
from ..dtypes import as_dtype
from . import _call_arguments, _held_sublayers, _keras_variable, _mask_flow, _symbolic
from . import _layer_variables
from . import mixed_precision as _mixed_precision
from . import _layer_outputs
from . import _python_layer
from ._input_spec import assert_input_compatibility
from ._snake_case import snake_case as _snake_case
from ._symbolic import KerasTensor

_cpp_layers = _C.layers
# The module whose layer classes' build methods are left as they are (they build C++ layers); a
# build method that a class of any other module defines is wrapped (_python_layer.wrap_build).
_BUILT_IN_LAYERS_MODULE = __package__ + ".layers"

_BASE_KWARGS = ("input_shape", "input_dim", "batch_input_shape", "batch_size")
_KERAS_DEFAULTS = {("autocast", True), ("activity_regularizer", None)}
_uids = collections.defaultdict(int)




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


def _int_tuple(value, n, arg, allow_zero=False):
    """An int or a tuple of ``n`` positive ints (non-negative with ``allow_zero``), as Keras's
    standardize_tuple."""
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
    low = 0 if allow_zero else 1
    if any(v < low for v in values):
        raise ValueError(f"The `{arg}` argument must be a tuple of {n} integers. Received {arg}="
                         f"{value!r}, including values {set(v for v in values if v < low)} that do "
                         f"not satisfy `value {'>=' if allow_zero else '>'} 0`")
    for v in values:
        check_range(v, arg, low)
    return values


def _dropout_rate(dropout):
    """An attention layer's ``dropout`` argument, checked as Keras's MultiHeadAttention does."""
    if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real) or not 0 <= dropout < 1:
        raise ValueError(f"Invalid value received for argument `dropout`. Expected a float "
                         f"value in [0, 1). Received: dropout={dropout!r}")
    return float(dropout)


def _strictly_positive(value, arg):
    """Keras's check of a convolution's ``filters`` (or ``depth_multiplier``), in its words."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"Invalid value for argument `{arg}`. Expected a strictly positive "
                         f"value. Received {arg}={value!r}.")
    return check_range(int(value), arg, 1)


def _window_arguments(rank, kernel_size, strides, padding, data_format, dilation_rate):
    """Keras's checks of a convolution window: (kernel_size, strides, padding, data_format,
    dilation_rate), the tuples of ``rank`` ints."""
    kernel_size = _int_tuple(kernel_size, rank, "kernel_size")
    strides = _int_tuple(strides, rank, "strides")
    dilation_rate = _int_tuple(dilation_rate, rank, "dilation_rate")
    padding, data_format = _padding(padding), _data_format(data_format)
    if max(strides) > 1 and max(dilation_rate) > 1:
        raise ValueError("`strides > 1` not supported in conjunction with `dilation_rate > 1`. "
                         f"Received: strides={strides} and dilation_rate={dilation_rate}")
    return kernel_size, strides, padding, data_format, dilation_rate


def _conv_arguments(kind, rank, filters, kernel_size, strides, padding, data_format,
                    dilation_rate, groups=1):
    """Keras's checks of a convolution's arguments (``kind`` names the layer): (filters,
    kernel_size, strides, padding, data_format, dilation_rate), the tuples of ``rank`` ints.
    ``groups`` is checked in Keras's words; the input channels' divisibility by it is checked
    at build (C++)."""
    filters = _strictly_positive(filters, "filters")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups <= 0:
        raise ValueError("The number of groups must be a positive integer. "
                         f"Received: groups={groups!r}.")
    if filters % groups:
        raise ValueError("The number of filters must be evenly divisible by the number of "
                         f"groups. Received: groups={groups}, filters={filters}.")
    return (filters, *_window_arguments(rank, kernel_size, strides, padding, data_format,
                                        dilation_rate))


def _output_padding(output_padding, strides, rank):
    """A transposed convolution's ``output_padding`` (None or ``rank`` ints), each strictly
    below its stride as Keras requires."""
    if output_padding is None:
        return None
    output_padding = _int_tuple(output_padding, rank, "output_padding", allow_zero=True)
    strides = _int_tuple(strides, rank, "strides")
    for i, (extra, stride) in enumerate(zip(output_padding, strides)):
        if extra >= stride:
            raise ValueError(
                "`output_padding` must be strictly less than `strides` for all dimensions. At "
                f"dimension {i}, `output_padding` is {extra} but `strides` is {stride}. "
                f"Received: output_padding={output_padding}, strides={strides}")
    return output_padding


def _padding(value):
    if not isinstance(value, str) or value.lower() not in ("valid", "same"):
        raise ValueError("The `padding` argument must be one of 'valid', 'same'. "
                         f"Received: padding={value!r}")
    return value.lower()


def standardize_data_format(value):
    """Keras's ``backend.standardize_data_format``: None is channels_last; either name, in any
    case, is itself; anything else a ValueError. (For the ops that take channels_first by
    transposing; gpuaccel's layers take ``_data_format``'s channels_last only.)"""
    value = "channels_last" if value is None else str(value).lower()
    if value not in ("channels_first", "channels_last"):
        raise ValueError("The `data_format` argument must be one of {'channels_first', "
                         f"'channels_last'}}. Received: data_format={value}")
    return value


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
    if not isinstance(value, str) and not callable(value):
        raise ValueError(f"Could not interpret activation function identifier: {value!r} (a "
                         f"name of keras.activations ({activations.names()}), a function, or "
                         "None)")
    if not isinstance(value, str) and name not in activations.names():
        return value  # the user's function: it runs in Python after the C++ layer, traced
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
    # Keras's declaration of the inputs a layer accepts (an InputSpec or a list of them),
    # checked on every call; a layer sets it in __init__ or build.
    input_spec = None

    def __init__(self, name=None, dtype=None, trainable=True, **kwargs):
        # Keras 3's Layer arguments that its configs of Python layers carry, at the values
        # gpuaccel's layers have (other values stay unrecognized)
        kwargs = {k: v for k, v in kwargs.items()
                  if not any(k == key and v is value for key, value in _KERAS_DEFAULTS)}
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
        if build is not None and cls.__module__ != _BUILT_IN_LAYERS_MODULE and not getattr(
                build, "_gpuaccel_build_wrapper", False):
            cls.build = _python_layer.wrap_build(build)

    def _make_cpp(self):
        if _python_layer.defines_python_call(type(self), Layer.call):
            return _python_layer.make_cpp_layer(self)
        raise NotImplementedError(f"{type(self).__name__} does not define its C++ layer: "
                                  "define call(self, inputs) (and build, add_weight) as in Keras")

    def _is_python_layer(self):
        return isinstance(self._cpp, _cpp_layers.TracedLayer)

    def call(self, inputs, *args, **kwargs):
        raise NotImplementedError(f"Layer {type(self).__name__} does not have a `call()` method "
                                  "implemented.")

    def _takes_call_arguments(self):
        """Whether calls may pass arguments beyond the inputs (_call_arguments.py): a Python
        layer that does not read its call arguments itself (``_call_inputs``)."""
        return self._is_python_layer() and type(self)._call_inputs is Layer._call_inputs

    def _call_variant(self, arguments):
        """The C++ layer running ``call`` with these extra arguments (_call_arguments.py)."""
        return _call_arguments.variant(self, arguments, _python_layer.run_call,
                                       _python_layer.warn_once)

    def _output_shape_with(self, input_shape, arguments):
        """``call``'s output shape for inputs of ``input_shape`` and these extra arguments."""
        return _python_layer.compute_output_shape(self, input_shape, arguments)

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
        """The losses the last call added (``add_loss``): of its C++ layer, and of each variant
        that runs a call with extra arguments (_call_arguments.py) in a model."""
        if not self._is_python_layer():
            return []
        variants = self.__dict__.get("_call_variants", {}).values()
        return [loss for cpp in [self._cpp, *variants] for loss in cpp.added_losses()]

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
    def __setattr__(self, name, value):
        # Keras tracks a keras.Variable assigned to a layer's attribute as the layer's weight.
        if getattr(value, "_keras_variable", False) and "_cpp" in self.__dict__:
            _keras_variable.track(self, name, value)
        object.__setattr__(self, name, value)

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
        _call_arguments.set_variants_trainable(self, value)

    @property
    def weights(self):
        if _held_sublayers.holds_layers(self):
            return _held_sublayers.keras_weights(self, self._own_weights())
        return [_layer_variables.labelled(self, n, w, t) for n, w, t in self._cpp.weights]

    def _own_weights(self):
        return [_layer_variables.labelled(self, n, w, t)
                for n, w, t in _held_sublayers.own_weight_entries(self)]

    def __getattr__(self, attribute):
        # Only for names normal lookup did not find: Keras's weight attributes (dense.kernel),
        # and the symbolic tensors of the layer's first functional call (layer.output).
        if attribute in ("input", "output"):
            return _symbolic.first_call(self, attribute)
        if not attribute.startswith("_") and "_cpp" in self.__dict__:
            variable = _layer_variables.find(self, attribute)
            if variable is not _layer_variables.MISSING:
                return variable
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attribute}'")

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        if _held_sublayers.holds_layers(self):  # a frozen held layer's are left out
            return _held_sublayers.keras_trainable_weights(self, self._own_weights())
        return [w for w in self.weights if w.trainable]

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return self.weights
        trainable = self.trainable_weights
        return [w for w in self.weights if all(w is not t for t in trainable)]

    @property
    def variables(self):
        return self.weights

    # Keras's other names for the same lists (TF tutorials pass layer.trainable_variables to
    # tape.gradient and the optimizer); properties so that a subclass's override is used.
    trainable_variables = property(lambda self: self.trainable_weights)
    non_trainable_variables = property(lambda self: self.non_trainable_weights)

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

    # ``training`` when a call gives none and no enclosing call() does (Keras's augmentation
    # layers default to True).
    _default_training = False

    def __call__(self, *args, training=None, **kwargs):
        if training is None:
            training = _python_layer.outer_training()
            if training is None:
                training = self._default_training
        arguments = None  # a Python layer's call arguments beyond inputs/training/mask
        if _call_arguments.takes_extra_arguments(self, args, kwargs):
            args, kwargs, arguments = _call_arguments.split(self, args, kwargs)
        inputs = self._call_inputs(*args, **kwargs)
        extra = arguments.tensors if arguments is not None else []
        if any(isinstance(t, KerasTensor) for t in inputs + extra):
            assert_input_compatibility(self.input_spec, inputs, self.name)
            return _symbolic.call_symbolic(self, inputs + extra, arguments)
        tensors = [self._to_tensor(x) for x in inputs]
        assert_input_compatibility(self.input_spec, tensors, self.name)
        if not self.built:
            shapes = [(None,) + tuple(t.shape[1:]) if len(t.shape) else () for t in tensors]
            self.build(shapes[0] if len(shapes) == 1 else shapes)
        tensors += [_call_arguments.as_tensor(x) for x in extra]
        cpp = self._cpp if arguments is None else self._call_variant(arguments)
        if tape_active():
            output = cpp.call(tensors, bool(training))
        else:
            # Outside a GradientTape, TF records nothing: the result is a plain value
            # (.numpy()), as a Model's call gives.
            with no_grad():
                output = cpp.call(tensors, bool(training))
        mask = _mask_flow.output_mask(self, getattr(inputs[0], "_keras_mask", None)
                                      if inputs else None)
        if self._is_python_layer():  # a tuple where call returned several tensors
            output = _layer_outputs.unpack_call(self, tensors, output)
        if mask is not None:  # a timestep mask passed on, as Keras's eager calls do
            _layer_outputs.main_output(output)._keras_mask = mask
        return output

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


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
