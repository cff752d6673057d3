"""Keras 3's recurrent layers (SimpleRNN, LSTM, GRU, their cells, RNN, StackedRNNCells,
Bidirectional, TimeDistributed) written in Python from gpuaccel's ops.

There is no recurrent op in the backends yet: each layer's call is traced once per input
signature into the C++ step (_python_layer.py) with its time loop unrolled (the sequence length
is part of the signature), so a model of these layers trains in C++ like any other. The whole
per-sequence computation is ``run_sequence`` (one cell over one sequence): a fused backend op
(oneDNN's or cuDNN's RNN primitive) can later replace it without touching the layers.

Weights are laid out as Keras 3's: kernel (input_dim, k*units), recurrent_kernel
(units, k*units), gates in the order i, f, c, o (LSTM) and z, r, h (GRU), GRU's bias (2, 3*units)
when ``reset_after``. A layer holding a cell (or a wrapper holding a layer) registers the inner
weights on its own C++ layer too (the same tensors), so its traced step differentiates and
updates them, and get_weights/set_weights list them in Keras's order.
"""
import numbers

import numpy as np

from .. import _C
from .._tensor import Tensor
from . import activations as _activations
from . import initializers as _initializers
from ._layer_base import Layer, _is_shape_list, _none_shape, _reject
from ._layer_variables import labelled
from ._multi_output import MultiOutputLayer, flatten, nest


# ---- helpers -----------------------------------------------------------------------------

def _weight_initializer(value, arg):
    """A name the C++ initializers draw ('glorot_uniform'), else a keras.initializers object
    (an 'orthogonal' name, an Initializer instance, a config dict)."""
    if isinstance(value, str):
        try:
            return _C.layers.canonical_initializer(value)
        except Exception:  # noqa: BLE001 - not a C++ name; keras.initializers may know it
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
    """x[:, start:stop] of a matrix."""
    return _C.slice(x, [(0, x.shape[0], 1), (start, stop, 1)])


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


def _reverse_time(x):
    """x[:, ::-1] of a (batch, time, ...) tensor."""
    return _C.concat([_C.expand_dims(_C.select(x, 1, t), 1)
                      for t in reversed(range(x.shape[1]))], 1)


def _check_sequence_shape(layer, shape):
    if len(shape) != 3:
        raise ValueError(f"Input 0 of layer '{layer.name}' is incompatible with the layer: "
                         f"expected ndim=3, found ndim={len(shape)}. Full shape received: "
                         f"{_none_shape(shape)}")


def _as_nested_list(value):
    if isinstance(value, (list, tuple)):
        return [_as_nested_list(v) for v in value]
    return value


def adopt_weights(owner, child, prefix):
    """Registers ``child``'s weights (the same tensors) on ``owner``'s C++ layer as
    ``prefix/name``, so ``owner``'s traced step trains them."""
    for name, value, trainable in child._cpp.weights:
        owner._cpp.add_weight_value(f"{prefix}/{name}", value, bool(trainable))


class _WeightsOfInnerLayers:
    """Keras's weight names for layers whose weights belong to inner layers: a variable's
    ``name`` is its own ('kernel'), its ``path`` goes through the inner layers
    ('lstm/lstm_cell/kernel')."""

    @property
    def weights(self):
        out = []
        for name, value, trainable in self._cpp.weights:
            variable = labelled(self, name, value, trainable)
            variable.name = name.rsplit("/", 1)[-1]
            out.append(variable)
        return out


# ---- cells -------------------------------------------------------------------------------

class _Cell(Layer):
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

    def run_steps(self, sequence, states, training):
        """The cell over ``sequence`` (batch, time, features), steps in that order: (the
        per-step outputs, the final states)."""
        batch, _, input_dim = sequence.shape
        input_mask, recurrent_mask = self._masks(batch, input_dim, sequence, training)
        projected = self._project(sequence, input_mask)  # every step's input part in one matmul
        outputs = []
        for t in range(sequence.shape[1]):
            output, states = self._step(_C.select(projected, 1, t), states, recurrent_mask)
            outputs.append(output)
        return outputs, states

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

    def __call__(self, inputs, states=None, training=None, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.call() got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        inputs = self._to_tensor(inputs)
        if states is None:
            raise ValueError(f"{type(self).__name__} must be called with `states` (a list of "
                             f"{self.state_size} tensors): cell(inputs, states)")
        states = [self._to_tensor(s) for s in states] if isinstance(states, (list, tuple)) \
            else self._to_tensor(states)
        if not self.built:
            self.build((None, inputs.shape[-1]))
        return self.call(inputs, states, training=bool(training))

    def _recurrent_input(self, h, recurrent_mask):
        return h if recurrent_mask is None else _mul(h, recurrent_mask)

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

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, seed=None, **kwargs):
        super().__init__(units, activation, "sigmoid", use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         seed, **kwargs)

    def _step(self, projected, states, recurrent_mask):
        h = self._recurrent_input(states[0], recurrent_mask)
        output = self.activation(_add(projected, _C.matmul(h, self.recurrent_kernel)))
        return output, [output]


class LSTMCell(_Cell):
    """``keras.layers.LSTMCell(units, ..., unit_forget_bias=True)``; gates i, f, c, o;
    states [h, c]."""

    _gates = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, kernel_regularizer=None,
                 recurrent_regularizer=None, bias_regularizer=None, kernel_constraint=None,
                 recurrent_constraint=None, bias_constraint=None, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, **kwargs):
        self.unit_forget_bias = bool(unit_forget_bias)
        kwargs.pop("implementation", None)  # Keras's 1/2 compute the same values
        super().__init__(units, activation, recurrent_activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         seed, **kwargs)

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
        z = _add(projected, _C.matmul(self._recurrent_input(h, recurrent_mask),
                                      self.recurrent_kernel))
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

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", kernel_regularizer=None, recurrent_regularizer=None,
                 bias_regularizer=None, kernel_constraint=None, recurrent_constraint=None,
                 bias_constraint=None, dropout=0.0, recurrent_dropout=0.0, reset_after=True,
                 seed=None, **kwargs):
        self.reset_after = bool(reset_after)
        kwargs.pop("implementation", None)  # Keras's 1/2 compute the same values
        super().__init__(units, activation, recurrent_activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, kernel_regularizer,
                         recurrent_regularizer, bias_regularizer, kernel_constraint,
                         recurrent_constraint, bias_constraint, dropout, recurrent_dropout,
                         seed, **kwargs)

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


class StackedRNNCells(_WeightsOfInnerLayers, Layer):
    """``keras.layers.StackedRNNCells(cells)``: the cells one above the other; the states are
    each cell's states in turn."""

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
        last = self.cells[-1]
        return getattr(last, "output_size", None) or _state_sizes(last)[0]

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
            adopt_weights(self, cell, cell.name)
            shape = (shape[0], _output_size(cell))

    def run_steps(self, sequence, states, training):
        """The cells in turn over the whole sequence: stacking cells is stacking RNNs (no
        state flows down), so each lower cell's step outputs are the next one's sequence."""
        final = []
        for cell in self.cells:
            count = len(_state_sizes(cell))
            outputs, cell_states = run_steps(cell, sequence, states[:count], training)
            states = states[count:]
            final += cell_states
            sequence = _stack_steps(outputs)
        return outputs, final

    def call(self, inputs, states, training=False):
        """One step of every cell; ``states`` and the new states nested per cell."""
        states, new_states = flatten(_as_nested_list(states)), []
        for cell in self.cells:
            count = len(_state_sizes(cell))
            inputs, cell_states = cell.call(inputs, states[:count], training=training)
            states = states[count:]
            new_states += flatten(_as_nested_list(cell_states))
        return inputs, nest(new_states, self.state_size)

    def get_config(self):
        config = super().get_config()
        config["cells"] = [_serialize(cell) for cell in self.cells]
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["cells"] = [_deserialize(c) for c in config["cells"]]
        return cls(**config)


def _state_sizes(cell):
    """The sizes of ``cell``'s state tensors, flat (stacked cells nest them)."""
    return flatten(list(cell.state_size) if isinstance(cell.state_size, (list, tuple))
                   else [cell.state_size])


def _output_size(cell):
    return getattr(cell, "output_size", None) or _state_sizes(cell)[0]


def _state_structure(cell):
    """Keras's RNN.state_size: one entry per state, or per stacked cell (a list where that
    cell has several states)."""
    size = cell.state_size
    return [list(s) if isinstance(s, (list, tuple)) else s for s in size] \
        if isinstance(size, (list, tuple)) else [size]


def run_steps(cell, sequence, states, training):
    """Any cell over ``sequence`` in time order: the built-in cells project every step's
    inputs in one matmul; another cell (Keras's interface: ``call(inputs, states)``) runs
    step by step."""
    if hasattr(cell, "run_steps"):
        return cell.run_steps(sequence, states, training)
    outputs = []
    for t in range(sequence.shape[1]):
        output, states = cell.call(_C.select(sequence, 1, t), states)
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        outputs.append(output)
    return outputs, states


def run_sequence(cell, sequence, initial_states, go_backwards, training):
    """The whole recurrence of one RNN layer (the piece a fused RNN op would replace):
    ``cell`` over ``sequence`` (batch, time, features), from ``initial_states``, last step
    first when ``go_backwards``. Returns (outputs (batch, time, units) in processing order,
    the last output, the final states)."""
    if go_backwards:
        sequence = _reverse_time(sequence)
    outputs, states = run_steps(cell, sequence, list(initial_states), training)
    return _stack_steps(outputs), outputs[-1], states


def _serialize(layer):
    return {"module": "keras.layers", "class_name": type(layer).__name__,
            "config": layer.get_config(), "registered_name": None}


def _deserialize(config):
    """A layer from its serialized form (``_serialize``'s; a Keras file's configs are turned
    into layers by the .keras reader before they reach a constructor)."""
    if not isinstance(config, dict):
        return config  # already a layer
    return _layer_class(config["class_name"]).from_config(config["config"])


def _layer_class(name):
    """The gpuaccel layer class called ``name``, found among Layer's subclasses (looking it up
    in keras.layers would import that module back)."""
    pending = [Layer]
    while pending:
        cls = pending.pop()
        if cls.__name__ == name and cls.__module__.startswith("gpuaccel."):
            return cls
        pending += cls.__subclasses__()
    raise ValueError(f"Unknown layer class {name!r} in a serialized layer config")


# ---- layers over sequences ---------------------------------------------------------------

class RNN(_WeightsOfInnerLayers, MultiOutputLayer):
    """``keras.layers.RNN(cell, return_sequences=False, return_state=False,
    go_backwards=False, stateful=False, unroll=False, zero_output_for_mask=False)``; ``cell`` is
    a cell or a list of cells (stacked). Called as ``rnn(sequences, initial_state=None)``.
    The time loop is always unrolled into the traced step, so ``unroll`` changes nothing."""

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, **kwargs):
        if isinstance(cell, (list, tuple)):
            cell = StackedRNNCells(cell)
        if "call" not in dir(cell):
            raise ValueError(f"Argument `cell` should have a `call` method. Received: "
                             f"cell={cell}")
        if "state_size" not in dir(cell):
            raise ValueError("The RNN cell should have a `state_size` attribute (single integer "
                             "or list of integers, one integer per RNN state). Received: "
                             f"cell={cell}")
        if stateful:
            raise NotImplementedError(f"{type(self).__name__}(stateful=True) is not supported "
                                      "yet: pass the last states back as `initial_state` "
                                      "(return_state=True) instead")
        self.cell = cell
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = False
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        super().__init__(**kwargs)

    @property
    def state_size(self):
        return _state_structure(self.cell)

    def _saved_sublayers(self):
        return [("cell", self.cell)]

    def _call_inputs(self, sequences, initial_state=None, mask=None):
        if mask is not None:
            raise NotImplementedError(f"{type(self).__name__}: masks (mask=, or from "
                                      "Embedding(mask_zero=True)/Masking) are not supported yet")
        if isinstance(sequences, (list, tuple)):  # Keras 2's rnn([x, *initial_state])
            sequences, initial_state = sequences[0], list(sequences[1:]) or initial_state
        _check_sequence_shape(self, tuple(np.shape(sequences) if not hasattr(sequences, "shape")
                                          else sequences.shape))
        if initial_state is None:
            return [sequences]
        states = flatten(_as_nested_list(initial_state))
        expected = len(_state_sizes(self.cell))
        if len(states) != expected:
            raise ValueError(f"Layer {self.name} expects {expected} state(s) in "
                             f"`initial_state`, but it received {len(states)} initial "
                             f"state(s).")
        return [sequences] + states

    def build(self, sequences_shape, initial_state_shape=None):
        if _is_shape_list(sequences_shape):
            sequences_shape = sequences_shape[0]
        _check_sequence_shape(self, sequences_shape)
        if not self.cell.built:
            self.cell.build((sequences_shape[0], sequences_shape[-1]))
        adopt_weights(self, self.cell, self.cell.name)

    def _output_shapes(self, shapes):
        sequences_shape = shapes[0] if _is_shape_list(shapes) else shapes
        _check_sequence_shape(self, sequences_shape)
        batch, length = sequences_shape[0], sequences_shape[1]
        units = _output_size(self.cell)
        output = (batch, length, units) if self.return_sequences else (batch, units)
        if not self.return_state:
            return output
        return [output] + [[(batch, n) for n in s] if isinstance(s, list) else (batch, s)
                           for s in self.state_size]

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shapes = self._output_shapes(sequences_shape)
        return tuple(shapes) if isinstance(shapes, list) else shapes

    def _initial_states(self, sequences):
        batch = sequences.shape[0]
        return [_C.tensor_full([batch, s], 0.0, sequences._dtype_name, sequences._device_name)
                for s in _state_sizes(self.cell)]

    def _call_outputs(self, inputs, training=False):
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        sequences, states = inputs[0], inputs[1:]
        _check_sequence_shape(self, sequences.shape)
        if not states:
            states = self._initial_states(sequences)
        outputs, last, states = run_sequence(self.cell, sequences, states, self.go_backwards,
                                             training)
        output = outputs if self.return_sequences else last
        return [output] + nest(states, self.state_size) if self.return_state else output

    def _layer_config(self):
        return {"return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask}

    def get_config(self):
        config = super().get_config()
        config["cell"] = _serialize(self.cell)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["cell"] = _deserialize(config["cell"])
        return cls(**config)


class _CellLayer(RNN):
    """SimpleRNN, LSTM and GRU: an RNN over the cell made from the layer's arguments; the
    config is the cell's and the RNN's in one dict, as Keras's."""

    _cell_class = None

    def __init__(self, units, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, activity_regularizer=None, **cell_kwargs):
        _reject(type(self).__name__, activity_regularizer=activity_regularizer)
        layer_kwargs = {k: cell_kwargs.pop(k) for k in ("name", "dtype", "trainable",
                                                        "input_shape", "input_dim",
                                                        "batch_input_shape", "batch_size")
                        if k in cell_kwargs}
        cell_kwargs.pop("zero_output_for_mask", None)  # no masks yet: it changes nothing
        name = _snake_case(self._cell_class.__name__)
        cell = self._cell_class(units, name=name, dtype=layer_kwargs.get("dtype"),
                                trainable=layer_kwargs.get("trainable", True), **cell_kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         zero_output_for_mask=False, **layer_kwargs)

    def __getattr__(self, attribute):
        # Keras's layer.units, layer.activation, ... are the cell's
        cell = self.__dict__.get("cell")
        if cell is not None and not attribute.startswith("_") and hasattr(cell, attribute):
            return getattr(cell, attribute)
        return super().__getattr__(attribute)

    def get_config(self):
        config = Layer.get_config(self)
        cell_config = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell_config.pop(key, None)
        config.update(cell_config)
        config["activity_regularizer"] = None
        return config

    @classmethod
    def from_config(cls, config):
        return Layer.from_config.__func__(cls, config)


def _snake_case(name):
    from ._layer_base import _snake_case as snake
    return snake(name)


class SimpleRNN(_CellLayer):
    """``keras.layers.SimpleRNN(units, activation='tanh', ...)``."""
    _cell_class = SimpleRNNCell

    def get_config(self):
        config = super().get_config()
        del config["seed"]  # Keras's SimpleRNN config has none (its cell's has)
        return config

    def __init__(self, units, activation="tanh", use_bias=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, **kwargs)


class LSTM(_CellLayer):
    """``keras.layers.LSTM(units, activation='tanh', recurrent_activation='sigmoid', ...,
    unit_forget_bias=True)``."""
    _cell_class = LSTMCell

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 **kwargs):
        super().__init__(units, activation=activation,
                         recurrent_activation=recurrent_activation, use_bias=use_bias, **kwargs)


class GRU(_CellLayer):
    """``keras.layers.GRU(units, activation='tanh', recurrent_activation='sigmoid', ...,
    reset_after=True)``."""
    _cell_class = GRUCell

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 **kwargs):
        super().__init__(units, activation=activation,
                         recurrent_activation=recurrent_activation, use_bias=use_bias, **kwargs)


_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy_of_layer(layer, name, go_backwards):
    """A new, unbuilt layer of ``layer``'s class and config, named ``name``."""
    config = layer.get_config()
    config["name"] = name
    if go_backwards is not None:
        config["go_backwards"] = go_backwards
    return type(layer).from_config(config)


class Bidirectional(_WeightsOfInnerLayers, MultiOutputLayer):
    """``keras.layers.Bidirectional(layer, merge_mode='concat', backward_layer=None)``: the
    RNN ``layer`` (copied as the forward layer) and its go_backwards twin over the same
    inputs, their outputs merged (the backward sequence turned back to time order)."""

    def __init__(self, layer, merge_mode="concat", weights=None, backward_layer=None, **kwargs):
        if not isinstance(layer, RNN):
            raise ValueError("Please initialize `Bidirectional` layer with a `keras.layers.RNN` "
                             f"instance. Received: {layer}")
        if merge_mode not in _MERGE_MODES:
            raise ValueError(f"Invalid merge mode. Received: {merge_mode}. Merge mode should "
                             "be one of {\"sum\", \"mul\", \"ave\", \"concat\", None}")
        # Keras's names: a layer loaded from a Bidirectional config is already 'forward_...'
        base_name = layer.name[len("forward_"):] if layer.name.startswith("forward_") \
            else layer.name
        self.forward_layer = _copy_of_layer(layer, "forward_" + base_name, None)
        if backward_layer is None:
            self.backward_layer = _copy_of_layer(layer, "backward_" + base_name,
                                                 not layer.go_backwards)
        else:
            if not isinstance(backward_layer, RNN):
                raise ValueError("`backward_layer` must be a `keras.layers.RNN` instance. "
                                 f"Received: backward_layer={backward_layer}")
            for attribute in ("return_sequences", "return_state"):
                if getattr(backward_layer, attribute) != getattr(layer, attribute):
                    raise ValueError("Forward layer and backward layer should have the same "
                                     f"`{attribute}`.")
            self.backward_layer = backward_layer
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        super().__init__(**kwargs)
        if weights is not None:
            raise NotImplementedError("Bidirectional(weights=...) is not supported: call "
                                      "set_weights after building")

    def _saved_sublayers(self):
        return [("forward_layer", self.forward_layer), ("backward_layer", self.backward_layer)]

    def _call_inputs(self, sequences, initial_state=None, mask=None):
        if mask is not None:
            raise NotImplementedError("Bidirectional: masks are not supported yet")
        if initial_state is None:
            return [sequences]
        states = flatten(_as_nested_list(initial_state))
        if len(states) % 2:
            raise ValueError("When passing `initial_state` to a Bidirectional RNN, the state "
                             "should be a list containing the states of the underlying RNNs. "
                             f"Received: initial_state={initial_state}")
        return [sequences] + states

    def build(self, sequences_shape, initial_state_shape=None):
        if _is_shape_list(sequences_shape):
            sequences_shape = sequences_shape[0]
        _check_sequence_shape(self, sequences_shape)
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                layer.build(sequences_shape)
            for name, value, trainable in layer._cpp.weights:
                self._cpp.add_weight_value(f"{layer.name}/{name}", value, bool(trainable))

    def _output_shapes(self, shapes):
        sequences_shape = shapes[0] if _is_shape_list(shapes) else shapes
        forward = self.forward_layer._output_shapes(sequences_shape)
        backward = self.backward_layer._output_shapes(sequences_shape)
        states = []
        if self.return_state:
            forward, states = forward[0], forward[1:] + backward[1:]
            backward = backward[0]
        if self.merge_mode is None:
            outputs = [forward, backward]
        elif self.merge_mode == "concat":
            outputs = [forward[:-1] + (forward[-1] + backward[-1],)]
        else:
            outputs = [forward]
        outputs += states
        return outputs if len(outputs) > 1 else outputs[0]

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shapes = self._output_shapes(sequences_shape)
        return tuple(shapes) if isinstance(shapes, list) else shapes

    def _call_outputs(self, inputs, training=False):
        inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        sequences, states = inputs[0], inputs[1:]
        half = len(states) // 2
        forward_inputs = [sequences] + states[:half]
        backward_inputs = [sequences] + states[half:]
        forward = self.forward_layer._call_outputs(forward_inputs, training)
        backward = self.backward_layer._call_outputs(backward_inputs, training)
        forward_states, backward_states = [], []
        if self.return_state:
            forward, forward_states = forward[0], forward[1:]
            backward, backward_states = backward[0], backward[1:]
        if self.return_sequences:
            backward = _reverse_time(backward)
        if self.merge_mode == "concat":
            outputs = [_C.concat([forward, backward], -1)]
        elif self.merge_mode == "sum":
            outputs = [_add(forward, backward)]
        elif self.merge_mode == "ave":
            outputs = [_mul(_add(forward, backward), _C.scalar_like(0.5, forward))]
        elif self.merge_mode == "mul":
            outputs = [_mul(forward, backward)]
        else:
            outputs = [forward, backward]
        outputs += forward_states + backward_states
        return outputs if len(outputs) > 1 else outputs[0]

    def get_config(self):
        config = super().get_config()
        config["merge_mode"] = self.merge_mode
        config["layer"] = _serialize(self.forward_layer)
        config["backward_layer"] = _serialize(self.backward_layer)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        layer = _deserialize(config.pop("layer"))
        backward = config.pop("backward_layer", None)
        backward = None if backward is None else _deserialize(backward)
        return cls(layer, backward_layer=backward, **config)


class TimeDistributed(_WeightsOfInnerLayers, Layer):
    """``keras.layers.TimeDistributed(layer)``: ``layer`` on every time step of (batch,
    time, ...) inputs, as one call on (batch*time, ...)."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        self.layer = layer
        super().__init__(**kwargs)

    def _saved_sublayers(self):
        return [("layer", self.layer)]

    def _check_shape(self, input_shape):
        if len(input_shape) < 3:
            raise ValueError("`TimeDistributed` Layer should be passed an `input_shape` with at "
                             f"least 3 dimensions, received: {_none_shape(input_shape)}")

    def build(self, input_shape):
        self._check_shape(input_shape)
        if not self.layer.built:
            self.layer.build((None,) + tuple(input_shape[2:]))
        adopt_weights(self, self.layer, self.layer.name)

    def compute_output_shape(self, input_shape):
        self._check_shape(input_shape)
        inner = self.layer.compute_output_shape((None,) + tuple(input_shape[2:]))
        return (input_shape[0], input_shape[1]) + tuple(inner[1:])

    def call(self, inputs, training=False):
        self._check_shape(inputs.shape)
        batch, length = inputs.shape[0], inputs.shape[1]
        steps = _C.reshape(inputs, [batch * length] + list(inputs.shape[2:]))
        outputs = self.layer(steps, training=training)
        return _C.reshape(outputs, [batch, length] + list(outputs.shape[1:]))

    def get_config(self):
        config = super().get_config()
        config["layer"] = _serialize(self.layer)
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["layer"] = _deserialize(config["layer"])
        return cls(**config)
