"""The Keras face additions: ``keras.utils`` (``to_categorical``, ``set_random_seed``),
stateful ``keras.metrics.Mean``/``Sum`` and ``SparseCategoricalAccuracy`` against real Keras,
and the ``Softmax``/``ReLU`` layers inside a model against their Keras twins."""
import random

import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")


def test_to_categorical_matches_keras():
    for labels, n in [([0, 2, 1], None), (np.array([[1], [0]]), 3), (np.arange(6).reshape(2, 3), 7)]:
        np.testing.assert_array_equal(gk.utils.to_categorical(labels, n),
                                      keras.utils.to_categorical(labels, n))
    with pytest.raises(ValueError, match=r"lie in \[0, 2\)"):
        gk.utils.to_categorical([0, 3], 2)
    with pytest.raises(ValueError, match="integer class labels"):
        gk.utils.to_categorical([0.5, 1.0])


def test_set_random_seed_seeds_every_generator():
    gk.utils.set_random_seed(7)
    first = (gpuaccel.randn(3).numpy(), np.random.rand(2), random.random())
    gk.utils.set_random_seed(7)
    second = (gpuaccel.randn(3).numpy(), np.random.rand(2), random.random())
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert first[2] == second[2]
    with pytest.raises(ValueError, match="Expected `seed` argument to be an integer"):
        gk.utils.set_random_seed(1.5)


def test_mean_and_sum_metrics_match_keras():
    ours, theirs = gk.metrics.Mean(name="train_loss"), keras.metrics.Mean(name="train_loss")
    for values, weights in [(gpuaccel.constant(2.0), None), ([1.0, 3.0, 5.0], [1.0, 0.0, 2.0]),
                            (np.array([[4.0]]), None)]:
        ours.update_state(values, sample_weight=weights)
        theirs.update_state(np.asarray(values.numpy() if hasattr(values, "numpy") else values),
                            sample_weight=weights)
        assert float(ours.result()) == pytest.approx(float(theirs.result()), rel=1e-6)
    ours.reset_state()
    assert float(ours.result()) == 0.0
    assert float(ours(3.0)) == 3.0  # __call__ updates and returns the result
    total = gk.metrics.Sum()
    total.update_state([1.0, 2.0])
    total.update_state(4.0)
    assert float(total.result()) == 7.0


def test_sparse_categorical_accuracy_is_stateful_like_keras():
    ours = gk.metrics.SparseCategoricalAccuracy(name="acc")
    theirs = keras.metrics.SparseCategoricalAccuracy(name="acc")
    rng = np.random.default_rng(0)
    for _ in range(3):
        y, p = rng.integers(0, 4, 10), rng.random((10, 4)).astype(np.float32)
        ours.update_state(y, p)
        theirs.update_state(y, p)
    assert float(ours.result()) == pytest.approx(float(theirs.result()), rel=1e-6)
    ours.reset_state()
    assert float(ours.result()) == 0.0


def test_softmax_and_relu_layers_match_keras():
    x = np.random.default_rng(1).normal(size=(4, 6)).astype(np.float32)
    for ours, theirs in [(gk.layers.Softmax(), keras.layers.Softmax()),
                         (gk.layers.ReLU(), keras.layers.ReLU())]:
        np.testing.assert_allclose(ours(x).numpy(), np.asarray(theirs(x)), rtol=1e-6, atol=1e-7)
    model = gk.Sequential([gk.Input((6,)), gk.layers.Dense(3), gk.layers.Softmax()])
    np.testing.assert_allclose(model.predict(x, verbose=0).sum(1), np.ones(4), rtol=1e-5)
    # other axes are supported now (tests/python/test_keras_layers_more.py compares them)
    np.testing.assert_allclose(gk.layers.Softmax(axis=0)(x).numpy(),
                               np.asarray(keras.layers.Softmax(axis=0)(x)), rtol=1e-6, atol=1e-7)
    # ReLU's options are supported now (tests/python/test_keras_layers_more.py compares them)
    np.testing.assert_allclose(gk.layers.ReLU(max_value=0.5)(x).numpy(),
                               np.asarray(keras.layers.ReLU(max_value=0.5)(x)), rtol=1e-6)


def test_reshape_rescaling_add_concatenate_match_keras():
    x = np.random.default_rng(2).normal(size=(3, 4, 6)).astype(np.float32)
    for ours, theirs in [(gk.layers.Reshape((8, -1)), keras.layers.Reshape((8, -1))),
                         (gk.layers.Rescaling(1 / 255, offset=-1.0),
                          keras.layers.Rescaling(1 / 255, offset=-1.0))]:
        np.testing.assert_allclose(ours(x).numpy(), np.asarray(theirs(x)), rtol=1e-6)
    images = np.arange(12, dtype=np.uint8).reshape(1, 2, 2, 3)
    np.testing.assert_allclose(gk.layers.Rescaling(1 / 255)(images).numpy(), images / 255,
                               rtol=1e-6)

    def merged(lib):
        a, b = lib.Input((4,)), lib.Input((4,))
        da, db = lib.layers.Dense(3)(a), lib.layers.Dense(3)(b)
        joined = lib.layers.Concatenate()([lib.layers.Add()([da, db]), da])
        return lib.Model([a, b], lib.layers.Dense(2)(lib.layers.Reshape((3, 2))(joined)))

    ours, theirs = merged(gk), merged(keras)
    theirs.set_weights(ours.get_weights())
    inputs = [np.random.default_rng(3).normal(size=(5, 4)).astype(np.float32) for _ in range(2)]
    np.testing.assert_allclose(ours.predict(inputs, verbose=0), theirs.predict(inputs, verbose=0),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="at least 2 inputs"):
        gk.layers.Add()(x)
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        gk.layers.Concatenate(axis=1)([np.zeros((2, 3, 4)), np.zeros((2, 3, 5))])
    with pytest.raises(ValueError, match="total size"):
        gk.layers.Reshape((5,))(x)
    with pytest.raises(AttributeError, match="keras.layers.RandomElasticTransform is not "
                                             "supported by gpuaccel yet"):
        gk.layers.RandomElasticTransform


def test_symbolic_dtype_answers_keras2_and_numpy_questions():
    x = gk.Input((3,))
    assert x.dtype == "float32" and x.dtype.name == "float32"
    assert x.dtype.is_floating and x.dtype.itemsize == 4
    assert x.dtype.as_numpy_dtype is np.float32
    y = gk.layers.Dense(2, dtype="mixed_float16")(x)
    assert y.dtype.name == "float16" and y.dtype.size == 2


def test_plot_model_draws_or_says_what_to_install(tmp_path):
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(2)])
    try:
        import pydot  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError, match="pip install pydot"):
            gk.utils.plot_model(model, to_file=str(tmp_path / "m.png"))
        return
    out = tmp_path / "m.dot"
    gk.utils.plot_model(model, to_file=str(out))
    assert "dense" in out.read_text()


@pytest.mark.parametrize("padding,strides,dilation", [("valid", 1, 1), ("same", 2, 1),
                                                      ("valid", 1, 2)])
def test_conv1d_matches_keras_forward_and_one_training_step(padding, strides, dilation):
    def model(lib):
        return lib.Sequential([lib.Input((9, 3)),
                               lib.layers.Conv1D(4, 3, strides=strides, padding=padding,
                                                 dilation_rate=dilation, activation="relu"),
                               lib.layers.Flatten(), lib.layers.Dense(2)])

    ours, theirs = model(gk), model(keras)
    assert [w.shape for w in ours.get_weights()] == [w.shape for w in theirs.get_weights()]
    theirs.set_weights(ours.get_weights())
    x = np.random.default_rng(5).normal(size=(6, 9, 3)).astype(np.float32)
    y = np.random.default_rng(6).normal(size=(6, 2)).astype(np.float32)
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    for m, lib in ((ours, gk), (theirs, keras)):
        m.compile(optimizer=lib.optimizers.SGD(learning_rate=0.1), loss="mse")
        m.train_on_batch(x, y)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    with pytest.raises(NotImplementedError, match="causal"):
        gk.layers.Conv1D(2, 3, padding="causal")
    with pytest.raises(ValueError, match="expected ndim=3"):
        gk.layers.Conv1D(2, 3)(np.zeros((2, 4, 4, 1), np.float32))
