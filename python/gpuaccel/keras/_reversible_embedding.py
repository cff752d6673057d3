"""Keras's ReversibleEmbedding: an embedding whose ``reverse=True`` call maps hidden states
back to logits over the vocabulary (through the transposed embeddings when tied, else its own
``reverse_embeddings``), as language models tie input and output embeddings. Written in Python
from gpuaccel's embedding and matmul ops, traced into the C++ step (_python_layer.py). A trace
is keyed by the input dtypes, so the direction is read from the input: integer ids look up,
floating hidden states reverse (``__call__`` checks that this agrees with ``reverse``)."""
import numbers

from .. import _C
from ..dtypes import as_dtype
from ._layer_base import Layer, _positive_int, _reject
from ._symbolic import is_symbolic


class ReversibleEmbedding(Layer):
    """``keras.layers.ReversibleEmbedding(input_dim, output_dim, tie_weights=True,
    embeddings_initializer='uniform', reverse_dtype=None, logit_soft_cap=None)``; weights
    ``embeddings`` (input_dim, output_dim) and, untied, ``reverse_embeddings`` (output_dim,
    input_dim)."""

    _integer_inputs = True

    def __init__(self, input_dim, output_dim, tie_weights=True,
                 embeddings_initializer="uniform", embeddings_regularizer=None,
                 embeddings_constraint=None, mask_zero=False, reverse_dtype=None,
                 logit_soft_cap=None, **kwargs):
        _reject("ReversibleEmbedding", mask_zero=mask_zero)
        self.input_dim = _positive_int(input_dim, "input_dim", self)
        self.output_dim = _positive_int(output_dim, "output_dim", self)
        self.tie_weights = bool(tie_weights)
        self.embeddings_initializer = embeddings_initializer
        self.embeddings_regularizer = embeddings_regularizer
        self.embeddings_constraint = embeddings_constraint
        self.reverse_dtype = None if reverse_dtype is None else as_dtype(reverse_dtype).name
        if logit_soft_cap is not None and (isinstance(logit_soft_cap, bool) or not isinstance(
                logit_soft_cap, numbers.Real) or logit_soft_cap <= 0):
            raise ValueError(f"ReversibleEmbedding: `logit_soft_cap` must be a positive number "
                             f"or None, received logit_soft_cap={logit_soft_cap!r}")
        self.logit_soft_cap = logit_soft_cap
        self._reverse = False
        super().__init__(**kwargs)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings", shape=(self.input_dim, self.output_dim),
            initializer=self.embeddings_initializer, regularizer=self.embeddings_regularizer,
            constraint=self.embeddings_constraint)
        if not self.tie_weights:
            self.reverse_embeddings = self.add_weight(
                name="reverse_embeddings", shape=(self.output_dim, self.input_dim),
                initializer=self.embeddings_initializer)

    def __call__(self, inputs, reverse=False, **kwargs):
        dtype = inputs.dtype if is_symbolic(inputs) else getattr(
            inputs, "_dtype_name", None) or getattr(inputs, "dtype", None)
        is_float = dtype is not None and as_dtype(str(getattr(dtype, "name", dtype))).is_floating
        if reverse and not is_float:
            raise TypeError("ReversibleEmbedding(reverse=True) maps floating hidden states "
                            f"(..., {self.output_dim}) to logits; received inputs of dtype "
                            f"{dtype}")
        if not reverse and is_float:
            if is_symbolic(inputs):
                raise NotImplementedError("ReversibleEmbedding: the ids of a functional call "
                                          "must be an integer keras.Input (dtype='int32')")
            inputs = _C.cast(self._to_tensor(inputs), "int64")  # Keras casts them too
        self._reverse = bool(reverse)
        return super().__call__(inputs, **kwargs)

    def call(self, inputs):
        if not as_dtype(inputs._dtype_name).is_floating:
            return _C.embedding(inputs, self.embeddings)
        kernel = _C.transpose(self.embeddings, 0, 1) if self.tie_weights else \
            self.reverse_embeddings
        if self.reverse_dtype is not None:
            inputs, kernel = _C.cast(inputs, self.reverse_dtype), _C.cast(kernel,
                                                                          self.reverse_dtype)
        logits = _C.matmul(inputs, kernel)
        if self.logit_soft_cap is not None:
            cap = _C.scalar_like(self.logit_soft_cap, logits)
            logits = _C.binary("mul", _C.unary("tanh", _C.binary("div", logits, cap)), cap)
        return logits

    def compute_output_shape(self, input_shape):
        if self._reverse:
            return tuple(input_shape[:-1]) + (self.input_dim,)
        return tuple(input_shape) + (self.output_dim,)

    def compute_mask(self, inputs, mask=None):
        return None

    def _layer_config(self):
        return {"input_dim": self.input_dim, "output_dim": self.output_dim,
                "embeddings_initializer": self.embeddings_initializer, "mask_zero": False,
                "tie_weights": self.tie_weights, "reverse_dtype": self.reverse_dtype,
                "logit_soft_cap": self.logit_soft_cap}
