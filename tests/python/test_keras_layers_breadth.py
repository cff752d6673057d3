"""Keras layers gpuaccel writes in Python from its ops (Conv1DTranspose, the 3-D poolings,
Masking, ReversibleEmbedding, the Wrapper base and SpectralNormalization) and the layer API
around them (InputSpec checks, InputLayer, layers.serialize/deserialize), against real Keras 3
with the same weights and inputs: forward values, gradients (tf.GradientTape), a short `fit`
with Keras's losses, configs and Keras's errors."""
import numpy as np
import pytest

from gpuaccel import keras as gk
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers

from keras_layer_comparison import assert_same, built_pair, fit_history, normal, npy  # noqa: E402


def call_one(layer, inputs, **kwargs):
    return layer(inputs[0], **kwargs)


# (id, factory taking the layers module, input shape with the batch)
CASES = [
    ("Conv1DTranspose-valid-stride", lambda layers: layers.Conv1DTranspose(4, 3, strides=2),
     (2, 5, 3)),
    ("Conv1DTranspose-same-output_padding", lambda layers: layers.Conv1DTranspose(
        4, 3, strides=2, padding="same", output_padding=1, activation="relu"), (2, 5, 3)),
    ("Convolution1DTranspose-dilated", lambda layers: layers.Convolution1DTranspose(
        2, 2, dilation_rate=2, padding="same", use_bias=False), (2, 5, 3)),
    ("MaxPooling3D", lambda layers: layers.MaxPooling3D(), (2, 4, 5, 4, 2)),
    ("MaxPool3D-same", lambda layers: layers.MaxPool3D((3, 2, 3), strides=2, padding="same"),
     (2, 5, 4, 5, 2)),
    ("AveragePooling3D", lambda layers: layers.AveragePooling3D((2, 3, 2), strides=(1, 2, 1)),
     (2, 4, 5, 4, 2)),
    ("AvgPool3D-same", lambda layers: layers.AvgPool3D(3, strides=2, padding="same"),
     (2, 5, 4, 5, 2)),
    ("AdaptiveAveragePooling3D", lambda layers: layers.AdaptiveAveragePooling3D((2, 3, 2)),
     (2, 5, 4, 5, 2)),
    ("AdaptiveMaxPooling3D", lambda layers: layers.AdaptiveMaxPooling3D(2), (2, 5, 4, 5, 2)),
    ("Masking", lambda layers: layers.Masking(0.5), (2, 4, 3)),
]


def masked_steps(shape):
    """Seeded data with some timesteps set to the Masking value 0.5 in every feature."""
    x = normal(shape, 0)
    if len(shape) == 3:
        x[0, 1] = 0.5
        x[1, 3] = 0.5
    return x


@pytest.mark.parametrize("name,factory,shape", CASES, ids=[c[0] for c in CASES])
def test_forward_and_gradients_match_keras(name, factory, shape):
    ours, theirs, _ = built_pair(factory, [shape], call_one)
    inputs = [masked_steps(shape)]
    assert_same(ours, theirs, call_one, inputs)
    assert ours._cpp.eager_reason == ""
    symbolic = factory(L)(gk.Input(shape[1:]))
    assert tuple(symbolic.shape) == tuple(factory(K)(keras.Input(shape[1:])).shape)
    config, keras_config = ours.get_config(), theirs.get_config()
    for key in set(keras_config) & set(config) - {"name", "dtype"}:
        if not key.endswith(("_initializer", "_regularizer", "_constraint")):
            assert config[key] == keras_config[key] or list(config[key]) == list(
                keras_config[key]), key


def test_masking_compute_mask_matches_keras():
    x = masked_steps((2, 4, 3))
    ours, theirs = L.Masking(0.5), K.Masking(0.5)
    mask = npy(ours.compute_mask(x))
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, np.asarray(theirs.compute_mask(x)))
    assert not mask[0, 1] and not mask[1, 3] and mask.sum() == 6


@pytest.mark.parametrize("tie_weights", [True, False])
def test_reversible_embedding_matches_keras(tie_weights):
    def make(layers):
        return layers.ReversibleEmbedding(10, 4, tie_weights=tie_weights, logit_soft_cap=2.0)

    ids = np.array([[1, 2, 9], [0, 3, 3]], np.int32)
    ours, theirs = make(L), make(K)
    ours(ids)
    theirs(ids)
    weights = [normal(tuple(w.shape), 5 + i) for i, w in enumerate(theirs.weights)]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    np.testing.assert_allclose(npy(ours(ids)), np.asarray(theirs(ids)), rtol=1e-6)
    hidden = normal((2, 3, 4), 8)
    assert_same(ours, theirs, call_one, [hidden], reverse=True)
    with pytest.raises(TypeError, match="reverse=True"):
        ours(ids, reverse=True)


def wrapped_dense(layers):
    return layers.SpectralNormalization(layers.Dense(3), power_iterations=2)


def test_spectral_normalization_matches_keras():
    x = normal((4, 5), 1)
    ours, theirs = wrapped_dense(L), wrapped_dense(K)
    ours(x)
    theirs(x)
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert [w.trainable for w in ours.weights] == [w.trainable for w in theirs.weights]
    weights = [normal(tuple(w.shape), 20 + i) for i, w in enumerate(theirs.weights)]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    np.testing.assert_allclose(npy(ours(x)), np.asarray(theirs(x)), rtol=1e-5)  # inference
    with pytest.warns(RuntimeWarning, match="in place"):
        trained = ours(x, training=True)
    np.testing.assert_allclose(npy(trained), np.asarray(theirs(x, training=True)), rtol=1e-5,
                               atol=1e-6)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):  # the normalized kernel, u
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="power_iterations"):
        L.SpectralNormalization(L.Dense(2), power_iterations=0)
    with pytest.raises(ValueError, match="nor 'embeddings'"):
        L.SpectralNormalization(L.Flatten())(x)


class _Doubled:
    """A Wrapper subclass (written for each framework) whose call doubles the wrapped layer's
    output."""

    @staticmethod
    def make(layers):
        class Doubled(layers.Wrapper):
            def call(self, inputs):
                return self.layer(inputs) * 2.0

        return Doubled


def test_wrapper_subclass_trains_the_wrapped_weights_like_keras():
    x, y = normal((12, 4), 1), normal((12, 2), 2)

    def model(lib, layers):
        return lib.Sequential([lib.Input((4,)), _Doubled.make(layers)(layers.Dense(2))])

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 10 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    np.testing.assert_allclose(fit_history(gk, ours, x, y), fit_history(keras, theirs, x, y),
                               rtol=2e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    assert ours.layers[0]._cpp.eager_reason == ""
    for layers in (L, K):
        with pytest.raises(ValueError, match="isn't a supported layer type"):
            layers.Wrapper("dense")
    with pytest.raises(NotImplementedError, match=r"does not have a `call\(\)` method"):
        L.Wrapper(L.Dense(2))(x)


FIT_CASES = [
    ("Conv1DTranspose", lambda layers: layers.Conv1DTranspose(2, 3, strides=2), (6, 3)),
    ("MaxPooling3D", lambda layers: layers.MaxPooling3D(2, padding="same"), (3, 4, 3, 2)),
    ("Masking", lambda layers: layers.Masking(0.5), (4, 3)),
]


@pytest.mark.filterwarnings("ignore:Layer 'flatten")  # Keras: Flatten drops Masking's mask
@pytest.mark.parametrize("name,factory,shape", FIT_CASES, ids=[c[0] for c in FIT_CASES])
def test_fit_matches_keras(name, factory, shape):
    x = masked_steps((12,) + shape)
    y = normal((12, 1), 2)

    def model(lib, layers):
        return lib.Sequential([layers.InputLayer(shape=shape), factory(layers),
                               layers.Flatten(), layers.Dense(1)])

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 10 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    np.testing.assert_allclose(fit_history(gk, ours, x, y), fit_history(keras, theirs, x, y),
                               rtol=2e-4)


class _Spec:
    """A pass-through layer (written for each framework) declaring an InputSpec."""

    @staticmethod
    def make(layers, **spec):
        class Checked(layers.Layer):
            def __init__(self):
                super().__init__()
                self.input_spec = layers.InputSpec(**spec)

            def call(self, inputs):
                return inputs

        return Checked()


@pytest.mark.parametrize("spec,shape", [
    ({"ndim": 2}, (2, 3, 1)),
    ({"min_ndim": 3}, (2, 3)),
    ({"max_ndim": 2}, (2, 3, 4)),
    ({"axes": {-1: 4}}, (2, 3)),
    ({"shape": (None, 3, 2)}, (2, 3, 4)),
    ({"dtype": "int32"}, (2, 3)),
], ids=["ndim", "min_ndim", "max_ndim", "axes", "shape", "dtype"])
def test_input_spec_violations_raise_keras_errors(spec, shape):
    x = np.zeros(shape, np.float32)
    messages = []
    for layers in (L, K):
        with pytest.raises(ValueError, match="is incompatible with the layer") as error:
            _Spec.make(layers, **spec)(x)
        messages.append(str(error.value).split("incompatible with the layer: ")[1])
    assert messages[0] == messages[1]
    assert repr(L.InputSpec(**spec)) == repr(K.InputSpec(**spec))
    assert L.InputSpec(**spec).get_config() == K.InputSpec(**spec).get_config()
    # the functional API checks the KerasTensor too, and a good input passes
    with pytest.raises(ValueError, match="is incompatible"):
        _Spec.make(L, **spec)(gk.Input(shape[1:]))
    with pytest.raises(TypeError, match="integer keys"):
        L.InputSpec(axes={"last": 2})


def test_serialize_and_deserialize_like_keras():
    for make in (lambda layers: layers.Conv1DTranspose(2, 3, name="deconv"),
                 lambda layers: layers.Attention(use_scale=True, name="att"),
                 lambda layers: layers.GroupQueryAttention(2, 2, 1)):
        ours, theirs = L.serialize(make(L)), K.serialize(make(K))
        assert {k: ours[k] for k in ("module", "class_name", "registered_name")} == \
            {k: theirs[k] for k in ("module", "class_name", "registered_name")}
        rebuilt = L.deserialize(ours)
        assert type(rebuilt) is type(make(L)) and rebuilt.get_config() == ours["config"]
    # Keras's class is GroupedQueryAttention: its automatic names say so
    assert L.GroupQueryAttention(2, 2, 1).name.startswith("grouped_query_attention")
    wrapped = L.SpectralNormalization(L.Dense(2))
    copy = L.deserialize(L.serialize(wrapped))
    assert isinstance(copy.layer, L.Dense) and copy.layer.units == 2
    assert copy.power_iterations == 1
    for layers in (L, K):
        with pytest.raises(TypeError, match="Could not locate class 'Unknown'"):
            layers.deserialize({"class_name": "Unknown", "config": {}})


def test_input_layer_in_sequential_matches_keras():
    x = normal((3, 4), 0)
    ours = gk.Sequential([L.InputLayer(shape=(4,)), L.Dense(2)])
    theirs = keras.Sequential([K.InputLayer(shape=(4,)), K.Dense(2)])
    weights = [normal(w.shape, 7 + i) for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    np.testing.assert_allclose(npy(ours(x)), np.asarray(theirs(x)), rtol=1e-5, atol=1e-6)
    # keras.layers.Input is keras.Input: the same functional model
    inputs, keras_inputs = L.Input((4,)), K.Input((4,))
    functional = gk.Model(inputs, ours.layers[-1](inputs))
    keras_functional = keras.Model(keras_inputs, theirs.layers[-1](keras_inputs))
    np.testing.assert_allclose(npy(functional(x)), np.asarray(keras_functional(x)), rtol=1e-5,
                               atol=1e-6)


def test_short_names_are_the_same_classes_as_in_keras():
    assert L.MaxPool3D is L.MaxPooling3D and K.MaxPool3D is K.MaxPooling3D
    assert L.AvgPool3D is L.AveragePooling3D and K.AvgPool3D is K.AveragePooling3D
    assert L.Convolution1DTranspose is L.Conv1DTranspose and \
        K.Convolution1DTranspose is K.Conv1DTranspose


@pytest.mark.parametrize("make", [
    lambda layers: layers.MaxPooling3D(),
    lambda layers: layers.AveragePooling3D(2),
    lambda layers: layers.AdaptiveAveragePooling3D(2),
    lambda layers: layers.AdaptiveMaxPooling3D(2),
], ids=["MaxPooling3D", "AveragePooling3D", "AdaptiveAveragePooling3D", "AdaptiveMaxPooling3D"])
def test_3d_poolings_refuse_inputs_of_another_rank(make):
    images = np.zeros((2, 4, 4, 3), np.float32)  # 2-D images, not volumes
    for layers in (L, K):
        with pytest.raises(ValueError):
            make(layers)(images)
    with pytest.raises(ValueError, match="rank 5|5-D"):
        make(L)(images)


def test_reversible_embedding_language_model_fit_matches_keras():
    """Tied input and output embeddings: ids -> embeddings -> Dense -> logits over the
    vocabulary through the same embeddings, trained on the next id."""
    ids = np.random.default_rng(0).integers(0, 7, (12, 5)).astype(np.int32)
    targets = np.roll(ids, -1, axis=1)

    def model(lib, layers):
        tokens = lib.Input((5,), dtype="int32")
        embedding = layers.ReversibleEmbedding(7, 4)
        hidden = layers.Dense(4, activation="tanh")(embedding(tokens))
        return lib.Model(tokens, embedding(hidden, reverse=True))

    ours, theirs = model(gk, L), model(keras, K)
    weights = [normal(w.shape, 10 + i) * 0.5 for i, w in enumerate(theirs.get_weights())]
    theirs.set_weights(weights)
    ours.set_weights(weights)

    def history(lib, m):
        m.compile(optimizer=lib.optimizers.SGD(0.1),
                  loss=lib.losses.SparseCategoricalCrossentropy(from_logits=True))
        return m.fit(ids, targets, epochs=3, batch_size=4, shuffle=False,
                     verbose=0).history["loss"]

    np.testing.assert_allclose(history(gk, ours), history(keras, theirs), rtol=2e-4)
