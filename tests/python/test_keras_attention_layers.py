"""Keras's attention layers and EinsumDense as gpuaccel writes them in Python
(python/gpuaccel/keras/_attention_layers.py, _einsum_dense.py) against real Keras 3 with the
same weights and inputs: forward values and gradients with respect to the inputs and weights
(tf.GradientTape), the call options (use_causal_mask, masks, return_attention_scores, dropout),
output shapes, a short `fit` per family with Keras's losses, and Keras's errors."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers

from keras_layer_comparison import assert_same, built_pair, fit_history, normal, npy  # noqa: E402


def list_call(layer, inputs, **kwargs):
    return layer(list(inputs), **kwargs)


def split_call(layer, inputs, **kwargs):
    return layer(*inputs, **kwargs)


# (id, factory taking the layers module, input shapes with the batch, how the layer is called)
CASES = [
    ("Attention-dot", lambda layers: layers.Attention(), [(2, 3, 4), (2, 5, 4)], list_call),
    ("Attention-dot-scale-key", lambda layers: layers.Attention(use_scale=True),
     [(2, 3, 4), (2, 5, 6), (2, 5, 4)], list_call),
    ("Attention-concat", lambda layers: layers.Attention(score_mode="concat"),
     [(2, 3, 4), (2, 5, 4)], list_call),
    ("Attention-concat-scale", lambda layers: layers.Attention(use_scale=True,
                                                               score_mode="concat"),
     [(2, 3, 4), (2, 5, 4)], list_call),
    ("AdditiveAttention", lambda layers: layers.AdditiveAttention(),
     [(2, 3, 4), (2, 5, 4), (2, 5, 4)], list_call),
    ("AdditiveAttention-noscale", lambda layers: layers.AdditiveAttention(use_scale=False),
     [(2, 3, 4), (2, 5, 4)], list_call),
    ("GroupQueryAttention", lambda layers: layers.GroupQueryAttention(3, 4, 2),
     [(2, 3, 5), (2, 4, 5)], split_call),
    ("GroupQueryAttention-key-nobias", lambda layers: layers.GroupQueryAttention(
        2, 2, 1, use_bias=False), [(2, 3, 5), (2, 4, 5), (2, 4, 3)], split_call),
    ("EinsumDense-ab,bc", lambda layers: layers.EinsumDense("ab,bc->ac", 6, bias_axes="c"),
     [(3, 4)], split_call),
    ("EinsumDense-abc,cd", lambda layers: layers.EinsumDense("abc,cd->abd", (3, 6),
                                                             activation="tanh"),
     [(2, 3, 4)], split_call),
    ("EinsumDense-abc,cde", lambda layers: layers.EinsumDense("abc,cde->abde", (3, 2, 5),
                                                              bias_axes="de"),
     [(2, 3, 4)], split_call),
    ("EinsumDense-general", lambda layers: layers.EinsumDense("abc,dce->abde", (3, 2, 5),
                                                              bias_axes="be"),
     [(2, 3, 4)], split_call),
]


@pytest.mark.parametrize("name,factory,shapes,call", CASES, ids=[c[0] for c in CASES])
def test_forward_and_gradients_match_keras(name, factory, shapes, call):
    ours, theirs, inputs = built_pair(factory, shapes, call)
    y = assert_same(ours, theirs, call, inputs)
    # traced on the first call of this signature, replayed afterwards with Keras's values
    again = call(ours, [ga.tensor(x) for x in inputs])
    np.testing.assert_allclose(npy(again), npy(y), rtol=1e-6, atol=1e-6)
    assert ours._cpp.eager_reason == ""
    symbolic = [gk.Input(s[1:]) for s in shapes]
    expected = call(theirs, [keras.Input(s[1:]) for s in shapes])
    assert tuple(call(factory(L), symbolic).shape) == tuple(expected.shape)


ATTENTION_OPTIONS = [
    ("causal", {"use_causal_mask": True}),
    ("causal-scores", {"use_causal_mask": True, "return_attention_scores": True}),
    ("masks-scores", {"mask": [np.array([[1, 1, 0], [1, 0, 1]], bool),
                               np.array([[1, 1, 1, 0, 0], [1, 0, 1, 1, 1]], bool)],
                      "return_attention_scores": True}),
]


@pytest.mark.parametrize("cls", ["Attention", "AdditiveAttention"])
@pytest.mark.parametrize("option,kwargs", ATTENTION_OPTIONS, ids=[o[0] for o in ATTENTION_OPTIONS])
def test_attention_call_options_match_keras(cls, option, kwargs):
    ours, theirs, inputs = built_pair(lambda layers: getattr(layers, cls)(use_scale=True),
                                      [(2, 3, 4), (2, 5, 4)], list_call)
    assert_same(ours, theirs, list_call, inputs, **kwargs)


def test_group_query_attention_call_options_match_keras():
    ours, theirs, inputs = built_pair(lambda layers: layers.GroupQueryAttention(2, 4, 2),
                                      [(2, 4, 5), (2, 4, 5)], split_call)
    assert_same(ours, theirs, split_call, inputs, use_causal_mask=True)
    assert_same(ours, theirs, split_call, inputs, use_causal_mask=True,
                return_attention_scores=True)
    attention_mask = np.tril(np.ones((2, 4, 4), bool))[:, ::-1]
    value_mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], bool)
    assert_same(ours, theirs, split_call, inputs, attention_mask=attention_mask,
                value_mask=value_mask, return_attention_scores=True)


def test_attention_dropout_drops_weights_in_training_only():
    ga.random.set_seed(3)
    layer = L.Attention(dropout=0.5)
    query = normal((2, 3, 4), 0)
    value = np.eye(4, dtype=np.float32)[None].repeat(2, axis=0)  # output = dropped weights
    inference, weights = layer([query, value], return_attention_scores=True)
    np.testing.assert_allclose(npy(inference), npy(weights), rtol=1e-6)
    dropped = npy(layer([query, value], training=True))
    kept = dropped != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(dropped[kept], npy(weights)[kept] * 2, rtol=1e-6)


FIT_CASES = [
    ("Attention-causal", lambda layers, q, v: layers.Attention(score_mode="concat")(
        [q, v, v], use_causal_mask=True)),
    ("GroupQueryAttention-causal", lambda layers, q, v: layers.GroupQueryAttention(2, 2, 1)(
        q, v, use_causal_mask=True)),
    ("EinsumDense", lambda layers, q, v: layers.EinsumDense("abc,cde->abde", (4, 2, 3),
                                                            bias_axes="e")(q)),
]


@pytest.mark.parametrize("name,head", FIT_CASES, ids=[c[0] for c in FIT_CASES])
def test_fit_matches_keras(name, head):
    xs = [normal((12, 4, 3), 1), normal((12, 5, 3), 2)]
    y = normal((12, 1), 3)

    def model(lib, layers):
        q, v = lib.Input((4, 3)), lib.Input((5, 3))
        out = layers.Dense(1)(layers.Flatten()(head(layers, q, v)))
        return lib.Model([q, v], out)

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 10 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    np.testing.assert_allclose(fit_history(gk, ours, xs, y), fit_history(keras, theirs, xs, y),
                               rtol=2e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
    for layer in ours.layers[2:]:  # after the two InputLayers: traced, the causal calls too
        assert not layer._is_python_layer() or layer._cpp.eager_reason == ""


@pytest.mark.parametrize("cls", ["Attention", "GroupQueryAttention"])
def test_causal_calls_are_traced_apart_from_plain_ones(cls):
    layer = L.Attention() if cls == "Attention" else L.GroupQueryAttention(2, 2, 1)
    q, v = normal((2, 4, 3), 0), normal((2, 4, 3), 1)

    def call(**kwargs):
        return npy(layer([q, v], **kwargs) if cls == "Attention" else layer(q, v, **kwargs))

    plain, causal = call(), call(use_causal_mask=True)
    # the first query step sees only the first key step: its output differs from the plain one
    assert np.abs(plain[:, 0] - causal[:, 0]).max() > 1e-3
    np.testing.assert_allclose(call(), plain, rtol=1e-6)
    np.testing.assert_allclose(call(use_causal_mask=True), causal, rtol=1e-6)
    assert layer._cpp.python_calls == 2 and layer._cpp.eager_reason == ""


@pytest.mark.parametrize("cls", ["Attention", "AdditiveAttention"])
def test_attention_config_matches_keras(cls):
    ours, theirs = getattr(L, cls)(use_scale=True, dropout=0.25), \
        getattr(K, cls)(use_scale=True, dropout=0.25)
    config, keras_config = ours.get_config(), theirs.get_config()
    assert set(config) == set(keras_config)
    for key in set(config) - {"name", "dtype"}:
        assert config[key] == keras_config[key], key
    assert type(ours).from_config(config).get_config() == config


@pytest.mark.parametrize("make,message", [
    (lambda layers: layers.Attention(score_mode="cosine"), "score_mode"),
    (lambda layers: layers.GroupQueryAttention(4, 3, 2), "divisible"),
    # Keras finds a bad equation when it builds, gpuaccel already when it is constructed
    (lambda layers: layers.EinsumDense("abc->ac", 3)(np.ones((2, 3, 4), np.float32)),
     "Invalid einsum equation"),
], ids=["score_mode", "heads", "equation"])
def test_argument_errors_like_keras(make, message):
    for layers in (L, K):
        with pytest.raises(ValueError, match=message):
            make(layers)


def test_bad_inputs_raise_typed_errors():
    q = normal((2, 3, 4), 0)
    for layers in (L, K):
        with pytest.raises(ValueError, match="must be called on a list of inputs"):
            layers.Attention()(q)
        with pytest.raises(ValueError, match="must be called on a list of inputs"):
            layers.Attention()((q, q))  # a list, as Keras requires
        with pytest.raises(ValueError, match="list of length 2 or 3"):
            layers.Attention()([q])
        with pytest.raises(ValueError, match="mask must be a list"):
            layers.Attention()([q, q], mask=np.ones((2, 3), bool))
        with pytest.raises(ValueError, match="Bias dimension 'z'"):
            layers.EinsumDense("abc,cd->abd", (3, 5), bias_axes="z")(q)
    with pytest.raises(ValueError, match="do not match at shared dimension"):
        L.EinsumDense("abc,cd->abd", (4, 5))(q)
    with pytest.raises(NotImplementedError, match="eager calls only"):
        L.Attention()([gk.Input((3, 4)), gk.Input((3, 4))], return_attention_scores=True)
    with pytest.raises(NotImplementedError, match="ellipsis"):
        L.EinsumDense("...b,bc->...c", 3)


def test_einsum_dense_kernel_draws_with_keras_fans():
    """Glorot's scale from the equation's input and output axes (fan_in 16, fan_out 8 * 12),
    not from the rank-3 kernel's shape: the spread of a seeded draw matches Keras's."""
    ga.random.set_seed(1)
    keras.utils.set_random_seed(1)
    x = np.zeros((1, 2, 16), np.float32)
    stds = []
    for layers in (L, K):
        layer = layers.EinsumDense("abc,cde->abde", (2, 8, 12))
        layer(x)
        stds.append(float(np.std(layer.get_weights()[0])))
    expected = np.sqrt(2.0 / (16 + 8 * 12))  # glorot_uniform's standard deviation
    np.testing.assert_allclose(stds, [expected, expected], rtol=0.08)


def test_keras_archives_of_attention_models_load_in_keras_and_back(tmp_path):
    def model(lib, layers):
        q, v = lib.Input((4, 3)), lib.Input((5, 3))
        plain = layers.Attention(use_scale=True)([q, v])
        causal = layers.Attention(score_mode="concat")([q, q], use_causal_mask=True)
        merged = layers.Concatenate()([plain, causal])
        return lib.Model([q, v], layers.EinsumDense("abc,cd->abd", (4, 2))(merged))

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 60 + i) for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    x = [normal((3, 4, 3), 61), normal((3, 5, 3), 62)]
    expected = theirs.predict(x, verbose=0)
    np.testing.assert_allclose(ours.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)
    ours.save(tmp_path / "ours.keras")
    loaded_in_keras = keras.models.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(loaded_in_keras.predict(x, verbose=0), expected, rtol=1e-5,
                               atol=1e-6)
    theirs.save(tmp_path / "theirs.keras")
    loaded_here = gk.models.load_model(tmp_path / "theirs.keras")
    np.testing.assert_allclose(loaded_here.predict(x, verbose=0), expected, rtol=1e-5, atol=1e-6)
    # GroupQueryAttention's weights sit in sub-layers in Keras's files: refused, not garbled
    q = gk.Input((4, 3))
    grouped = gk.Model(q, L.GroupQueryAttention(2, 2, 1)(q, q))
    with pytest.raises(NotImplementedError, match="nested sub-layers"):
        grouped.save(tmp_path / "grouped.keras")
