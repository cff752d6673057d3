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
import numbers

from .. import _C
from .. import _unsupported
from .._int_range import check_range
from . import _layer_extras
from ._activation_layers import ELU, Activation, LeakyReLU, PReLU, ReLU, Softmax
from ._layer_base import (Layer, _activation, _conv_arguments, _cpp_shape, _data_format,
                          _dropout_rate, _initializer, _int_tuple, _is_shape_list,
                          _last_axis_only, _none_shape, _output_padding, _padding,
                          _positive_int, _reject)
from ._merging_layers import (
    Add, Average, Concatenate, Dot, Maximum, Minimum, Multiply, Subtract, add, average,
    concatenate, dot, maximum, minimum, multiply, subtract)
from ._symbolic import Input
# Built-in layers written in Python from gpuaccel's ops (traced into the C++ step like any
# Python layer; docs/training.md lists them), each module a family of Keras's layers.
from ._reshaping_layers import (
    Cropping1D, Cropping2D, Cropping3D, Identity, Permute, RepeatVector, UpSampling1D,
    UpSampling2D, UpSampling3D, ZeroPadding1D, ZeroPadding2D, ZeroPadding3D)
from ._pooling_layers import (
    AveragePooling1D, AvgPool1D, GlobalAveragePooling1D, GlobalAveragePooling3D, GlobalAvgPool1D,
    GlobalAvgPool3D, GlobalMaxPool1D, GlobalMaxPool2D, GlobalMaxPool3D, GlobalMaxPooling1D,
    GlobalMaxPooling2D, GlobalMaxPooling3D, MaxPool1D, MaxPooling1D, AdaptiveAveragePooling1D,
    AdaptiveAveragePooling2D, AdaptiveMaxPooling1D, AdaptiveMaxPooling2D,
    AdaptiveAveragePooling3D, AdaptiveMaxPooling3D, AveragePooling3D, AvgPool3D, MaxPool3D,
    MaxPooling3D)
from ._regularization_layers import (
    ActivityRegularization, AlphaDropout, GaussianDropout, GaussianNoise, SpatialDropout1D,
    SpatialDropout2D, SpatialDropout3D)
from ._normalization_layers import (
    GroupNormalization, RMSNormalization, UnitNormalization)
from ._lambda_layer import Lambda
from ._attention_layers import AdditiveAttention, Attention, GroupQueryAttention
from ._einsum_dense import EinsumDense
from ._conv_lstm import ConvLSTM1D, ConvLSTM2D, ConvLSTM3D
from ._convolution_layers import (Conv1DTranspose, Conv3D, Conv3DTranspose, Convolution1DTranspose,
                                  Convolution3D, Convolution3DTranspose)
from ._masking_layer import Masking
from ._input_layer import InputLayer
from ._input_spec import InputSpec
from ._wrapper import Wrapper
from ._spectral_normalization import SpectralNormalization
from ._reversible_embedding import ReversibleEmbedding
from ._layer_serialization import deserialize, serialize
from ._preprocessing_layers import CenterCrop, Resizing
from ._augmentation_layers import (
    AutoContrast, Pipeline, RandomBrightness, RandomContrast, RandomCrop, RandomFlip,
    RandomGrayscale, RandomInvert, Solarization)
from ._geometric_augmentation_layers import RandomRotation, RandomTranslation, RandomZoom
from ._geometric_augmentation_layers import RandomPerspective, RandomShear
from ._color_augmentation_layers import (
    Equalization, RandomColorDegeneration, RandomColorJitter, RandomGaussianBlur, RandomHue,
    RandomPosterization, RandomSaturation, RandomSharpness)
from ._region_augmentation_layers import CutMix, MaxNumBoundingBoxes, MixUp, RandomErasing
from ._composite_augmentation_layers import AugMix, RandAugment
from ._numeric_preprocessing_layers import (
    CategoryEncoding, Discretization, IntegerLookup, Normalization)
from ._depthwise_layers import DepthwiseConv1D, DepthwiseConv2D, SeparableConv1D, SeparableConv2D
from ._masking import MaskSource
from ._recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells
from ._recurrent_layers import GRU, LSTM, RNN, Bidirectional, SimpleRNN, TimeDistributed

_cpp_layers = _C.layers

__all__ = [
    "Layer", "Input", "InputLayer", "Dense", "Conv2D", "MaxPooling2D", "MaxPool2D",
    "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling2D", "GlobalAvgPool2D", "Flatten",
    "Dropout", "Activation", "BatchNormalization", "LayerNormalization", "Embedding",
    "MultiHeadAttention", "Softmax", "ReLU", "Reshape", "Rescaling", "Add", "Concatenate", "Conv1D",
]

class _KernelLayer(Layer):
    """What Dense, Conv1D, Conv2D and Conv2DTranspose share: an activation, a kernel and a bias with their
    initializers, and Keras's regularizers and constraints, which run in Python around the C++
    layer (``_layer_extras``)."""

    def _init_kernel_layer(self, activation, use_bias, kernel_initializer, bias_initializer,
                           kernel_regularizer, bias_regularizer, activity_regularizer,
                           kernel_constraint, bias_constraint, **kwargs):
        """The end of the subclass's ``__init__``, once it has checked its own arguments."""
        self.activation = _activation(activation)
        self._extras = _layer_extras.Extras(
            self.activation, _cpp_layers.activation_names(), kernel_regularizer,
            bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = _initializer(kernel_initializer, "kernel_initializer")
        self.bias_initializer = _initializer(bias_initializer, "bias_initializer")
        super().__init__(**kwargs)

    build = _layer_extras.build_method(Layer.build)
    call = _layer_extras.call


class Dense(_KernelLayer):
    """``keras.layers.Dense(units, activation=None, use_bias=True, ...)``."""

    def __init__(self, units, activation=None, use_bias=True, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", kernel_regularizer=None, bias_regularizer=None,
                 activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
                 lora_rank=None, **kwargs):
        _reject("Dense", lora_rank=lora_rank)
        self.units = _positive_int(units, "units", self)
        self._init_kernel_layer(activation, use_bias, kernel_initializer, bias_initializer,
                                kernel_regularizer, bias_regularizer, activity_regularizer,
                                kernel_constraint, bias_constraint, **kwargs)

    def _make_cpp(self):
        return _layer_extras.make_cpp(self, _cpp_layers.Dense(
            self.name, self.units, self._extras.cpp_activation(self.activation), self.use_bias,
            self.kernel_initializer, self.bias_initializer))

    def _layer_config(self):
        return {"units": self.units, "activation": self.activation, "use_bias": self.use_bias,
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer, **self._extras.config()}


class _Conv(_KernelLayer):
    """What Conv1D, Conv2D and Conv2DTranspose share: Keras's arguments, their checks and their
    config.
    ``_rank`` is the number of spatial axes."""
    _rank = None

    def __init__(self, filters, kernel_size, strides, padding, data_format, dilation_rate, groups,
                 activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint,
                 **kwargs):
        (self.filters, self.kernel_size, self.strides, self.padding, self.data_format,
         self.dilation_rate) = _conv_arguments(type(self).__name__, self._rank, filters,
                                               kernel_size, strides, padding, data_format,
                                               dilation_rate, groups)
        self.groups = int(groups)
        self._init_kernel_layer(activation, use_bias, kernel_initializer, bias_initializer,
                                kernel_regularizer, bias_regularizer, activity_regularizer,
                                kernel_constraint, bias_constraint, **kwargs)

    def _layer_config(self):
        return {"filters": self.filters, "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "groups": self.groups,
                "activation": self.activation,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer, **self._extras.config()}


class Conv2D(_Conv):
    """``keras.layers.Conv2D(filters, kernel_size, strides=(1, 1), padding='valid', ...,
    groups=1)`` on channels-last images; kernel (kh, kw, in / groups, filters)."""
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
            self.kernel_initializer, self.bias_initializer, self.groups))


class Conv2DTranspose(_Conv):
    """``keras.layers.Conv2DTranspose(filters, kernel_size, strides=(1, 1), padding='valid',
    output_padding=None, ...)``, the upsampling layer of decoders, on channels-last images;
    kernel (kh, kw, filters, in) as in Keras, output sizes as Keras 3 computes them."""
    _rank = 2

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", output_padding=None,
                 data_format=None, dilation_rate=(1, 1), activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        self.output_padding = _output_padding(output_padding, strides, 2)
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate, 1,
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, **kwargs)

    def _layer_config(self):
        config = super()._layer_config()
        config["output_padding"] = self.output_padding
        del config["groups"]  # Keras's Conv2DTranspose has none
        return config

    def _make_cpp(self):
        output_padding = self.output_padding or (-1, -1)
        return _layer_extras.make_cpp(self, _cpp_layers.Conv2DTranspose(
            self.name, self.filters, *self.kernel_size, *self.strides, self.padding,
            *output_padding, *self.dilation_rate, self._extras.cpp_activation(self.activation),
            self.use_bias, self.kernel_initializer, self.bias_initializer))


class Conv1D(_Conv):
    """``keras.layers.Conv1D(filters, kernel_size, strides=1, padding='valid', ..., groups=1)``
    on (batch, steps, channels); kernel (k, in / groups, filters) as in Keras."""
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
            self.kernel_initializer, self.bias_initializer, self.groups))


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
        _build_with_extras(self, input_shape)

    def compute_output_shape(self, input_shape):
        self._check_axis(input_shape)
        return super().compute_output_shape(input_shape)

    # gamma/beta regularizers and constraints: a traced layer around the C++ one (_layer_extras)
    call = _layer_extras.call


_build_with_extras = _layer_extras.build_method(Layer.build)


class BatchNormalization(_LastAxisNormalization):
    """``keras.layers.BatchNormalization(axis=-1, momentum=0.99, epsilon=0.001, ...)``; weights
    gamma, beta, moving_mean, moving_variance (the last two not trainable)."""

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones",
                 beta_regularizer=None, gamma_regularizer=None, beta_constraint=None,
                 gamma_constraint=None, synchronized=False, **kwargs):
        self._extras = _layer_extras.Extras.of_weights(
            gamma_regularizer=gamma_regularizer, beta_regularizer=beta_regularizer,
            gamma_constraint=gamma_constraint, beta_constraint=beta_constraint)
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
        return _layer_extras.make_cpp(self, _cpp_layers.BatchNormalization(
            self.name, -1, self.momentum, self.epsilon, self.center, self.scale,
            self.beta_initializer, self.gamma_initializer, self.moving_mean_initializer,
            self.moving_variance_initializer))

    def _layer_config(self):
        return {"axis": self.axis, "momentum": self.momentum, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale, "synchronized": self.synchronized,
                "beta_initializer": self.beta_initializer,
                "gamma_initializer": self.gamma_initializer,
                "moving_mean_initializer": self.moving_mean_initializer,
                "moving_variance_initializer": self.moving_variance_initializer,
                **self._extras.config()}


class LayerNormalization(_LastAxisNormalization):
    """``keras.layers.LayerNormalization(axis=-1, epsilon=0.001, center=True, scale=True)``."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True, rms_scaling=False,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        _reject("LayerNormalization", rms_scaling=rms_scaling)
        self._extras = _layer_extras.Extras.of_weights(
            gamma_regularizer=gamma_regularizer, beta_regularizer=beta_regularizer,
            gamma_constraint=gamma_constraint, beta_constraint=beta_constraint)
        self.axis = _last_axis_only("LayerNormalization", axis)
        self.epsilon = float(epsilon)
        self.center = bool(center)
        self.scale = bool(scale)
        self.beta_initializer = _initializer(beta_initializer, "beta_initializer")
        self.gamma_initializer = _initializer(gamma_initializer, "gamma_initializer")
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _layer_extras.make_cpp(self, _cpp_layers.LayerNormalization(
            self.name, -1, self.epsilon, self.center, self.scale, self.beta_initializer,
            self.gamma_initializer))

    def _layer_config(self):
        return {"axis": self.axis, "epsilon": self.epsilon, "center": self.center,
                "scale": self.scale, "beta_initializer": self.beta_initializer,
                "gamma_initializer": self.gamma_initializer, **self._extras.config()}


class Embedding(MaskSource, Layer):
    """``keras.layers.Embedding(input_dim, output_dim, embeddings_initializer='uniform',
    mask_zero=False)``: integer ids -> rows of the (input_dim, output_dim) ``embeddings``
    weight; with ``mask_zero`` id 0 masks its time step for the recurrent layers after it
    (_masking.py)."""

    _integer_inputs = True

    def __init__(self, input_dim, output_dim, embeddings_initializer="uniform",
                 embeddings_regularizer=None, embeddings_constraint=None, mask_zero=False,
                 weights=None, lora_rank=None, input_length=None, **kwargs):
        _reject("Embedding", lora_rank=lora_rank)
        self._extras = _layer_extras.Extras.of_weights(
            embeddings_regularizer=embeddings_regularizer,
            embeddings_constraint=embeddings_constraint)
        self.mask_zero = bool(mask_zero)
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
        return _layer_extras.make_cpp(self, _cpp_layers.Embedding(
            self.name, self.input_dim, self.output_dim, self.embeddings_initializer))

    # embeddings regularizer and constraint: a traced layer around the C++ one (_layer_extras)
    build = _layer_extras.build_method(Layer.build)
    call = _layer_extras.call

    def _layer_config(self):
        return {"input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": self.embeddings_initializer,
                "mask_zero": self.mask_zero, **self._extras.config()}

    def _masks_timesteps(self):
        return self.mask_zero


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
        self.dropout = _dropout_rate(dropout)
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


# Keras's other names for the same classes.
Convolution1D = Conv1D
Convolution2D = Conv2D
Convolution2DTranspose = Conv2DTranspose
SeparableConvolution1D = SeparableConv1D
SeparableConvolution2D = SeparableConv2D

__all__ += [
    "Convolution1D", "Convolution2D", "Conv2DTranspose", "Convolution2DTranspose",
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
    "AdaptiveMaxPooling1D", "AdaptiveMaxPooling2D", "Attention", "AdditiveAttention",
    "GroupQueryAttention", "EinsumDense", "Conv1DTranspose",
    "Convolution1DTranspose", "MaxPooling3D", "MaxPool3D", "AveragePooling3D", "AvgPool3D",
    "AdaptiveAveragePooling3D", "AdaptiveMaxPooling3D", "Masking", "InputSpec", "Wrapper",
    "SpectralNormalization", "ReversibleEmbedding", "serialize", "deserialize",
    "Resizing", "Normalization", "Discretization", "CategoryEncoding", "IntegerLookup",
    "GaussianNoise", "GaussianDropout", "AlphaDropout", "RandomFlip", "RandomCrop",
    "RandomContrast", "RandomBrightness", "RandomGrayscale", "RandomInvert", "Solarization",
    "AutoContrast", "Pipeline", "RandomRotation", "RandomTranslation", "RandomZoom",
    "DepthwiseConv1D", "DepthwiseConv2D", "SeparableConv1D", "SeparableConv2D",
    "SeparableConvolution1D", "SeparableConvolution2D",
    "SimpleRNNCell", "LSTMCell", "GRUCell",
    "RNN", "StackedRNNCells", "SimpleRNN", "LSTM", "GRU", "Bidirectional", "TimeDistributed",
    "Conv3D", "Conv3DTranspose", "Convolution3D", "Convolution3DTranspose", "ConvLSTM1D",
    "ConvLSTM2D", "ConvLSTM3D",
]

__getattr__ = _unsupported.module_getattr(__name__, "keras.layers", {})

__all__ += ["RandomHue", "RandomSaturation", "RandomColorDegeneration", "RandomColorJitter",
            "RandomPosterization", "RandomSharpness", "Equalization", "RandomGaussianBlur",
            "RandomErasing", "MixUp", "RandomShear", "RandomPerspective", "RandAugment",
            "CutMix", "AugMix", "MaxNumBoundingBoxes"]
