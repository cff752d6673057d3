"""Models with several outputs (a list or a dict of outputs, several inputs) compile, fit,
evaluate and predict as real Keras 3 does with the same weights and data: per-output losses,
loss weights and metrics, the logged names, the total loss, predict's structure; and sample
weights that come inside a Dataset, or from class_weight on a Dataset."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(7)
X = RNG.normal(size=(16, 4)).astype("float32")
X2 = RNG.normal(size=(16, 2)).astype("float32")
YA = RNG.integers(0, 3, size=(16,))
YB = RNG.normal(size=(16, 1)).astype("float32")
SW = RNG.uniform(0.5, 2.0, size=(16,)).astype("float32")


def two_head_model(lib, outputs_as_dict=False):
    """Two inputs, a shared hidden layer, a softmax head 'a' and a regression head 'b' (a dict
    of outputs keyed 'zb'/'a', in that order, when ``outputs_as_dict``)."""
    inp = lib.Input((4,), name="x")
    inp2 = lib.Input((2,), name="x2")
    h = lib.layers.Dense(5, activation="relu", name="h")(
        lib.layers.Concatenate(name="cat")([inp, inp2]))
    a = lib.layers.Dense(3, activation="softmax", name="a")(h)
    b = lib.layers.Dense(1, name="b")(h)
    return lib.Model([inp, inp2], {"zb": b, "a": a} if outputs_as_dict else [a, b])


def twin_models(outputs_as_dict=False):
    """The Keras model and ours with the same weights."""
    theirs, ours = two_head_model(keras, outputs_as_dict), two_head_model(gk, outputs_as_dict)
    for layer in theirs.layers:
        if layer.weights:
            ours.get_layer(layer.name).set_weights(layer.get_weights())
    return theirs, ours


def assert_logs_close(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for name in theirs:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=2e-5, atol=1e-6, err_msg=name)


def test_list_outputs_fit_evaluate_predict_match_keras():
    theirs, ours = twin_models()
    results = []
    for lib, model in ((keras, theirs), (gk, ours)):
        model.compile(lib.optimizers.SGD(0.1),
                      loss=["sparse_categorical_crossentropy", "mse"], loss_weights=[0.5, 2.0],
                      metrics=["accuracy", ["mae", "mse"]])
        history = model.fit([X, X2], [YA, YB], epochs=2, batch_size=8, shuffle=False, verbose=0)
        results.append((history.history, model.evaluate([X, X2], [YA, YB], verbose=0),
                        model.predict([X, X2], verbose=0), model.get_weights()))
    (k_hist, k_eval, k_pred, k_weights), (g_hist, g_eval, g_pred, g_weights) = results
    assert sorted(g_hist) == ["a_accuracy", "a_loss", "b_loss", "b_mae", "b_mse", "loss"]
    assert_logs_close(g_hist, k_hist)
    # evaluate's list: the total, each output's loss, then the metrics (Keras's order)
    assert ours.metrics_names == ["loss", "a_loss", "b_loss", "a_accuracy", "b_mae", "b_mse"]
    np.testing.assert_allclose(g_eval, k_eval, rtol=2e-5)
    assert isinstance(g_pred, list) and [p.shape for p in g_pred] == [(16, 3), (16, 1)]
    for g, k in zip(g_pred + g_weights, k_pred + k_weights):
        np.testing.assert_allclose(g, k, rtol=1e-4, atol=1e-6)


def test_dict_outputs_with_sample_weight_and_validation_match_keras():
    theirs, ours = twin_models(outputs_as_dict=True)
    labels = {"a": YA, "zb": YB}
    results = []
    for lib, model, dataset in ((keras, theirs, tf.data.Dataset), (gk, ours, ga.data.Dataset)):
        model.compile(lib.optimizers.SGD(0.1),
                      loss={"a": "sparse_categorical_crossentropy", "zb": "mse"},
                      loss_weights={"a": 0.5, "zb": 2.0}, metrics={"a": "accuracy"},
                      weighted_metrics={"zb": ["mae"]})
        history = model.fit([X, X2], labels, sample_weight=SW, epochs=2, batch_size=8,
                            shuffle=False, verbose=0, validation_data=([X, X2], labels))
        batches = dataset.from_tensor_slices(((X, X2), labels)).batch(8)
        results.append((history.history, model.evaluate(batches, verbose=0, return_dict=True),
                        model.predict([X, X2], verbose=0)))
    (k_hist, k_eval, k_pred), (g_hist, g_eval, g_pred) = results
    assert "zb_loss" in g_hist and "val_zb_mae" in g_hist  # the dict's keys name the logs
    assert_logs_close(g_hist, k_hist)
    assert_logs_close(g_eval, k_eval)
    assert list(g_pred) == list(k_pred) == ["zb", "a"]  # the dict as given
    for key in k_pred:
        np.testing.assert_allclose(g_pred[key], k_pred[key], rtol=1e-4, atol=1e-6)
    called = ours([X[:2], X2[:2]])
    assert list(called) == ["zb", "a"] and called["a"].shape == (2, 3)


SW2 = RNG.uniform(0.0, 3.0, size=(16,)).astype("float32")


def test_per_output_sample_weights_match_keras():
    """A list or dict of arrays (one per output, Keras's structure of y) weighs each output's
    loss and weighted metrics with its own array: in fit (and its validation_split), evaluate,
    train_on_batch, test_on_batch, and a Dataset's (x, y, sample_weight) elements."""
    theirs, ours = twin_models(outputs_as_dict=True)
    labels = {"a": YA, "zb": YB}
    results = []
    for lib, model, dataset in ((keras, theirs, tf.data.Dataset), (gk, ours, ga.data.Dataset)):
        model.compile(lib.optimizers.SGD(0.1),
                      loss={"a": "sparse_categorical_crossentropy", "zb": "mse"},
                      loss_weights={"a": 0.5, "zb": 2.0}, metrics={"a": "accuracy"},
                      weighted_metrics={"a": ["accuracy"], "zb": ["mae"]})
        history = model.fit([X, X2], labels, sample_weight={"a": SW, "zb": SW2}, epochs=2,
                            batch_size=4, shuffle=False, verbose=0,
                            validation_split=0.25).history
        elements = dataset.from_tensor_slices(((X, X2), labels, {"a": SW2, "zb": SW})).batch(8)
        from_dataset = model.fit(elements, epochs=1, verbose=0).history
        evaluated = model.evaluate([X, X2], labels, sample_weight={"a": SW2, "zb": SW},
                                   batch_size=8, verbose=0, return_dict=True)
        trained = model.train_on_batch([X, X2], labels, sample_weight={"a": SW, "zb": SW2},
                                       return_dict=True)
        tested = model.test_on_batch([X, X2], labels, sample_weight={"a": SW2, "zb": SW},
                                     return_dict=True)
        results.append((history, from_dataset, evaluated, trained, tested, model.get_weights()))
    for g, k in zip(results[1][:5], results[0][:5]):
        assert_logs_close(g, k)
    for g, k in zip(results[1][5], results[0][5]):
        np.testing.assert_allclose(g, k, rtol=1e-4, atol=1e-6)
    # the arrays did weigh each output apart: the weighted accuracy differs from the plain one
    assert results[1][2]["a_weighted_accuracy"] != pytest.approx(results[1][2]["a_accuracy"])


def test_list_sample_weights_with_an_unweighted_output_and_single_output_batches_match_keras():
    theirs, ours = twin_models()
    results = []
    for lib, model in ((keras, theirs), (gk, ours)):
        model.compile(lib.optimizers.SGD(0.1), loss=["sparse_categorical_crossentropy", "mse"],
                      weighted_metrics=[["accuracy"], ["mae"]])
        results.append(model.fit([X, X2], [YA, YB], sample_weight=[None, SW2], batch_size=8,
                                 epochs=1, shuffle=False, verbose=0).history)
    assert_logs_close(results[1], results[0])
    theirs = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    ours = gk.Sequential([gk.Input((4,)), gk.layers.Dense(3, activation="softmax")])
    ours.set_weights(theirs.get_weights())
    results = []
    for lib, model in ((keras, theirs), (gk, ours)):
        model.compile(lib.optimizers.SGD(0.1), "sparse_categorical_crossentropy",
                      weighted_metrics=["accuracy"])
        by_sample = model.train_on_batch(X, YA, sample_weight=SW, return_dict=True)
        by_class = model.train_on_batch(X, YA, class_weight={0: 0.5, 1: 2.0, 2: 1.0},
                                        return_dict=True)
        tested = model.test_on_batch(X, YA, sample_weight=SW2, return_dict=True)
        results.append((by_sample, by_class, tested, model.get_weights()))
    for g, k in zip(results[1][:3], results[0][:3]):
        assert_logs_close(g, k)
    for g, k in zip(results[1][3], results[0][3]):
        np.testing.assert_allclose(g, k, rtol=1e-4, atol=1e-6)


def test_loss_sums_stay_on_the_device_until_the_logs_are_read():
    """Without compiled metrics a step of several outputs reads nothing on the host: the loss
    trackers' sums are read once per epoch, at its logs (one read per step before)."""
    model = two_head_model(gk)
    model.compile(gk.optimizers.SGD(0.1), loss=["sparse_categorical_crossentropy", "mse"])
    history = model.fit([X, X2], [YA, YB], epochs=3, batch_size=4, shuffle=False,
                        verbose=0).history
    assert model._cpp_trainer.host_reads == 3  # 4 steps per epoch
    logs = model.evaluate([X, X2], [YA, YB], batch_size=4, verbose=0, return_dict=True)
    assert model._cpp_trainer.host_reads == 4
    # the device sums give the means the host trackers gave: the batch-size weighted mean
    losses = [model.test_on_batch([X[i:i + 4], X2[i:i + 4]], [YA[i:i + 4], YB[i:i + 4]],
                                  return_dict=True) for i in range(0, 16, 4)]
    for name in ("loss", "a_loss", "b_loss"):
        assert logs[name] == pytest.approx(np.mean([each[name] for each in losses]), rel=1e-5)
    assert len(history["loss"]) == 3


def test_one_loss_for_every_output_and_an_output_without_loss_match_keras():
    y_onehot = np.eye(3, dtype="float32")[YA]
    theirs, ours = twin_models()
    for loss, labels in (("mse", [y_onehot, YB]), ([None, "mae"], [y_onehot, YB])):
        logs = []
        for lib, model in ((keras, theirs), (gk, ours)):
            model.compile(lib.optimizers.SGD(0.05), loss=loss)
            history = model.fit([X, X2], labels, epochs=1, batch_size=16, verbose=0)
            logs.append(history.history)
        assert_logs_close(logs[1], logs[0])
    assert sorted(logs[1]) == ["loss"]  # one output has a loss: no per-output tracker


def test_several_outputs_refuse_what_keras_refuses():
    model = two_head_model(gk)
    model.compile("sgd", loss="mse")
    with pytest.raises(ValueError, match="`class_weight` is only supported for Models with a "
                                         "single output"):
        model.fit([X, X2], [YB, YB], class_weight={0: 1.0}, verbose=0)
    with pytest.raises(ValueError, match=r"y must be a list of 2 label arrays or a dict keyed "
                                         r"by those names"):
        model.fit([X, X2], YB, verbose=0)
    with pytest.raises(ValueError, match="one `sample_weight` array per output in `y`"):
        model.fit([X, X2], [YB, YB], sample_weight={"a": SW, "b": SW}, verbose=0)
    with pytest.raises(ValueError, match=r"one value per example, shape \(16,\)"):
        model.fit([X, X2], [YB, YB], sample_weight=[SW, SW[:4]], verbose=0)
    with pytest.raises(ValueError, match="`class_weight` is only supported for Models with a "
                                         "single output"):
        model.train_on_batch([X, X2], [YB, YB], class_weight={0: 1.0})
    with pytest.raises(ValueError, match=r"Invalid `metrics`.*one entry per output"):
        model.compile("sgd", loss="mse", metrics=["mae"])
    with pytest.raises(ValueError, match="`loss_weights` must match the number of losses, got 1 "
                                         "losses and 2 weights"):
        model.compile("sgd", loss="mse", loss_weights=[1.0, 2.0])
    with pytest.raises(ValueError, match=r"Expected keys \['a', 'b'\] in loss dict"):
        model.compile("sgd", loss={"a": "mse", "c": "mse"})

    # a subclassed model whose call returns a tuple has no output names to key a dict by
    unnamed = subclassed_two_heads(gk)()
    unnamed.compile("sgd", loss={"a": "mse", "b": "mse"})
    with pytest.raises(ValueError, match="outputs of this subclassed model have no names"):
        unnamed.fit(X, [YB, YB], verbose=0)


def affine_layer_class(lib):
    """A Python layer x @ kernel + bias whose weights start from given arrays, so a subclassed
    model compiled before it is built starts from the same weights in Keras and here."""

    class Affine(lib.layers.Layer):
        def __init__(self, kernel, **kwargs):
            super().__init__(**kwargs)
            self.start = kernel

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=self.start.shape, name="kernel",
                                          initializer=lambda shape, dtype=None: self.start)
            self.bias = self.add_weight(shape=self.start.shape[1:], name="bias",
                                        initializer="zeros")

        def call(self, x):
            return lib.ops.matmul(x, self.kernel) + self.bias

    return Affine


def subclassed_two_heads(lib, as_dict=False, raw_ops=False):
    """A keras.Model subclass returning (softmax head, regression head), or a dict 'q'/'p' of
    them; ``raw_ops``: its call also scales with a tensor op (traced as one layer here)."""
    affine = affine_layer_class(lib)
    start = np.random.default_rng(3)

    class TwoHeads(lib.Model):
        def __init__(self):
            super().__init__()
            self.hidden = affine(start.normal(size=(4, 5)).astype("float32") * 0.5)
            self.a = affine(start.normal(size=(5, 3)).astype("float32") * 0.5)
            self.b = affine(start.normal(size=(5, 1)).astype("float32") * 0.5)

        def call(self, x):
            h = lib.layers.ReLU()(self.hidden(x)) if not raw_ops else \
                lib.ops.relu(self.hidden(x)) * 2.0
            a, b = lib.layers.Softmax()(self.a(h)), self.b(h)
            return {"q": b, "p": a} if as_dict else (a, b)

    return TwoHeads


def test_subclassed_model_with_several_outputs_compiles_fits_and_predicts_as_keras():
    """Compiled before it is built (fit builds it), its outputs unnamed: Keras names the
    per-output losses by the loss (``mse_loss``) and the metrics without a prefix; a dict of
    outputs (a call with tensor ops, traced as one layer) is named by its keys."""
    y = [YA, YB]
    results = []
    for lib in (keras, gk):
        model = subclassed_two_heads(lib)()
        model.compile(lib.optimizers.SGD(0.1), loss=["sparse_categorical_crossentropy", "mse"],
                      loss_weights=[0.5, 2.0], metrics=["accuracy", ["mae", "accuracy"]],
                      weighted_metrics=[[], ["mae"]])
        history = model.fit(X, y, sample_weight=[SW, SW2], epochs=2, batch_size=8,
                            shuffle=False, verbose=0).history
        results.append((history, model.evaluate(X, y, verbose=0), model.predict(X, verbose=0),
                        model.get_weights()))
    (k_hist, k_eval, k_pred, k_weights), (g_hist, g_eval, g_pred, g_weights) = results
    assert sorted(g_hist) == ["accuracy", "accuracy_1", "loss", "mae", "mse_loss",
                              "sparse_categorical_crossentropy_loss", "weighted_mae"]
    assert_logs_close(g_hist, k_hist)
    np.testing.assert_allclose(g_eval, k_eval, rtol=2e-5, atol=1e-6)  # Keras's list order
    assert isinstance(g_pred, tuple) and len(g_pred) == 2
    for g, k in zip(list(g_pred) + g_weights, list(k_pred) + k_weights):
        np.testing.assert_allclose(g, k, rtol=1e-4, atol=1e-6)

    labels = {"p": YA, "q": YB}
    results = []
    for lib in (keras, gk):
        model = subclassed_two_heads(lib, as_dict=True, raw_ops=True)()
        model(X[:2])
        model.compile(lib.optimizers.SGD(0.01), loss={"p": "sparse_categorical_crossentropy",
                                                     "q": "mse"},
                      loss_weights={"p": 0.5, "q": 2.0}, metrics={"p": "accuracy", "q": ["mae"]})
        history = model.fit(X, labels, epochs=2, batch_size=8, shuffle=False, verbose=0).history
        results.append((history, model.evaluate(X, labels, verbose=0),
                        model.predict(X, verbose=0)))
    (k_hist, k_eval, k_pred), (g_hist, g_eval, g_pred) = results
    assert sorted(g_hist) == ["loss", "p_accuracy", "p_loss", "q_loss", "q_mae"]
    assert_logs_close(g_hist, k_hist)
    np.testing.assert_allclose(g_eval, k_eval, rtol=2e-5, atol=1e-6)
    assert list(g_pred) == list(k_pred) == ["q", "p"]
    for key in k_pred:
        np.testing.assert_allclose(g_pred[key], k_pred[key], rtol=1e-4, atol=1e-6)


def test_a_traced_several_output_model_inside_another_model_is_refused():
    """Called on its own it gives its outputs (above); inside another model it would give one
    packed tensor, so it is refused by name rather than silently wrong."""
    inner = subclassed_two_heads(gk, raw_ops=True)()
    got = inner(X[:2])
    assert isinstance(got, tuple) and [tuple(t.shape) for t in got] == [(2, 3), (2, 1)]
    with pytest.raises(NotImplementedError, match="several outputs.*inside another model"):
        inputs = gk.Input((4,))
        gk.Model(inputs, inner(inputs))


def test_dataset_sample_weights_and_class_weight_match_keras():
    x, y = X, YA
    theirs = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="softmax")])
    ours = gk.Sequential([gk.Input((4,)), gk.layers.Dense(3, activation="softmax")])
    ours.set_weights(theirs.get_weights())
    logs = []
    for lib, model, dataset in ((keras, theirs, tf.data.Dataset), (gk, ours, ga.data.Dataset)):
        model.compile(lib.optimizers.SGD(0.1), "sparse_categorical_crossentropy",
                      metrics=["accuracy"], weighted_metrics=["accuracy"])
        weighted = model.fit(dataset.from_tensor_slices((x, y, SW)).batch(8), epochs=2,
                             verbose=0).history
        by_class = model.fit(dataset.from_tensor_slices((x, y)).batch(8), epochs=1, verbose=0,
                             class_weight={0: 0.5, 1: 2.0, 2: 1.0}).history
        evaluated = model.evaluate(dataset.from_tensor_slices((x, y, SW)).batch(8), verbose=0,
                                   return_dict=True)
        logs.append((weighted, by_class, evaluated))
    for g, k in zip(logs[1], logs[0]):
        assert_logs_close(g, k)
    # the weights did weigh: the weighted accuracy differs from the plain one
    assert logs[1][2]["weighted_accuracy"] != pytest.approx(logs[1][2]["accuracy"])


def split_layer_class(lib, ops):
    """A Python layer whose call returns two tensors of different shapes."""

    class Split(lib.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

        def call(self, x):
            return ops.tanh(x * self.w), ops.reshape(x * 2.0, (-1, 2, 2))

    return Split


def split_model(lib, ops):
    inputs = lib.Input((4,))
    a, b = split_layer_class(lib, ops)(name="split")(inputs)
    return lib.Model(inputs, [lib.layers.Dense(1, name="d1")(a),
                              lib.layers.Dense(2, name="d2")(lib.layers.Flatten(name="f")(b))])


def test_python_layer_with_several_outputs_trains_saves_and_loads_as_keras(tmp_path):
    theirs, ours = split_model(keras, keras.ops), split_model(gk, gk.ops)
    for layer in theirs.layers:
        if layer.weights:
            weights = [np.asarray(w) * 0.7 + 0.1 for w in layer.get_weights()]
            layer.set_weights(weights)
            ours.get_layer(layer.name).set_weights(weights)
    assert [layer.name for layer in ours.layers[1:]] == ["split", "d1", "f", "d2"]
    y1, y2 = YB, RNG.normal(size=(16, 2)).astype("float32")
    results = []
    for lib, model in ((keras, theirs), (gk, ours)):
        model.compile(lib.optimizers.SGD(0.1), loss=["mse", "mse"])
        history = model.fit(X, [y1, y2], epochs=2, batch_size=8, shuffle=False, verbose=0)
        # the Split layer's weight is reached by both outputs' gradients
        results.append((history.history, model.get_layer("split").get_weights()[0]))
    assert_logs_close(results[1][0], results[0][0])
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5, atol=1e-6)
    first, second = split_layer_class(gk, gk.ops)()(X[:2])  # eagerly: the tuple
    assert first.shape == (2, 4) and second.shape == (2, 2, 2)
    path = str(tmp_path / "split.keras")
    ours.save(path)
    expected = ours.predict(X, verbose=0)
    loaded = keras.models.load_model(path, custom_objects={
        "Split": split_layer_class(keras, keras.ops)})
    for got, want in zip(loaded.predict(X, verbose=0), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    again = gk.models.load_model(path, custom_objects={"Split": split_layer_class(gk, gk.ops)})
    np.testing.assert_allclose(again.predict(X, verbose=0)[1], expected[1], rtol=1e-6)


def test_several_outputs_under_mixed_float16_train_as_keras():
    # compile wraps the optimizer in a LossScaleOptimizer: the step must take the gradients of
    # the scaled loss (unscaled ones, divided by the scale, barely train)
    y = RNG.normal(size=(16, 2)).astype("float32")
    logs = []
    for lib in (keras, gk):
        lib.mixed_precision.set_global_policy("mixed_float16")
        try:
            inputs = lib.Input((4,))
            hidden = lib.layers.Dense(8, activation="relu", kernel_initializer="ones")(inputs)
            model = lib.Model(inputs, [
                lib.layers.Dense(2, kernel_initializer="ones", name="ma")(hidden),
                lib.layers.Dense(1, kernel_initializer="ones", name="mb")(hidden)])
            model.compile(lib.optimizers.SGD(0.01), loss=["mse", "mse"])
            history = model.fit(X, [y, YB], epochs=8, batch_size=16, verbose=0).history
        finally:
            lib.mixed_precision.set_global_policy("float32")
        # trained: the loss fell by more than half (after the first step, which both skip as
        # the initial loss scale overflows float16)
        assert history["loss"][-1] < 0.5 * history["loss"][0]
        logs.append({name: values[-1] for name, values in history.items()})
    # float16 rounds differently in the two (Keras rounds each op's float16 result, gpuaccel
    # computes in float32 and rounds the layer's): the runs drift apart slowly, ~0.1% by epoch
    # 8 and ~1% by epoch 20 on these inputs, so the comparison is made early
    for name in logs[0]:
        np.testing.assert_allclose(logs[1][name], logs[0][name], rtol=5e-3, err_msg=name)
