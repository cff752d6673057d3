"""Keras 3's recurrent layers (RNN, SimpleRNN, LSTM, GRU, Bidirectional) and TimeDistributed,
written in Python over the cells of _recurrent_cells.py and traced into the C++ step like any
Python layer (_python_layer.py).

A layer holding a cell (or a wrapper holding a layer) registers the inner weights on its own C++
layer (_layers_of_layers.py), so get_weights/set_weights list them in Keras's order and files
keep them in Keras's groups. ``return_state`` and ``Bidirectional(merge_mode=None)`` give several
outputs, packed into one traced tensor (_layer_outputs.py).
"""
import numpy as np

from .. import _C, nest
from . import _mask_flow
from ._layer_base import Layer, _is_shape_list, _none_shape, _reject, _snake_case
from ._layer_outputs import several_shapes
from ._layers_of_layers import LayerOfLayers, adopt_weights
from ._recurrent_cells import (GRUCell, LSTMCell, SimpleRNNCell, StackedRNNCells, _output_size,
                               _state_sizes, _state_structure, reverse_time, run_sequence)
from ._wrapper import Wrapper


def _with_step_mask(layer, inputs, sequences, mask):
    """The call's inputs and, last, the timestep mask given as ``mask=`` or carried by the
    sequences (Embedding(mask_zero=True), Masking) as a (batch, time, 1) 1/0 tensor. As in
    Keras, a carried mask is used only when the sequences are the one tensor argument (not
    with ``initial_state``)."""
    if mask is None and len(inputs) == 1:
        mask = getattr(sequences, "_keras_mask", None)
    return inputs if mask is None else inputs + [_mask_flow.step_mask(mask, layer.name)]


def _cast_all(tensors, dtype):
    return [t if t._dtype_name == dtype else _C.cast(t, dtype) for t in tensors]


def _split_inputs(inputs):
    """(sequences, initial states, step mask or None) of a traced call's inputs: the mask is
    the one of rank 3 after the states (rank 2); sequences of images (ConvLSTM) carry none."""
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    step_mask = (inputs.pop() if len(inputs) > 1 and inputs[0].ndim == 3 and inputs[-1].ndim == 3
                 else None)
    return inputs[0], inputs[1:], step_mask


def _check_sequence_shape(layer, shape):
    expected = getattr(layer, "_sequence_rank", 3)  # ConvLSTM's sequences are of images
    if len(shape) != expected:
        raise ValueError(f"Input 0 of layer '{layer.name}' is incompatible with the layer: "
                         f"expected ndim={expected}, found ndim={len(shape)}. Full shape "
                         f"received: {_none_shape(shape)}")



class _SequenceLayer(LayerOfLayers, Layer):
    """What RNN and Bidirectional share: called as ``layer(sequences, initial_state=None,
    mask=None)``, the sequences of rank 3; outputs listed as Keras's compute_output_shape
    lists them; a sequence output keeps its input's timestep mask."""

    def _call_inputs(self, sequences, initial_state=None, mask=None):
        if isinstance(sequences, (list, tuple)):  # Keras 2's rnn([x, *initial_state])
            sequences, initial_state = sequences[0], list(sequences[1:]) or initial_state
        _check_sequence_shape(self, tuple(np.shape(sequences) if not hasattr(sequences, "shape")
                                          else sequences.shape))
        states = [] if initial_state is None else nest.flatten(initial_state)
        self._check_initial_state(states, initial_state)
        return _with_step_mask(self, [sequences] + states, sequences, mask)

    def _sequences_shape(self, shapes):
        """The sequences' shape among the shapes build gets, checked."""
        shape = shapes[0] if _is_shape_list(shapes) else shapes
        _check_sequence_shape(self, shape)
        return shape

    def _keeps_timestep_mask(self):
        """Keras: the output keeps its input's mask when it is a sequence."""
        return self.return_sequences

    def compute_output_shape(self, sequences_shape, initial_state_shape=None):
        shapes = self._output_shapes(sequences_shape)
        return several_shapes(shapes) if isinstance(shapes, list) else shapes


class RNN(_SequenceLayer):
    """``keras.layers.RNN(cell, return_sequences=False, return_state=False,
    go_backwards=False, stateful=False, unroll=False, zero_output_for_mask=False)``; ``cell`` is
    a cell or a list of cells (stacked). Called as ``rnn(sequences, initial_state=None)``.
    The time loop is unrolled into the traced step unless the fused op runs it
    (_recurrent_cells.fused_cell_kind); ``unroll=True`` keeps it unrolled, with the same
    values."""

    _held_layers = {"cell": "cell"}

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

    def _check_initial_state(self, states, initial_state):
        expected = len(_state_sizes(self.cell))
        if states and len(states) != expected:
            raise ValueError(f"Layer {self.name} expects {expected} state(s) in "
                             f"`initial_state`, but it received {len(states)} initial "
                             f"state(s).")

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = self._sequences_shape(sequences_shape)
        if not self.cell.built:
            self.cell.build((sequences_shape[0], sequences_shape[-1]))
        adopt_weights(self, self.cell)

    def _output_shapes(self, shapes):
        batch, length = self._sequences_shape(shapes)[:2]
        units = _output_size(self.cell)
        output = (batch, length, units) if self.return_sequences else (batch, units)
        if not self.return_state:
            return output
        return [output] + [[(batch, n) for n in s] if isinstance(s, list) else (batch, s)
                           for s in self.state_size]

    def _initial_states(self, sequences):
        batch = sequences.shape[0]
        return [_C.tensor_full([batch, s], 0.0, sequences._dtype_name, sequences._device_name)
                for s in _state_sizes(self.cell)]

    def call(self, inputs, training=False):
        sequences, states, step_mask = _split_inputs(inputs)
        _check_sequence_shape(self, sequences.shape)
        # as Keras: the cell computes in its policy's dtype, the outputs are in this layer's
        cell_dtype = getattr(self.cell, "compute_dtype", self.compute_dtype)
        sequences, *states = _cast_all([sequences] + states, cell_dtype)
        step_mask = None if step_mask is None else _cast_all([step_mask], cell_dtype)[0]
        if not states:
            states = self._initial_states(sequences)
        outputs, last, states = run_sequence(self.cell, sequences, states, self.go_backwards,
                                             training, step_mask, self.zero_output_for_mask,
                                             self.unroll)
        output, *states = _cast_all([outputs if self.return_sequences else last] + states,
                                    self.compute_dtype)
        return [output] + nest.pack_sequence_as(self.state_size, states) if self.return_state else output

    def _layer_config(self):
        return {"return_sequences": self.return_sequences, "return_state": self.return_state,
                "go_backwards": self.go_backwards, "stateful": self.stateful,
                "unroll": self.unroll, "zero_output_for_mask": self.zero_output_for_mask}


class _CellLayer(RNN):
    """SimpleRNN, LSTM and GRU: an RNN over the cell made from the layer's arguments; the
    config is the cell's and the RNN's in one dict, as Keras's."""

    _cell_class = None
    _held_layers = {}  # the config is the cell's arguments, not the cell

    def __init__(self, units, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, activity_regularizer=None, **cell_kwargs):
        _reject(type(self).__name__, activity_regularizer=activity_regularizer)
        layer_kwargs = {k: cell_kwargs.pop(k) for k in ("name", "dtype", "trainable",
                                                        "input_shape", "input_dim",
                                                        "batch_input_shape", "batch_size")
                        if k in cell_kwargs}
        zero_output_for_mask = cell_kwargs.pop("zero_output_for_mask", False)
        name = _snake_case(self._cell_class.__name__)
        cell = self._cell_class(units, name=name, dtype=layer_kwargs.get("dtype"),
                                trainable=layer_kwargs.get("trainable", True), **cell_kwargs)
        super().__init__(cell, return_sequences=return_sequences, return_state=return_state,
                         go_backwards=go_backwards, stateful=stateful, unroll=unroll,
                         zero_output_for_mask=zero_output_for_mask, **layer_kwargs)

    def __getattr__(self, attribute):
        # Keras's layer.units, layer.activation, ... are the cell's
        cell = self.__dict__.get("cell")
        if cell is not None and not attribute.startswith("_") and hasattr(cell, attribute):
            return getattr(cell, attribute)
        return super().__getattr__(attribute)

    def get_config(self):
        config = super().get_config()
        cell_config = self.cell.get_config()
        for key in ("name", "trainable", "dtype"):
            cell_config.pop(key, None)
        config.update(cell_config)
        config["activity_regularizer"] = None
        return config


class SimpleRNN(_CellLayer):
    """``keras.layers.SimpleRNN(units, activation='tanh', ...)``."""
    _cell_class = SimpleRNNCell

    def get_config(self):
        config = super().get_config()
        del config["seed"]  # Keras's SimpleRNN config has none (its cell's has)
        return config

    def __init__(self, units, activation="tanh", use_bias=True, **kwargs):
        super().__init__(units, activation=activation, use_bias=use_bias, **kwargs)


class _GatedCellLayer(_CellLayer):
    """LSTM and GRU: Keras's leading arguments."""

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 **kwargs):
        super().__init__(units, activation=activation,
                         recurrent_activation=recurrent_activation, use_bias=use_bias, **kwargs)


class LSTM(_GatedCellLayer):
    """``keras.layers.LSTM(units, activation='tanh', recurrent_activation='sigmoid', ...,
    unit_forget_bias=True)``."""
    _cell_class = LSTMCell


class GRU(_GatedCellLayer):
    """``keras.layers.GRU(units, activation='tanh', recurrent_activation='sigmoid', ...,
    reset_after=True)``."""
    _cell_class = GRUCell


_MERGE_MODES = ("sum", "mul", "ave", "concat", None)


def _copy_of_layer(layer, name, go_backwards):
    """A new, unbuilt layer of ``layer``'s class and config, named ``name``."""
    config = layer.get_config()
    config["name"] = name
    if go_backwards is not None:
        config["go_backwards"] = go_backwards
    return type(layer).from_config(config)


class Bidirectional(_SequenceLayer):
    """``keras.layers.Bidirectional(layer, merge_mode='concat', backward_layer=None)``: the
    RNN ``layer`` (copied as the forward layer) and its go_backwards twin over the same
    inputs, their outputs merged (the backward sequence turned back to time order)."""

    _held_layers = {"layer": "forward_layer", "backward_layer": "backward_layer"}

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
        for inner in (self.forward_layer, self.backward_layer):
            inner.zero_output_for_mask = inner.return_sequences  # as Keras forces it
        self.merge_mode = merge_mode
        self.return_sequences = layer.return_sequences
        self.return_state = layer.return_state
        super().__init__(**kwargs)
        if weights is not None:
            raise NotImplementedError("Bidirectional(weights=...) is not supported: call "
                                      "set_weights after building")

    def _saved_sublayers(self):
        return [("forward_layer", self.forward_layer), ("backward_layer", self.backward_layer)]

    def _check_initial_state(self, states, initial_state):
        if len(states) % 2:
            raise ValueError("When passing `initial_state` to a Bidirectional RNN, the state "
                             "should be a list containing the states of the underlying RNNs. "
                             f"Received: initial_state={initial_state}")

    def build(self, sequences_shape, initial_state_shape=None):
        sequences_shape = self._sequences_shape(sequences_shape)
        for layer in (self.forward_layer, self.backward_layer):
            if not layer.built:
                layer.build(sequences_shape)
            adopt_weights(self, layer)

    def _output_shapes(self, shapes):
        sequences_shape = self._sequences_shape(shapes)
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

    def call(self, inputs, training=False):
        sequences, states, step_mask = _split_inputs(inputs)
        half = len(states) // 2
        masks = [] if step_mask is None else [step_mask]
        forward_inputs = [sequences] + states[:half] + masks
        backward_inputs = [sequences] + states[half:] + masks
        forward = self.forward_layer.call(forward_inputs, training)
        backward = self.backward_layer.call(backward_inputs, training)
        forward_states, backward_states = [], []
        if self.return_state:
            forward, forward_states = forward[0], forward[1:]
            backward, backward_states = backward[0], backward[1:]
        if self.return_sequences:
            backward = reverse_time(backward)
        forward, backward = _cast_all([forward, backward], self.compute_dtype)  # as Keras
        if self.merge_mode == "concat":
            outputs = [_C.concat([forward, backward], -1)]
        elif self.merge_mode == "sum":
            outputs = [_C.binary("add", forward, backward)]
        elif self.merge_mode == "ave":
            outputs = [_C.binary("mul", _C.binary("add", forward, backward),
                                   _C.scalar_like(0.5, forward))]
        elif self.merge_mode == "mul":
            outputs = [_C.binary("mul", forward, backward)]
        else:
            outputs = [forward, backward]
        outputs += forward_states + backward_states
        return outputs if len(outputs) > 1 else outputs[0]

    def get_config(self):
        config = super().get_config()
        config["merge_mode"] = self.merge_mode
        return config


class TimeDistributed(Wrapper):
    """``keras.layers.TimeDistributed(layer)``: ``layer`` on every time step of (batch,
    time, ...) inputs, as one call on (batch*time, ...)."""

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError("Please initialize `TimeDistributed` layer with a "
                             f"`keras.layers.Layer` instance. Received: {layer}")
        super().__init__(layer, **kwargs)

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
        self._adopt_weights(self.layer._cpp.weights)

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
