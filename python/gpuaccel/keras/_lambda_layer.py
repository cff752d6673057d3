"""``keras.layers.Lambda``: a Python function as a layer. It is a Python layer like any other
(_python_layer.py): the function, written with gpuaccel's ops, is traced once per input
signature and replayed in the C++ step."""
import inspect

from ._layer_base import Layer
from . import _python_layer


class Lambda(Layer):
    """``keras.layers.Lambda(function, output_shape=None, arguments=None)``: ``call`` is
    ``function(inputs, **arguments)`` (plus ``training=`` when the function takes it).

    get_config holds the function object itself, not Keras's marshalled bytecode: from_config
    works in the same process, and saving to a ``.keras`` archive is refused."""

    def __init__(self, function, output_shape=None, mask=None, arguments=None, **kwargs):
        if not callable(function):
            raise TypeError(f"Lambda: `function` must be callable, received {function!r}")
        if mask is not None:
            raise NotImplementedError("Lambda(mask=...) is not supported: gpuaccel layers do not "
                                      "propagate masks yet")
        self.function = function
        self.arguments = dict(arguments or {})
        self._output_shape = output_shape
        try:
            self._takes_training = "training" in inspect.signature(function).parameters
        except (TypeError, ValueError):
            self._takes_training = False
        super().__init__(**kwargs)

    def call(self, inputs, training=None):
        kwargs = dict(self.arguments)
        if self._takes_training:
            kwargs["training"] = training
        return self.function(inputs, **kwargs)

    def compute_output_shape(self, input_shape):
        if self._output_shape is None:
            return _python_layer.compute_output_shape(self, input_shape)
        if callable(self._output_shape):
            return tuple(self._output_shape(input_shape))
        batch = (input_shape[0][0] if input_shape and isinstance(input_shape[0], (tuple, list))
                 else input_shape[0])
        return (batch,) + tuple(self._output_shape)

    def _layer_config(self):
        config = {"function": self.function, "arguments": self.arguments}
        if self._output_shape is not None:
            config["output_shape"] = self._output_shape
        return config
