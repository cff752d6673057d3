"""``keras.layers.InputLayer``: the layer behind a ``keras.Input``, as a functional model lists
it first in ``model.layers`` (Keras 3: ``model.layers[0]`` of ``keras.Model(inputs, outputs)`` is
the InputLayer, so ``layers[1]`` is the first layer the inputs meet). It has no weights; its
``output`` is the Input's tensor.

Calling ``keras.layers.InputLayer(shape=...)`` gives that tensor itself (``keras.Input``'s
placeholder), which a Sequential list takes as its input, as Keras's InputLayer gives it one;
the class stays a class, so ``isinstance(layer, keras.layers.InputLayer)`` picks the input
layers out of ``model.layers``."""
from ._symbolic import Input


class InputLayer:
    def __new__(cls, shape=None, batch_size=None, dtype=None, batch_shape=None, name=None,
                **kwargs):
        # It also takes the Keras 2 spellings Keras 3 still accepts (input_shape,
        # batch_input_shape), which TF's tutorials use.
        if "input_shape" in kwargs:
            shape = kwargs.pop("input_shape")
        if "batch_input_shape" in kwargs:
            batch_shape = kwargs.pop("batch_input_shape")
        return Input(shape=shape, batch_size=batch_size, dtype=dtype, name=name,
                     batch_shape=batch_shape, **kwargs)

    @classmethod
    def of(cls, tensor):
        """A new InputLayer for the model input ``tensor``. The model keeps it (not the tensor:
        a tensor -> layer -> tensor cycle would keep a dropped model's weights alive, through the
        tensor's graph, until Python's cycle collector ran)."""
        layer = object.__new__(cls)
        layer.output = tensor
        layer.trainable = True
        return layer

    @property
    def name(self):
        return self.output.name

    @property
    def input(self):
        return self.output

    @property
    def batch_shape(self):
        return tuple(self.output.shape)

    @property
    def dtype(self):
        return str(self.output.dtype)

    built = True
    weights = trainable_weights = non_trainable_weights = variables = property(lambda self: [])
    losses = property(lambda self: [])

    def get_weights(self):
        return []

    def set_weights(self, weights):
        if len(list(weights)):
            raise ValueError(f"You called `set_weights(weights)` on layer '{self.name}' with a "
                             f"weight list of length {len(list(weights))}, but the layer was "
                             f"expecting 0 weights.")

    def count_params(self):
        return 0

    def get_config(self):
        return {"batch_shape": self.batch_shape, "dtype": self.dtype, "sparse": False,
                "ragged": False, "name": self.name, "optional": False}

    def __repr__(self):
        return f"<InputLayer name={self.name}, built=True>"
