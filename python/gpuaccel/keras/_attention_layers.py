"""Keras's attention layers that have no C++ layer: Attention (Luong's dot or concat scores),
AdditiveAttention (Bahdanau's) and GroupQueryAttention (fewer key/value heads than query heads).
MultiHeadAttention is a C++ layer (layers.py). Written in Python from gpuaccel's matmul,
softmax and the fused scaled-dot-product-attention op, traced once per input signature into the
C++ step (_python_layer.py).

The trace is keyed by the inputs (their number, shapes and dtypes) and ``training`` only. So
``use_causal_mask=True`` hands the layer the query once more as a last input: that call has its
own trace, in eager calls and in functional models alike. The options a trace cannot carry
(``mask``, ``return_attention_scores``: several outputs) run the layer's ops directly in Python
on each eager call (gradients still flow: the ops record on the tape); the functional API
refuses them.
"""
import numpy as np

from .. import _C
from .._tensor import Tensor, no_grad, tape_active, tensor as _make_tensor
from . import _einsum_dense
from ._layer_base import Layer, _dropout_rate, _positive_int, _reject
from ._python_layer import _AutocastWeights
from ._symbolic import is_symbolic

# Keras subtracts this from masked scores (65504 in float16).
_MASKED_SCORE = 1.0e9


def _keep_mask(mask, like):
    """A boolean/0-1 Keras mask as a float tensor of ``like``'s dtype (1 = keep)."""
    if not isinstance(mask, Tensor):
        mask = _make_tensor(np.asarray(mask).astype(np.float32))
    return _C.cast(mask, like._dtype_name)


def _causal_keep(rows, columns, like):
    """Keras's causal mask: query i sees keys j <= i, as (1, rows, columns) of 0/1."""
    return _C.cast(_make_tensor(np.tril(np.ones((1, rows, columns), np.float32))),
                   like._dtype_name)


def _with_causal_marker(query, value, key):
    """The inputs of a causal call: [query, value, key (or value), query]; the fourth input
    tells the traced call (and its trace's signature) that the call is causal."""
    return [query, value, value if key is None else key, query]


def _node_options(layer, kwargs):
    """The call options of a Keras archive's graph node that a functional call here takes."""
    unsupported = sorted(k for k, v in kwargs.items() if k != "use_causal_mask" and
                         v not in (None, False))
    if unsupported:
        raise NotImplementedError(f"load_model: {type(layer).__name__} calls with {unsupported} "
                                  "cannot be rebuilt in a functional model yet")
    return bool(kwargs.get("use_causal_mask", False))


def _run_eagerly(layer, inputs, compute):
    """``compute(tensors)`` for a call with options the trace cannot key on: the layer built,
    its weights autocast, recorded on the tape when one is active."""
    if is_symbolic(inputs):
        raise NotImplementedError(f"{type(layer).__name__}: masks and "
                                  "return_attention_scores are supported on eager calls only; "
                                  "a functional model cannot carry them yet (use_causal_mask "
                                  "it can)")
    tensors = [layer._to_tensor(x) for x in inputs]
    if not layer.built:
        shapes = [(None,) + tuple(t.shape[1:]) for t in tensors]
        layer.build(shapes)
    if tape_active():
        with _AutocastWeights(layer):
            return compute(tensors)
    with no_grad(), _AutocastWeights(layer):
        return compute(tensors)


class Attention(Layer):
    """``keras.layers.Attention(use_scale=False, score_mode='dot', dropout=0.0, seed=None)``,
    called as ``layer([query, value])`` or ``layer([query, value, key])`` on (batch, steps,
    dim) tensors: softmax(scores(query, key)) @ value, with Keras's scores, masks and weights
    ('scale' and 'concat_score_weight', scalars)."""

    def __init__(self, use_scale=False, score_mode="dot", dropout=0.0, seed=None, **kwargs):
        if score_mode not in ("dot", "concat"):
            raise ValueError("Invalid value for argument score_mode. Expected one of {'dot', "
                             f"'concat'}}. Received: score_mode={score_mode}")
        self.use_scale = bool(use_scale)
        self.score_mode = score_mode
        self.dropout = _dropout_rate(dropout)
        self.seed = seed  # accepted as Dropout does; the draw comes from the global generator
        super().__init__(**kwargs)

    def _validate_inputs(self, inputs, mask=None):
        """Keras's checks and words (they name the subclass)."""
        name = type(self).__name__
        if not isinstance(inputs, list):
            raise ValueError(f"{name} layer must be called on a list of inputs, namely [query, "
                             f"value] or [query, value, key]. Received: inputs={inputs}.")
        if len(inputs) < 2 or len(inputs) > 3:
            raise ValueError(f"{name} layer accepts inputs list of length 2 or 3, namely "
                             "[query, value] or [query, value, key]. Received length: "
                             f"{len(inputs)}.")
        if mask is not None:
            if not isinstance(mask, list):
                raise ValueError(f"{name} layer mask must be a list, namely [query_mask, "
                                 f"value_mask]. Received: mask={mask}.")
            if len(mask) < 2 or len(mask) > 3:
                raise ValueError(f"{name} layer accepts mask list of length 2 or 3. Received: "
                                 f"inputs={inputs}, mask={mask}.")

    def build(self, input_shape):
        # a fourth shape is the causal marker's (_with_causal_marker)
        self._validate_inputs(input_shape[:3] if isinstance(input_shape, list) else input_shape)
        self.scale = None
        self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(), initializer="ones")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight(name="concat_score_weight", shape=(),
                                                       initializer="ones")

    def _calculate_scores(self, query, key):
        """(batch, Tq, Tv) scores of each query step against each key step."""
        if self.score_mode == "dot":
            scores = _C.matmul(query, _C.transpose(key, -2, -1))
            return scores if self.scale is None else _C.binary("mul", scores, self.scale)
        summed = _C.binary("add", _C.expand_dims(query, -2), _C.expand_dims(key, -3))
        if self.scale is not None:
            summed = _C.binary("mul", self.scale, summed)
        return _C.binary("mul", self.concat_score_weight,
                         _C.reduce("sum", _C.unary("tanh", summed), [-1], False))

    def _attend(self, inputs, mask, training, use_causal_mask):
        """Keras's Attention.call: (output, attention weights)."""
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        query_mask = mask[0] if mask else None
        value_mask = mask[1] if mask else None
        scores = self._calculate_scores(query, key)
        keep = None
        if value_mask is not None:
            keep = _C.expand_dims(_keep_mask(value_mask, scores), -2)
        if use_causal_mask:
            causal = _causal_keep(scores.shape[-2], scores.shape[-1], scores)
            keep = causal if keep is None else _C.binary("mul", keep, causal)
        if keep is not None:
            padding = _C.binary("sub", _C.scalar_like(1.0, keep), keep)
            scores = _C.binary("sub", scores, _C.binary(
                "mul", padding, _C.scalar_like(_MASKED_SCORE, padding)))
        weights = _C.softmax(scores, -1)
        applied = _C.dropout(weights, self.dropout, True) if training and self.dropout > 0 \
            else weights
        output = _C.matmul(applied, value)
        if query_mask is not None:
            output = _C.binary("mul", output, _C.expand_dims(_keep_mask(query_mask, output), -1))
        return output, weights

    def call(self, inputs, training=False):
        causal = len(inputs) == 4  # _with_causal_marker
        return self._attend(inputs[:3], None, training, causal)[0]

    def _call_inputs(self, inputs):
        return list(inputs)  # checked by __call__

    def __call__(self, inputs, mask=None, training=None, return_attention_scores=False,
                 use_causal_mask=False):
        self._validate_inputs(inputs, mask)
        if mask is None and not return_attention_scores:
            if use_causal_mask:
                inputs = _with_causal_marker(*inputs) if len(inputs) == 3 else \
                    _with_causal_marker(inputs[0], inputs[1], None)
            return super().__call__(inputs, training=training)
        if mask is not None and is_symbolic(list(mask)):
            inputs = list(inputs) + [m for m in mask if m is not None]  # raises below
        output, weights = _run_eagerly(self, list(inputs), lambda tensors: self._attend(
            tensors, mask, bool(training), use_causal_mask))
        return (output, weights) if return_attention_scores else output

    def _keras_node_arguments(self, args):
        """Keras's arguments of this layer's node in a .keras archive: the input list, and
        use_causal_mask where the causal marker (a fourth input) says so."""
        if len(args) == 4:
            return [args[:3]], {"use_causal_mask": True}
        return [args], {}

    def _call_keras_node(self, tensors, kwargs):
        return self(tensors, use_causal_mask=_node_options(self, kwargs))

    def compute_mask(self, inputs, mask=None):
        self._validate_inputs(inputs, mask)
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[0][:-1]) + (input_shape[1][-1],)

    def _layer_config(self):
        return {"use_scale": self.use_scale, "score_mode": self.score_mode,
                "dropout": self.dropout, "seed": self.seed}


class AdditiveAttention(Attention):
    """``keras.layers.AdditiveAttention(use_scale=True, dropout=0.0)``: scores
    sum(scale * tanh(query + key)) over the features, ``scale`` a (dim,) weight."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)

    def build(self, input_shape):
        self._validate_inputs(input_shape[:3] if isinstance(input_shape, list) else input_shape)
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight(name="scale", shape=(input_shape[0][-1],),
                                         initializer="glorot_uniform")

    def _calculate_scores(self, query, key):
        summed = _C.unary("tanh", _C.binary("add", _C.expand_dims(query, -2),
                                            _C.expand_dims(key, -3)))
        if self.scale is not None:
            summed = _C.binary("mul", self.scale, summed)
        return _C.reduce("sum", summed, [-1], False)

    def _layer_config(self):
        config = super()._layer_config()
        del config["score_mode"]
        return config


class GroupedQueryAttention(Layer):
    """``keras.layers.GroupQueryAttention(head_dim, num_query_heads, num_key_value_heads,
    dropout=0.0, use_bias=True, ...)``, called as ``layer(query, value, key=None)`` on (batch,
    steps, features): query/key/value projections (EinsumDense 'bqm,muh->bquh' with
    num_query_heads, 'bkm,mvh->bkvh' with num_key_value_heads), each key/value head shared by
    num_query_heads // num_key_value_heads query heads, and the output projection
    'bquh,uhm->bqm'. Weights in Keras's order: query, key, value, attention_output (kernel,
    then bias)."""

    # Keras files keep them in the four EinsumDense sub-layers (_keras_h5.py refuses).
    _keras_nests_weights = True

    def __init__(self, head_dim, num_query_heads, num_key_value_heads, dropout=0.0,
                 use_bias=True, sliding_window=None, flash_attention=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, use_gate=False, seed=None,
                 **kwargs):
        _reject("GroupedQueryAttention", sliding_window=sliding_window,
                kernel_regularizer=kernel_regularizer, bias_regularizer=bias_regularizer,
                activity_regularizer=activity_regularizer, kernel_constraint=kernel_constraint,
                bias_constraint=bias_constraint, use_gate=use_gate)
        self.head_dim = _positive_int(head_dim, "head_dim", self)
        self.num_query_heads = _positive_int(num_query_heads, "num_query_heads", self)
        self.num_key_value_heads = _positive_int(num_key_value_heads, "num_key_value_heads",
                                                 self)
        if self.num_query_heads % self.num_key_value_heads != 0:
            raise ValueError("`num_query_heads` must be divisible by `num_key_value_heads`.")
        self.num_repeats = self.num_query_heads // self.num_key_value_heads
        self.dropout = _dropout_rate(dropout)
        if flash_attention and self.dropout > 0.0:
            raise ValueError("Dropout is not supported when flash attention is enabled. Please "
                             "set dropout to 0.0 to use flash attention.")
        self.use_bias = bool(use_bias)
        self.flash_attention = flash_attention
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        self.seed = seed
        super().__init__(**kwargs)

    # Keras's equations of the four projections: (name, equation, input letters' output axes).
    _PROJECTIONS = (("query", "bqm,muh->bquh", "uh"), ("key", "bkm,mvh->bkvh", "vh"),
                    ("value", "bkm,mvh->bkvh", "vh"), ("attention_output", "bquh,uhm->bqm", "m"))

    def build(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None:  # one list of shapes, as a model passes them
            shapes = list(query_shape)
            query_shape, value_shape = shapes[0], shapes[1]
            key_shape = shapes[2] if len(shapes) > 2 else None
        key_shape = value_shape if key_shape is None else key_shape
        self.feature_dim = query_shape[-1]
        heads = {"query": self.num_query_heads, "key": self.num_key_value_heads,
                 "value": self.num_key_value_heads}
        input_shapes = {"query": query_shape, "key": key_shape, "value": value_shape,
                        "attention_output": (None, None, self.num_query_heads, self.head_dim)}
        for name, equation, bias_axes in self._PROJECTIONS:
            output_shape = (None, self.feature_dim) if name == "attention_output" else \
                (None, heads[name], self.head_dim)
            kernel_shape, bias_shape, _ = _einsum_dense.analyze(
                equation, bias_axes if self.use_bias else None, tuple(input_shapes[name]),
                output_shape)
            kernel = self.add_weight(
                name=f"{name}/kernel", shape=tuple(kernel_shape),
                initializer=_einsum_dense.kernel_initializer(self.kernel_initializer, equation))
            bias = None if bias_shape is None else self.add_weight(
                name=f"{name}/bias", shape=tuple(bias_shape), initializer=self.bias_initializer)
            # attributes (not a dict), so a mixed-precision call autocasts them
            setattr(self, f"_{name}_kernel", kernel)
            setattr(self, f"_{name}_bias", bias)

    def _project(self, name, x):
        equation = next(e for n, e, _ in self._PROJECTIONS if n == name)
        kernel, bias = getattr(self, f"_{name}_kernel"), getattr(self, f"_{name}_bias")
        projected = _einsum_dense.product(equation, x, kernel)
        return projected if bias is None else _C.binary("add", projected, bias)

    def _repeat_heads(self, x):
        """(batch, steps, kv_heads, dim) -> (batch, steps, query_heads, dim), each head
        repeated num_repeats times in place (keras.ops.repeat on axis 2)."""
        if self.num_repeats == 1:
            return x
        n, steps, heads, dim = x.shape
        wide = _C.broadcast_to(_C.expand_dims(x, 3), [n, steps, heads, self.num_repeats, dim])
        return _C.reshape(_C.contiguous(wide), [n, steps, heads * self.num_repeats, dim])

    def _attend(self, query, value, key, keep, training, return_scores):
        """Keras's GroupedQueryAttention.call after the masks are merged: (output, scores)."""
        q = _C.permute(self._project("query", query), [0, 2, 1, 3])  # (b, heads, Tq, dim)
        k = _C.permute(self._repeat_heads(self._project("key", key)), [0, 2, 1, 3])
        v = _C.permute(self._repeat_heads(self._project("value", value)), [0, 2, 1, 3])
        scores = None
        if return_scores or (training and self.dropout > 0):
            logits = _C.matmul(_C.binary("mul", q, _C.scalar_like(self.head_dim ** -0.5, q)),
                               _C.transpose(k, -2, -1))
            if keep is not None:  # Keras's Softmax with a mask
                keep = _C.expand_dims(keep, -3)
                padding = _C.binary("sub", _C.scalar_like(1.0, keep), keep)
                logits = _C.binary("add", logits, _C.binary(
                    "mul", padding, _C.scalar_like(-_MASKED_SCORE, padding)))
            scores = _C.softmax(logits, -1)
            if keep is not None:
                scores = _C.binary("mul", scores, keep)
            applied = _C.dropout(scores, self.dropout, True) if training and self.dropout > 0 \
                else scores
            attended = _C.matmul(applied, v)
        else:  # the fused op MultiHeadAttention uses; its mask is boolean
            mask = None if keep is None else _C.cast(_C.expand_dims(keep, -3), "bool")
            attended = _C.scaled_dot_product_attention(q, k, v, mask)
        output = self._project("attention_output", _C.permute(attended, [0, 2, 1, 3]))
        return output, scores

    def _merged_keep(self, query, value, query_mask, value_mask, key_mask, attention_mask,
                     use_causal_mask):
        """Keras's _compute_attention_mask as 0/1 floats of shape (batch or 1, Tq, Tv)."""
        keep = None
        parts = []
        if query_mask is not None:
            parts.append(_C.expand_dims(_keep_mask(query_mask, query), -1))
        for mask in (value_mask, key_mask):
            if mask is not None:
                parts.append(_C.expand_dims(_keep_mask(mask, query), -2))
        if use_causal_mask:
            parts.append(_causal_keep(query.shape[1], value.shape[1], query))
        if attention_mask is not None:
            parts.append(_keep_mask(attention_mask, query))
        for part in parts:
            keep = part if keep is None else _C.binary("mul", keep, part)
        return keep

    def call(self, inputs, training=False):
        query, value = inputs[0], inputs[1]
        key = inputs[2] if len(inputs) > 2 else value
        keep = None
        if len(inputs) == 4:  # _with_causal_marker
            keep = _causal_keep(query.shape[1], value.shape[1], query)
        return self._attend(query, value, key, keep, training, False)[0]

    def _call_inputs(self, query, value, key=None, causal_marker=None):
        return [query, value] + [t for t in (key, causal_marker) if t is not None]

    def __call__(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
                 attention_mask=None, return_attention_scores=False, training=None,
                 use_causal_mask=False):
        masks = (query_mask, value_mask, key_mask, attention_mask)
        inputs = self._call_inputs(query, value, key)
        if all(m is None for m in masks) and not return_attention_scores:
            if use_causal_mask:
                inputs = _with_causal_marker(query, value, key)
            return super().__call__(*inputs, training=training)
        if any(is_symbolic(m) for m in masks if m is not None):
            inputs += [m for m in masks if m is not None]  # _run_eagerly refuses them

        def compute(tensors):
            q, v = tensors[0], tensors[1]
            k = tensors[2] if key is not None else v
            keep = self._merged_keep(q, v, query_mask, value_mask,
                                     None if key is None else key_mask, attention_mask,
                                     use_causal_mask)
            return self._attend(q, v, k, keep, bool(training), return_attention_scores)

        output, scores = _run_eagerly(self, inputs, compute)
        return (output, scores) if return_attention_scores else output

    def _keras_node_arguments(self, args):
        """Keras's arguments of this layer's node in a .keras archive: query, value[, key]
        and use_causal_mask where the causal marker (a fourth input) says so."""
        if len(args) == 4:
            return args[:3], {"use_causal_mask": True}
        return args, {}

    def _call_keras_node(self, tensors, kwargs):
        return self(*tensors, use_causal_mask=_node_options(self, kwargs))

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None:
            shapes = list(query_shape)
            query_shape, value_shape = shapes[0], shapes[1]
            key_shape = shapes[2] if len(shapes) > 2 else None
        key_shape = value_shape if key_shape is None else key_shape
        # Keras's checks (its symbolic calls make them; eager calls do not)
        if query_shape[-1] != value_shape[-1]:
            raise ValueError(f"The last dimension of `query_shape` and `value_shape` must be "
                             f"equal, but are {query_shape[-1]}, {value_shape[-1]}. Received: "
                             f"query_shape={tuple(query_shape)}, "
                             f"value_shape={tuple(value_shape)}")
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(f"All dimensions of `value` and `key`, except the last one, must "
                             f"be equal. Received: value_shape={tuple(value_shape)} and "
                             f"key_shape={tuple(key_shape)}")
        return tuple(query_shape)

    def _layer_config(self):
        return {"head_dim": self.head_dim, "num_query_heads": self.num_query_heads,
                "num_key_value_heads": self.num_key_value_heads, "use_bias": self.use_bias,
                "dropout": self.dropout, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer, "seed": self.seed}


# Keras's class is GroupedQueryAttention (hence the default names), exported and serialized
# as keras.layers.GroupQueryAttention.
GroupedQueryAttention._keras_class_name = "GroupQueryAttention"
GroupQueryAttention = GroupedQueryAttention
