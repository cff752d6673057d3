"""The cells of Keras 3's recurrent layers (SimpleRNNCell, LSTMCell, GRUCell,
StackedRNNCells) and ``run_sequence``, the whole recurrence of one RNN layer, written from
gpuaccel's ops (the layers over them are in _recurrent_layers.py).

A layer's call is traced once per input signature into the C++ step (_python_layer.py).
``run_sequence`` runs the whole recurrence: as one fused op (``_C.fused_rnn``: oneDNN's RNN
primitives on the CPU, cuDNN's on a GPU; ops/rnn.h) when the cell is in Keras's cuDNN-eligible
configuration (``fused_cell_kind``), else as a time loop unrolled into the trace (the sequence
length is part of the signature), where each built-in cell projects the inputs of every step in
one matmul and runs only the recurrent part step by step.

Weights are laid out as Keras 3's: kernel (input_dim, k*units), recurrent_kernel
(units, k*units), gates in the order i, f, c, o (LSTM) and z, r, h (GRU), GRU's bias (2, 3*units)
when ``reset_after``.
"""
import numbers

import numpy as np

from .. import _C, nest
from .._tensor import Tensor
from . import activations as _activations
from . import initializers as _initializers
from ._layer_base import Layer, _reject, _snake_case
from ._layers_of_layers import LayerOfLayers, adopt_weights


def _weight_initializer(value, arg):
    """A name the C++ initializers draw ('glorot_uniform'), else a keras.initializers object
    (an 'orthogonal' name, an Initializer instance, a config dict)."""
    if isinstance(value, str):
        try:
            return _C.layers.canonical_initializer(value)
        except ValueError:  # not a C++ initializer's name; keras.initializers may know it
            pass
    initializer = _initializers.get(value)
    if initializer is None or not callable(initializer):
        raise ValueError(f"Could not interpret initializer identifier for `{arg}`: {value!r}")
    return initializer


def _rate(value, arg):
    """A dropout rate, clipped into [0, 1] as Keras's cells do."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"`{arg}` must be a float between 0 and 1, received {arg}={value!r}")
    return float(min(1.0, max(0.0, value)))


def _units(value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ValueError(f"Received an invalid value for argument `units`, expected a positive "
                         f"integer, got {value!r}.")
    return int(value)


def _columns(x, start, stop):
    """x[..., start:stop]: one gate's block of the last axis."""
    return _C.slice(x, [(0, n, 1) for n in x.shape[:-1]] + [(start, stop, 1)])


def _add(a, b):
    return _C.binary("add", a, b)


def _mul(a, b):
    return _C.binary("mul", a, b)


def _one_minus(x):
    return _C.binary("sub", _C.scalar_like(1.0, x), x)


def _dropout_mask(like_shape, rate, like):
    """One keep mask (scaled by 1/(1-rate)) for a whole sequence, as Keras's cells reuse theirs
    for every step; a fresh draw on every replay (the dropout op is the random op traces
    replay)."""
    ones = _C.tensor_full(list(like_shape), 1.0, like._dtype_name, like._device_name)
    return _C.dropout(ones, rate, True)


def _stack_steps(steps):
    """Per-step (batch, units) outputs joined into (batch, time, units)."""
    return _C.concat([_C.expand_dims(s, 1) for s in steps], 1)


def reverse_time(x):
    """x[:, ::-1] of a (batch, time, ...) tensor."""
    return _C.concat([_C.expand_dims(_C.select(x, 1, t), 1)
                      for t in reversed(range(x.shape[1]))], 1)


class _StepCall:
    """Mixin (before Layer in the bases): a cell called on its own, ``cell(inputs, states)``,
    runs one step eagerly, as Keras's cells: (output, new states)."""

    def __call__(self, inputs, states=None, training=None, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.call() got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        if states is None:
            raise ValueError(f"{type(self).__name__} must be called with `states` (state "
                             f"sizes {self.state_size}): cell(inputs, states)")
        inputs = self._to_tensor(inputs)

        def tensors(value):
            if isinstance(value, (list, tuple)):
                return [tensors(item) for item in value]
            return self._to_tensor(value)

        if not self.built:
            self.build((None, inputs.shape[-1]))
        return self.call(inputs, tensors(states), training=bool(training))


class _Cell(_StepCall, Layer):
    """What the built-in cells share: arguments, weights, dropout masks, the direct call
    ``cell(inputs, states)`` and ``run_steps`` (the cell over a whole sequence). Subclasses give
    ``_gates`` (how many units-wide blocks the kernel has), ``_bias_shape`` and ``_step``."""

    _gates = 1

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        _reject(type(self).__name__, kernel_regularizer=kernel_regularizer,
                recurrent_regularizer=recurrent_regularizer, bias_regularizer=bias_regularizer,
                kernel_constraint=kernel_constraint, recurrent_constraint=recurrent_constraint,
                bias_constraint=bias_constraint)
        self.units = _units(units)
        self.activation = _activations.get(activation)
        self.recurrent_activation = _activations.get(recurrent_activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        for value, arg in ((kernel_initializer, "kernel_initializer"),
                           (recurrent_initializer, "recurrent_initializer"),
                           (bias_initializer, "bias_initializer")):
            _weight_initializer(value, arg)  # a bad name fails here, as in Keras
        self.dropout = _rate(dropout, "dropout")
        self.recurrent_dropout = _rate(recurrent_dropout, "recurrent_dropout")
        self.seed = seed  # accepted as Dropout does; masks come from the global generator
        super().__init__(**kwargs)

    # -- Keras's cell interface --
    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def _bias_initial_value(self):
        return _weight_initializer(self.bias_initializer, "bias_initializer")

    def build(self, input_shape):
        input_dim = input_shape[-1]
        if input_dim is None:
            raise ValueError(f"The last dimension of the inputs to {type(self).__name__} "
                             f"should be defined. Found None (input shape {input_shape}).")
        width = self._gates * self.units
        self.kernel = self.add_weight(
            shape=(input_dim, width), name="kernel",
            initializer=_weight_initializer(self.kernel_initializer, "kernel_initializer"))
        self.recurrent_kernel = self.add_weight(
            shape=(self.units, width), name="recurrent_kernel",
            initializer=_weight_initializer(self.recurrent_initializer, "recurrent_initializer"))
        self.bias = (self.add_weight(shape=self._bias_shape(), name="bias",
                                     initializer=self._bias_initial_value())
                     if self.use_bias else None)

    def _bias_shape(self):
        return (self._gates * self.units,)

    def _input_bias(self):
        return self.bias

    def _masks(self, batch, input_dim, like, training):
        """(input mask or None, recurrent mask or None) for one sequence."""
        dropping = training and 0.0 < self.dropout < 1.0
        recurrent = training and 0.0 < self.recurrent_dropout < 1.0
        return (_dropout_mask((batch, input_dim), self.dropout, like) if dropping else None,
                _dropout_mask((batch, self.units), self.recurrent_dropout, like)
                if recurrent else None)

    def _project(self, inputs, input_mask):
        """inputs @ kernel + the input bias, for one step or a whole sequence at once."""
        if input_mask is not None:
            inputs = _mul(inputs, input_mask if inputs.ndim == 2 else _C.expand_dims(input_mask, 1))
        return _C.linear(inputs, self.kernel, self._input_bias())

    def run_steps(self, sequence, states, training, step_mask=None, zero_output_for_mask=False):
        """The cell over ``sequence`` (batch, time, features), steps in that order: (the
        per-step outputs, the final states); ``step_mask`` as ``masked_loop``'s."""
        batch, length, input_dim = sequence.shape
        input_mask, recurrent_mask = self._masks(batch, input_dim, sequence, training)
        projected = self._project(sequence, input_mask)  # every step's input part in one matmul
        return masked_loop(
            lambda t, step_states: self._step(_C.select(projected, 1, t), step_states,
                                              recurrent_mask),
            length, states, step_mask, zero_output_for_mask)

    def get_initial_state(self, batch_size=None):
        sizes = _state_sizes(self)
        return [_C.tensor_full([int(batch_size), s], 0.0, "float32", None) for s in sizes]

    def call(self, inputs, states, training=False):
        """One step, as Keras's ``cell.call(inputs, states)``: (output, new states)."""
        single = isinstance(states, Tensor)
        states = [states] if single else list(states)
        input_mask, recurrent_mask = self._masks(inputs.shape[0], inputs.shape[-1], inputs,
                                                 training)
        output, new_states = self._step(self._project(inputs, input_mask), states,
                                        recurrent_mask)
        return output, (new_states[0] if single else new_states)

    def _recurrent_input(self, h, recurrent_mask):
        return h if recurrent_mask is None else _mul(h, recurrent_mask)

    def _recurrent_product(self, h):
        """The previous output's contribution to the gates (a convolution in ConvLSTM)."""
        return _C.matmul(h, self.recurrent_kernel)

    def _layer_config(self):
        return {"units": self.units, "activation": _activations.serialize(self.activation),
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "recurrent_initializer": self.recurrent_initializer,
                "bias_initializer": self.bias_initializer, "kernel_regularizer": None,
                "recurrent_regularizer": None, "bias_regularizer": None,
                "kernel_constraint": None, "recurrent_constraint": None,
                "bias_constraint": None, "dropout": self.dropout,
                "recurrent_dropout": self.recurrent_dropout, "seed": self.seed}


class SimpleRNNCell(_Cell):
    """``keras.layers.SimpleRNNCell(units, activation='tanh', ...)``:
    h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)."""

    def __init__(self, units, activation="tanh", use_bias=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, **kwargs)

    def _step(self, projected, states, recurrent_mask):
        h = self._recurrent_input(states[0], recurrent_mask)
        output = self.activation(_add(projected, _C.matmul(h, self.recurrent_kernel)))
        return output, [output]


class LSTMCell(_Cell):
    """``keras.layers.LSTMCell(units, ..., unit_forget_bias=True)``; gates i, f, c, o;
    states [h, c]."""

    _gates = 4

    def __init__(self, units, unit_forget_bias=True, implementation=2, **kwargs):
        # Keras's implementation 1 and 2 compute the same values
        self.unit_forget_bias = bool(unit_forget_bias)
        super().__init__(units, **kwargs)

    @property
    def state_size(self):
        return [self.units, self.units]

    def _bias_initial_value(self):
        initializer = super()._bias_initial_value()
        if not self.unit_forget_bias:
            return initializer
        units = self.units

        def forget_gate_ones(shape, dtype=None):
            # Keras: bias_initializer for i, ones for f, bias_initializer for c and o.
            def part(n):
                if isinstance(initializer, str):
                    return _C.layers.initialize(initializer, [n]).numpy()
                value = initializer((n,), dtype="float32")
                return np.asarray(value.numpy() if hasattr(value, "numpy") else value)
            return np.concatenate([part(units), np.ones(units, np.float32), part(2 * units)])
        return forget_gate_ones

    def _step(self, projected, states, recurrent_mask):
        h, c = states
        u = self.units
        z = _add(projected, self._recurrent_product(self._recurrent_input(h, recurrent_mask)))
        i = self.recurrent_activation(_columns(z, 0, u))
        f = self.recurrent_activation(_columns(z, u, 2 * u))
        g = self.activation(_columns(z, 2 * u, 3 * u))
        o = self.recurrent_activation(_columns(z, 3 * u, 4 * u))
        c = _add(_mul(f, c), _mul(i, g))
        h = _mul(o, self.activation(c))
        return h, [h, c]

    def _layer_config(self):
        config = super()._layer_config()
        config.update({"recurrent_activation": _activations.serialize(self.recurrent_activation),
                       "unit_forget_bias": self.unit_forget_bias})
        return config


class GRUCell(_Cell):
    """``keras.layers.GRUCell(units, ..., reset_after=True)``; gates z, r, h; with
    ``reset_after`` the bias is (2, 3*units): input bias, then recurrent bias."""

    _gates = 3

    def __init__(self, units, reset_after=True, implementation=2, **kwargs):
        # Keras's implementation 1 and 2 compute the same values
        self.reset_after = bool(reset_after)
        super().__init__(units, **kwargs)

    def _bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def _input_bias(self):
        if self.bias is None or not self.reset_after:
            return self.bias
        return _C.select(self.bias, 0, 0)

    def _step(self, projected, states, recurrent_mask):
        h_prev = states[0]
        u = self.units
        h = self._recurrent_input(h_prev, recurrent_mask)
        if self.reset_after:
            inner = _C.matmul(h, self.recurrent_kernel)
            if self.bias is not None:
                inner = _add(inner, _C.select(self.bias, 0, 1))
        else:
            inner = _C.matmul(h, _columns(self.recurrent_kernel, 0, 2 * u))
        z = self.recurrent_activation(_add(_columns(projected, 0, u), _columns(inner, 0, u)))
        r = self.recurrent_activation(_add(_columns(projected, u, 2 * u),
                                           _columns(inner, u, 2 * u)))
        if self.reset_after:
            recurrent_h = _mul(r, _columns(inner, 2 * u, 3 * u))
        else:
            recurrent_h = _C.matmul(_mul(r, h), _columns(self.recurrent_kernel, 2 * u, 3 * u))
        candidate = self.activation(_add(_columns(projected, 2 * u, 3 * u), recurrent_h))
        output = _add(_mul(z, h_prev), _mul(_one_minus(z), candidate))
        return output, [output]

    def _layer_config(self):
        config = super()._layer_config()
        config.update({"recurrent_activation": _activations.serialize(self.recurrent_activation),
                       "reset_after": self.reset_after})
        return config


class StackedRNNCells(_StepCall, LayerOfLayers, Layer):
    """``keras.layers.StackedRNNCells(cells)``: the cells one above the other; the states are
    each cell's states in turn."""

    _held_layers = {"cells": "cells"}

    def __init__(self, cells, **kwargs):
        for cell in cells:
            if "call" not in dir(cell) or "state_size" not in dir(cell):
                raise ValueError("All cells must have a `call` method and a `state_size` "
                                 f"attribute. Received cell without a `call` method: {cell}")
        self.cells = list(cells)
        super().__init__(**kwargs)

    @property
    def state_size(self):
        """Each cell's state_size in turn (a list nests the states of a cell with several)."""
        return [cell.state_size for cell in self.cells]

    @property
    def output_size(self):
        return _output_size(self.cells[-1])

    def _saved_sublayers(self):
        """Keras's group names for a list's items: snake_case class names, numbered from the
        second of a class."""
        used, out = {}, []
        for cell in self.cells:
            name = _snake_case(type(cell).__name__)
            used[name] = used.get(name, -1) + 1
            out.append((f"cells/{name}" + (f"_{used[name]}" if used[name] else ""), cell))
        return out

    def build(self, input_shape):
        shape = tuple(input_shape)
        for cell in self.cells:
            if not cell.built:
                cell.build(shape)
            adopt_weights(self, cell)
            shape = (shape[0], _output_size(cell))

    def run_steps(self, sequence, states, training, step_mask=None, zero_output_for_mask=False):
        """The cells in turn over the whole sequence: stacking cells is stacking RNNs (no
        state flows down), so each lower cell's step outputs are the next one's sequence."""
        final = []
        for cell in self.cells:
            count = len(_state_sizes(cell))
            outputs, cell_states = run_steps(cell, sequence, states[:count], training, step_mask,
                                             zero_output_for_mask)
            states = states[count:]
            final += cell_states
            sequence = _stack_steps(outputs)
        return outputs, final

    def call(self, inputs, states, training=False):
        """One step of every cell; ``states`` and the new states nested per cell."""
        states, new_states = nest.flatten(states), []
        for cell in self.cells:
            count = len(_state_sizes(cell))
            inputs, cell_states = cell.call(inputs, states[:count], training=training)
            states = states[count:]
            new_states += nest.flatten(cell_states)
        return inputs, nest.pack_sequence_as(self.state_size, new_states)


def _state_sizes(cell):
    """The sizes of ``cell``'s state tensors, flat (stacked cells nest them)."""
    return nest.flatten(cell.state_size)


def _output_size(cell):
    return getattr(cell, "output_size", None) or _state_sizes(cell)[0]


def _state_structure(cell):
    """Keras's RNN.state_size: one entry per state, or per stacked cell (a list where that
    cell has several states)."""
    size = cell.state_size
    return [list(s) if isinstance(s, (list, tuple)) else s for s in size] \
        if isinstance(size, (list, tuple)) else [size]


def masked_loop(step, length, states, step_mask, zero_output_for_mask):
    """``step(t, states) -> (output, new states)`` for t = 0 .. length-1: (the outputs, the
    final states). Where ``step_mask`` (batch, time, 1) holds 0 the states stay as they were
    and the output is the previous step's (zeros with ``zero_output_for_mask``; zeros before
    the first step), as Keras's rnn loop does; blending with a 0/1 mask is exact."""
    outputs = []
    for t in range(length):
        output, new_states = step(t, states)
        if step_mask is not None:
            keep = _C.select(step_mask, 1, t)
            output = _mul(keep, output)
            if outputs and not zero_output_for_mask:
                output = _add(output, _mul(_one_minus(keep), outputs[-1]))
            new_states = [_add(_mul(keep, new), _mul(_one_minus(keep), old))
                          for new, old in zip(new_states, states)]
        outputs.append(output)
        states = list(new_states)
    return outputs, states


def run_steps(cell, sequence, states, training, step_mask=None, zero_output_for_mask=False):
    """Any cell over ``sequence`` in time order: the built-in cells project every step's
    inputs in one matmul; another cell (Keras's interface: ``call(inputs, states)``) runs
    step by step."""
    if hasattr(cell, "run_steps"):
        return cell.run_steps(sequence, states, training, step_mask, zero_output_for_mask)

    def step(t, step_states):
        output, new_states = cell.call(_C.select(sequence, 1, t), step_states)
        return output, list(new_states) if isinstance(new_states, (list, tuple)) else [new_states]
    return masked_loop(step, sequence.shape[1], states, step_mask, zero_output_for_mask)


def fused_cell_kind(cell, sequence, training, step_mask, unroll):
    """The fused op's cell name ('lstm', 'gru', 'simple_rnn') when ``cell`` over ``sequence``
    computes what the fused op computes, else None (the unrolled trace). As Keras's choice of
    cuDNN: a built-in LSTMCell/GRUCell/SimpleRNNCell with activation tanh, recurrent_activation
    sigmoid, a bias, GRU reset_after=True, no recurrent dropout while training, unroll=False and
    no mask; and float32 (mixed precision's float16/bfloat16 cells stay unrolled). Input dropout
    is applied to the sequence before the op, as Keras does before cuDNN."""
    kinds = {LSTMCell: "lstm", GRUCell: "gru", SimpleRNNCell: "simple_rnn"}
    kind = kinds.get(type(cell))
    if kind is None or unroll or step_mask is not None or not cell.use_bias:
        return None
    if sequence._dtype_name != "float32" or sequence.shape[1] == 0 or sequence.shape[0] == 0:
        return None
    if training and 0.0 < cell.recurrent_dropout < 1.0:
        return None
    if _activation_name(cell.activation) != "tanh":
        return None
    if kind != "simple_rnn" and _activation_name(cell.recurrent_activation) != "sigmoid":
        return None
    if kind == "gru" and not cell.reset_after:
        return None
    return kind


def _activation_name(activation):
    try:
        return _activations.serialize(activation)
    except ValueError:  # a user's function: never the fused op's
        return None


def _run_fused(kind, cell, sequence, states, training):
    """The fused op over ``sequence``: (outputs (batch, time, units), the last output, the final
    states)."""
    input_mask, _ = cell._masks(sequence.shape[0], sequence.shape[-1], sequence, training)
    if input_mask is not None:
        sequence = _mul(sequence, _C.expand_dims(input_mask, 1))
    cell_state = states[1] if kind == "lstm" else None
    outputs, h, *c = _C.fused_rnn(kind, sequence, states[0], cell_state, cell.kernel,
                                  cell.recurrent_kernel, cell.bias)
    return outputs, h, [h] + c


def run_sequence(cell, sequence, initial_states, go_backwards, training, step_mask=None,
                 zero_output_for_mask=False, unroll=False):
    """The whole recurrence of one RNN layer: ``cell`` over ``sequence`` (batch, time,
    features), from ``initial_states``, last step first when ``go_backwards``; ``step_mask``
    (batch, time, 1) of 1/0 skips steps as Keras's masks do. Returns (outputs (batch, time,
    units) in processing order, the last output, the final states). One fused op where
    ``fused_cell_kind`` allows it, else the unrolled time loop."""
    if go_backwards:
        sequence = reverse_time(sequence)
        step_mask = None if step_mask is None else reverse_time(step_mask)
    kind = fused_cell_kind(cell, sequence, training, step_mask, unroll)
    if kind is not None:
        return _run_fused(kind, cell, sequence, list(initial_states), training)
    outputs, states = run_steps(cell, sequence, list(initial_states), training, step_mask,
                                zero_output_for_mask)
    return _stack_steps(outputs), outputs[-1], states
