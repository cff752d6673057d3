"""Keras's convolutional LSTMs (ConvLSTM1D/2D/3D): the LSTM over sequences of images, whose
gates are convolutions instead of matrix products. The cell is LSTMCell's gate arithmetic
(_recurrent_cells.py) with two products replaced: the input's, one convolution over every
step at once (the steps folded into the batch), and the previous output's, a 'same'
convolution per step; the layer is the RNN layer over that cell. Convolutions of every rank
go through keras.ops.conv (1-D and 2-D on the conv2d op, 3-D on gpuaccel/_conv3d.py), so the
layers are traced into the C++ step like the other recurrent layers.

Weights keep Keras 3's names and layouts (conv_lstm2d/conv_lstm_cell/kernel of shape
(kernel..., in, 4 * filters), recurrent_kernel (kernel..., filters, 4 * filters), bias
(4 * filters,), gates i, f, c, o). Not here yet, each refused by name: dropout and
recurrent_dropout (Keras draws one mask per gate), masks, data_format='channels_first'.
"""
from .. import _C
from ._layer_base import _window_arguments
from ._layers_of_layers import adopt_weights
from ._recurrent_cells import LSTMCell, _weight_initializer, masked_loop
from ._recurrent_layers import _CellLayer


def _conv_length(size, kernel, stride, padding, dilation):
    """Keras's output length of a convolution along one axis."""
    if padding == "same":
        return -(-size // stride)
    return (size - ((kernel - 1) * dilation + 1)) // stride + 1


class ConvLSTMCell(LSTMCell):
    """The convolutional LSTM cell of rank ``rank``; called on one step (batch, spatial...,
    channels) with states [h, c] of (batch, output spatial..., filters)."""

    def __init__(self, filters, rank=2, kernel_size=None, strides=1, padding="valid",
                 data_format=None, dilation_rate=1, unit_forget_bias=True, dropout=0.0,
                 recurrent_dropout=0.0, **kwargs):
        if dropout or recurrent_dropout:
            raise NotImplementedError(
                "ConvLSTM's dropout and recurrent_dropout are not supported yet (Keras draws "
                "one mask per gate); put a SpatialDropout or Dropout layer before it instead")
        self.rank = int(rank)
        (self.kernel_size, self.strides, self.padding, self.data_format,
         self.dilation_rate) = _window_arguments(self.rank, kernel_size, strides, padding,
                                                 data_format, dilation_rate)
        self._spatial = None  # the step's input spatial sizes, known at build
        super().__init__(filters, unit_forget_bias=unit_forget_bias, **kwargs)

    @property
    def filters(self):
        return self.units

    def build(self, input_shape):
        spatial, channels = tuple(input_shape[1:-1]), input_shape[-1]
        if len(spatial) != self.rank:
            raise ValueError(f"{type(self).__name__} of rank {self.rank} expects steps of rank "
                             f"{self.rank + 2}, received input_shape={input_shape}")
        if None in spatial:
            raise ValueError("ConvLSTM layers only support static input shapes for the spatial "
                             f"dimension. Received invalid input shape: input_shape="
                             f"{input_shape}")
        if channels is None:
            raise ValueError("The channel dimension of the inputs (last axis) should be "
                             f"defined. Found None. Full input shape received: input_shape="
                             f"{input_shape}")
        self._spatial = spatial
        width = 4 * self.units
        self.kernel = self.add_weight(
            shape=self.kernel_size + (channels, width), name="kernel",
            initializer=_weight_initializer(self.kernel_initializer, "kernel_initializer"))
        self.recurrent_kernel = self.add_weight(
            shape=self.kernel_size + (self.units, width), name="recurrent_kernel",
            initializer=_weight_initializer(self.recurrent_initializer, "recurrent_initializer"))
        self.bias = (self.add_weight(shape=(width,), name="bias",
                                     initializer=self._bias_initial_value())
                     if self.use_bias else None)

    def output_spatial(self, spatial):
        return tuple(_conv_length(*axis) for axis in zip(
            spatial, self.kernel_size, self.strides, [self.padding] * self.rank,
            self.dilation_rate))

    def _project(self, inputs, input_mask):
        """The input convolution plus bias, of one step or of a whole (batch, time, ...)
        sequence at once (its steps folded into the batch)."""
        from . import ops
        sequence = inputs.ndim == self.rank + 3
        steps = _C.reshape(inputs, [-1, *inputs.shape[2:]]) if sequence else inputs
        out = ops.conv(steps, self.kernel, self.strides, self.padding,
                       dilation_rate=self.dilation_rate)
        if self.bias is not None:
            out = _C.binary("add", out, self.bias)
        return _C.reshape(out, [*inputs.shape[:2], *out.shape[1:]]) if sequence else out

    def _recurrent_product(self, h):
        from . import ops
        return ops.conv(h, self.recurrent_kernel, 1, "same")

    def run_steps(self, sequence, states, training, step_mask=None, zero_output_for_mask=False):
        projected = self._project(sequence, None)  # every step's input convolution at once
        return masked_loop(lambda t, step_states: self._step(_C.select(projected, 1, t),
                                                             step_states, None),
                           sequence.shape[1], states, step_mask, zero_output_for_mask)

    def get_initial_state(self, batch_size=None):
        shape = [int(batch_size), *self.output_spatial(self._spatial), self.units]
        return [_C.tensor_full(shape, 0.0, "float32", None) for _ in range(2)]

    def _layer_config(self):
        config = super()._layer_config()
        units = config.pop("units")
        config.pop("implementation", None)
        return {"filters": units, "kernel_size": self.kernel_size, "strides": self.strides,
                "padding": self.padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, **config}


class _ConvLSTM(_CellLayer):
    """What ConvLSTM1D/2D/3D share; ``_rank`` is the number of spatial axes."""
    _cell_class = ConvLSTMCell
    _rank = None

    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, activation="tanh", recurrent_activation="sigmoid",
                 use_bias=True, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, **kwargs):
        super().__init__(
            filters, return_sequences=return_sequences, return_state=return_state,
            go_backwards=go_backwards, stateful=stateful,
            activity_regularizer=activity_regularizer, rank=self._rank,
            kernel_size=kernel_size, strides=strides, padding=padding, data_format=data_format,
            dilation_rate=dilation_rate, activation=activation,
            recurrent_activation=recurrent_activation, use_bias=use_bias,
            kernel_initializer=kernel_initializer, recurrent_initializer=recurrent_initializer,
            bias_initializer=bias_initializer, unit_forget_bias=unit_forget_bias,
            kernel_regularizer=kernel_regularizer, recurrent_regularizer=recurrent_regularizer,
            bias_regularizer=bias_regularizer, kernel_constraint=kernel_constraint,
            recurrent_constraint=recurrent_constraint, bias_constraint=bias_constraint,
            dropout=dropout, recurrent_dropout=recurrent_dropout, seed=seed, **kwargs)

    @property
    def _sequence_rank(self):
        return self._rank + 3

    def _call_inputs(self, sequences, initial_state=None, mask=None):
        if mask is not None or getattr(sequences, "_keras_mask", None) is not None:
            raise NotImplementedError(f"{type(self).__name__} with a timestep mask is not "
                                      "supported yet")
        return super()._call_inputs(sequences, initial_state)

    def build(self, sequences_shape, initial_state_shape=None):
        shape = self._sequences_shape(sequences_shape)
        if not self.cell.built:
            self.cell.build((shape[0], *shape[2:]))
        adopt_weights(self, self.cell)

    def _step_shape(self, shape):
        return (*self.cell.output_spatial(shape[2:-1]), self.cell.units)

    def _output_shapes(self, shapes):
        shape = self._sequences_shape(shapes)
        step = self._step_shape(shape)
        output = (shape[0], shape[1], *step) if self.return_sequences else (shape[0], *step)
        return [output, (shape[0], *step), (shape[0], *step)] if self.return_state else output

    def _initial_states(self, sequences):
        shape = [sequences.shape[0], *self._step_shape(tuple(sequences.shape))]
        return [_C.tensor_full(shape, 0.0, sequences._dtype_name, sequences._device_name)
                for _ in range(2)]

    def get_config(self):
        config = super().get_config()
        config.pop("rank", None)
        return config


class ConvLSTM1D(_ConvLSTM):
    """``keras.layers.ConvLSTM1D(filters, kernel_size, ...)`` over (batch, time, steps,
    channels)."""
    _rank = 1


class ConvLSTM2D(_ConvLSTM):
    """``keras.layers.ConvLSTM2D(filters, kernel_size, ...)`` over (batch, time, rows, cols,
    channels)."""
    _rank = 2


class ConvLSTM3D(_ConvLSTM):
    """``keras.layers.ConvLSTM3D(filters, kernel_size, ...)`` over (batch, time, depth, rows,
    cols, channels)."""
    _rank = 3

