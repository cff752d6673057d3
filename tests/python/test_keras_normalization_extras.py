"""Weight regularizers and constraints on BatchNormalization, LayerNormalization,
GroupNormalization (``gamma_*``/``beta_*``) and Embedding (``embeddings_*``), compared with
real Keras 3 on the same weights and data: the penalties in ``model.losses`` and the loss,
the weights after a few SGD steps (constraints projected after each step), and the configs."""
import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

X = np.random.default_rng(31).normal(size=(12, 4)).astype(np.float32)
Y = np.random.default_rng(32).normal(size=(12, 2)).astype(np.float32)
IDS = np.random.default_rng(33).integers(0, 10, size=(12, 3))


def extras(lib):
    R, C = lib.regularizers, lib.constraints
    return dict(gamma_regularizer=R.L2(0.1), beta_regularizer=R.L1(0.05),
                gamma_constraint=C.NonNeg(), beta_constraint=C.MaxNorm(0.3))


def normalization_model(lib):
    L = lib.layers
    return lib.Sequential([
        lib.Input((4,)), L.Dense(8, name="d0"),
        L.BatchNormalization(name="bn", **extras(lib)),
        L.LayerNormalization(name="ln", **extras(lib)),
        L.GroupNormalization(groups=2, name="gn", **extras(lib)),
        L.Dense(2, name="d1")])


def embedding_model(lib):
    L = lib.layers
    return lib.Sequential([
        lib.Input((3,), dtype="int32"),
        L.Embedding(10, 4, name="e", embeddings_regularizer=lib.regularizers.L2(0.02),
                    embeddings_constraint=lib.constraints.UnitNorm(axis=1)),
        L.Flatten(), L.Dense(2, name="d")])


@pytest.mark.parametrize("build,x", [(normalization_model, X), (embedding_model, IDS)],
                         ids=["normalization", "embedding"])
def test_regularizers_and_constraints_train_as_keras(build, x):
    theirs, ours = build(keras), build(gk)
    rng = np.random.default_rng(34)
    weights = [rng.uniform(-1.0, 1.0, size=w.shape).astype(np.float32) for w in
               theirs.get_weights()]
    for i, w in enumerate(theirs.weights):  # moving variances stay positive
        if "variance" in w.path:
            weights[i] = np.abs(weights[i]) + 0.5
    theirs.set_weights(weights)
    ours.set_weights(weights)
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    ours(x)
    expected_penalty = float(sum(np.asarray(v) for v in theirs.losses))
    assert len(ours.losses) == len(theirs.losses) > 0
    np.testing.assert_allclose(float(sum(t.numpy() for t in ours.losses)), expected_penalty,
                               rtol=1e-5)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.1), loss="mse")
    h_ours = ours.fit(x, Y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    h_theirs = theirs.fit(x, Y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    for a, b, w in zip(ours.get_weights(), theirs.get_weights(), theirs.weights):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5, err_msg=w.path)


def test_normalization_extras_configs_are_keras_configs():
    ours, theirs = normalization_model(gk), normalization_model(keras)
    for name in ("bn", "ln", "gn"):
        mine, keras_config = ours.get_layer(name).get_config(), theirs.get_layer(name).get_config()
        for key in ("gamma_regularizer", "beta_regularizer", "gamma_constraint",
                    "beta_constraint"):
            assert mine[key]["class_name"] == keras_config[key]["class_name"], (name, key)
            assert mine[key]["config"] == keras_config[key]["config"], (name, key)
    embedding = embedding_model(gk).get_layer("e").get_config()
    assert embedding["embeddings_constraint"]["config"] == {"axis": 1}
    # a layer without extras stays its plain C++ layer
    assert not gk.layers.BatchNormalization()._is_python_layer()
