"""Python-defined keras.layers.Layer subclasses (build with add_weight, call with tensor ops,
add_loss, get_config) train, evaluate and predict as in real Keras with the same weights and
inputs, while their Python call() runs once per input signature: the C++ step replays the
traced ops (cpp/nn/op_trace.h). A call() that cannot be traced runs eagerly and warns why."""
import warnings

import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")


def custom_layers(lib, matmul, reduce_sum, relu):
    """The Keras guide's first custom layers, written against `lib` (gpuaccel.keras or keras)
    with that library's ops."""

    class Linear(lib.layers.Layer):
        def __init__(self, units=32, activation=False, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.activation = activation

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                     initializer="random_normal", trainable=True, name="w")
            self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True,
                                     name="b")

        def call(self, inputs):
            out = matmul(inputs, self.w) + self.b
            return relu(out) if self.activation else out

        def get_config(self):
            config = super().get_config()
            config.update({"units": self.units, "activation": self.activation})
            return config

    class ActivityRegularizationLayer(lib.layers.Layer):
        def __init__(self, rate=1e-2, **kwargs):
            super().__init__(**kwargs)
            self.rate = rate

        def call(self, inputs):
            self.add_loss(self.rate * reduce_sum(inputs))
            return inputs

    return Linear, ActivityRegularizationLayer


def gpuaccel_layers():
    return custom_layers(gk, gt.matmul, gt.reduce_sum, gt.nn.relu)


def keras_layers():
    return custom_layers(keras, keras.ops.matmul, keras.ops.sum, keras.ops.relu)


def sequential(lib, layers):
    Linear, ActivityRegularization = layers
    return lib.Sequential([lib.Input((5,)), Linear(8, activation=True), ActivityRegularization(),
                           Linear(3), lib.layers.Dense(1)])


def data(n=48, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 5)).astype(np.float32), rng.normal(size=(n, 1)).astype(np.float32)


def twin_models():
    ours, theirs = sequential(gk, gpuaccel_layers()), sequential(keras, keras_layers())
    ours.set_weights(theirs.get_weights())
    return ours, theirs


def detached(t):
    return gt.stop_gradient(t).numpy()


def test_linear_layer_eager_call_matches_keras_and_traces_once():
    Linear, _ = gpuaccel_layers()
    KLinear, _ = keras_layers()
    ours, theirs = Linear(4), KLinear(4)
    x = np.random.default_rng(1).normal(size=(6, 3)).astype(np.float32)
    expected = np.asarray(theirs(x))
    ours.build((None, 3))
    ours.set_weights(theirs.get_weights())
    np.testing.assert_allclose(detached(ours(x)), expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(detached(ours(x)), expected, rtol=1e-6, atol=1e-6)
    assert ours._cpp.python_calls == 1  # the second call replayed the trace
    assert [w.shape for w in ours.weights] == [(3, 4), (4,)]
    assert len(ours.trainable_weights) == 2 and ours.count_params() == 16


def test_fit_evaluate_predict_match_keras_with_add_loss():
    ours, theirs = twin_models()
    x, y = data()
    for model in (ours, theirs):
        model.compile(optimizer=(gk if model is ours else keras).optimizers.SGD(0.05), loss="mse")
    h_ours = ours.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0)
    h_theirs = theirs.fit(x, y, epochs=3, batch_size=16, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.evaluate(x, y, verbose=0), theirs.evaluate(x, y, verbose=0),
                               rtol=1e-4)
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    # 3 epochs x 3 batches of 16, then evaluate and predict: one trace per signature
    # (training=True; training=False for evaluate and predict, whose batches differ in size).
    linear = ours.layers[0]
    assert linear._cpp.python_calls == linear._cpp.traced_signatures <= 3
    assert linear._cpp.eager_reason == ""


def test_add_loss_is_part_of_the_training_loss():
    _, ActivityRegularization = gpuaccel_layers()
    model = gk.Sequential([gk.Input((4,)), ActivityRegularization(rate=0.5)])
    model.compile(optimizer="sgd", loss="mse")
    x = np.ones((8, 4), np.float32)
    y = np.ones((8, 4), np.float32)
    # mse is 0 (identity layer), the added loss 0.5 * sum(x) = 16
    assert model.evaluate(x, y, batch_size=8, verbose=0) == pytest.approx(16.0)
    model(x)
    assert [float(detached(v)) for v in model.losses] == [16.0]


def test_functional_model_and_gradient_tape_match_keras():
    (Linear, Reg), (KLinear, KReg) = gpuaccel_layers(), keras_layers()

    def functional(lib, linear, reg):
        inputs = lib.Input((5,))
        return lib.Model(inputs, linear(2)(reg()(linear(6, activation=True)(inputs))))

    ours, theirs = functional(gk, Linear, Reg), functional(keras, KLinear, KReg)
    ours.set_weights(theirs.get_weights())
    x, _ = data(10)
    y = np.zeros((10, 2), np.float32)
    with gt.GradientTape() as tape:
        loss = gt.reduce_mean(gt.square(ours(x) - y)) + gt.add_n(ours.losses)
    grads = tape.gradient(loss, ours.trainable_weights)
    with tf.GradientTape() as ktape:
        kloss = tf.reduce_mean(tf.square(theirs(x) - y)) + tf.add_n(theirs.losses)
    kgrads = ktape.gradient(kloss, theirs.trainable_weights)
    assert float(detached(loss)) == pytest.approx(float(kloss), rel=1e-5)
    for g, k in zip(grads, kgrads):
        np.testing.assert_allclose(g.numpy(), k.numpy(), rtol=1e-4, atol=1e-6)


def test_config_round_trip_and_weights_h5_to_keras(tmp_path):
    ours, theirs = twin_models()
    x, y = data()
    ours.compile(optimizer="adam", loss="mse")
    ours.fit(x, y, epochs=1, batch_size=16, verbose=0)
    path = str(tmp_path / "custom.weights.h5")
    ours.save_weights(path)
    theirs.load_weights(path)
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    fresh = sequential(gk, gpuaccel_layers())
    fresh.load_weights(path)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), ours.predict(x, verbose=0), rtol=1e-6)

    Linear, _ = gpuaccel_layers()
    layer = Linear(7, activation=True, name="lin")
    config = layer.get_config()
    assert config["units"] == 7 and config["activation"] is True and config["name"] == "lin"
    clone = Linear.from_config(config)
    assert (clone.units, clone.activation, clone.name) == (7, True, "lin")


def test_untraceable_call_falls_back_to_python_and_says_why():
    class Branchy(gk.layers.Layer):
        def call(self, inputs):
            if float(gt.reduce_sum(inputs)) > 0:  # Python control flow on a tensor value
                return inputs * 2.0
            return inputs * -1.0

    layer = Branchy()
    with pytest.warns(RuntimeWarning, match="reads a tensor's value on the host"):
        first = layer(np.ones((2, 2), np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once per layer, not per call
        second = layer(-np.ones((2, 2), np.float32))
    np.testing.assert_allclose(detached(first), 2.0)
    np.testing.assert_allclose(detached(second), 1.0)  # the other branch: it was not baked in
    assert layer._cpp.python_calls == 2
    assert "host" in layer._cpp.eager_reason


def test_weights_options_and_errors():
    class Scale(gk.layers.Layer):
        def build(self, input_shape):
            self.count = self.add_weight(shape=(), initializer="zeros", trainable=False,
                                         name="count")
            self.scale = self.add_weight(shape=(input_shape[-1],),
                                         initializer=lambda shape, dtype=None: np.full(shape, 0.5),
                                         name="scale")

        def call(self, inputs, training=None):
            return inputs * self.scale if training else inputs * self.scale * 2.0

    layer = Scale()
    x = np.ones((3, 2), np.float32)
    np.testing.assert_allclose(detached(layer(x)), 1.0)
    np.testing.assert_allclose(detached(layer(x, training=True)), 0.5)
    assert layer._cpp.python_calls == 2  # one trace per value of `training`
    # Keras's order: trainable weights first
    assert [w.shape for w in layer.trainable_weights] == [(2,)]
    assert [w.shape for w in layer.non_trainable_weights] == [()]
    assert [tuple(w.shape) for w in layer.weights] == [(2,), ()]

    class NoCall(gk.layers.Layer):
        pass

    with pytest.raises(NotImplementedError, match="define call"):
        NoCall()
    with pytest.raises(ValueError, match="Could not interpret initializer"):
        Scale().add_weight(shape=(2,), initializer=3)


def subclassed_model(lib, relu):
    """TF's expert-quickstart style: layers held by attributes, tensor ops between them."""

    class MyModel(lib.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d1 = lib.layers.Dense(16, activation="tanh")
            self.d2 = lib.layers.Dense(3)

        def call(self, x, training=None):
            h = self.d1(x)
            return self.d2(h * 0.5 + relu(h))

    return MyModel()


def test_subclassed_model_with_tensor_ops_trains_as_keras_and_traces_once():
    ours, theirs = subclassed_model(gk, gt.nn.relu), subclassed_model(keras, keras.ops.relu)
    x, _ = data(48)
    y = np.random.default_rng(3).integers(0, 3, 48)
    theirs(x[:1])
    ours(x[:1])
    ours.d1.set_weights(theirs.d1.get_weights())
    ours.d2.set_weights(theirs.d2.get_weights())
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.1), metrics=["accuracy"],
                      loss=lib.losses.SparseCategoricalCrossentropy(from_logits=True))
    h_ours = ours.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    h_theirs = theirs.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    assert [layer.name for layer in ours.layers] == [ours.d1.name, ours.d2.name]
    calls = ours._call_layer_cpp
    assert calls.python_calls == calls.traced_signatures <= 4 and calls.eager_reason == ""


def python_losses(lib, mean, square, abs_, minimum):
    """A loss function and a keras.losses.Loss subclass written against `lib`'s ops."""

    def my_mse(y_true, y_pred):
        return mean(square(y_true - y_pred), axis=-1)

    class ClippedAbs(lib.losses.Loss):
        def __init__(self, limit=0.5, name="clipped_abs", **kwargs):
            super().__init__(name=name, **kwargs)
            self.limit = limit

        def call(self, y_true, y_pred):
            return mean(minimum(abs_(y_true - y_pred), self.limit), axis=-1)

    return my_mse, ClippedAbs


@pytest.mark.parametrize("which", ["function", "subclass"])
def test_python_losses_in_compile_train_as_keras_and_trace_once(which):
    ours_fn, OursLoss = python_losses(gk, gt.reduce_mean, gt.square, gt.abs, gt.minimum)
    theirs_fn, TheirsLoss = python_losses(keras, keras.ops.mean, keras.ops.square, keras.ops.abs,
                                          keras.ops.minimum)
    ours_loss = ours_fn if which == "function" else OursLoss(0.3)
    theirs_loss = theirs_fn if which == "function" else TheirsLoss(0.3)
    theirs = keras.Sequential([keras.Input((5,)), keras.layers.Dense(4, activation="relu"),
                               keras.layers.Dense(2)])
    ours = gk.Sequential([gk.Input((5,)), gk.layers.Dense(4, activation="relu"),
                          gk.layers.Dense(2)])
    ours.set_weights(theirs.get_weights())
    x, _ = data(48)
    y = np.random.default_rng(4).normal(size=(48, 2)).astype(np.float32)
    ours.compile(optimizer=gk.optimizers.SGD(0.1), loss=ours_loss)
    theirs.compile(optimizer=keras.optimizers.SGD(0.1), loss=theirs_loss)
    h_ours = ours.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    h_theirs = theirs.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-5)
    np.testing.assert_allclose(ours.evaluate(x, y, verbose=0), theirs.evaluate(x, y, verbose=0),
                               rtol=1e-5)
    # batches of 16 (fit, and evaluate's last) and 32 (evaluate): two traces, no other call
    traced = ours.loss._traced
    assert traced.python_calls == traced.traced_signatures == 2 and traced.eager_reason == ""
    # called directly, as Keras's Loss objects are: reduced to the mean
    prediction = theirs.predict(x, verbose=0)
    if which == "function":
        expected = float(np.mean(np.asarray(theirs_fn(y, prediction))))
        direct = gk.losses.LossFunctionWrapper(ours_fn)
    else:
        expected, direct = float(theirs_loss(y, prediction)), ours_loss
    assert float(direct(y, ours.predict(x, verbose=0))) == pytest.approx(expected, rel=1e-5)


def weighted_twins():
    theirs = keras.Sequential([keras.Input((5,)), keras.layers.Dense(6, activation="relu"),
                               keras.layers.Dense(3)])
    ours = gk.Sequential([gk.Input((5,)), gk.layers.Dense(6, activation="relu"),
                          gk.layers.Dense(3)])
    ours.set_weights(theirs.get_weights())
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.1), metrics=["accuracy"],
                      loss=lib.losses.SparseCategoricalCrossentropy(from_logits=True))
    return ours, theirs


@pytest.mark.parametrize("kind", ["sample_weight", "class_weight"])
def test_sample_and_class_weights_and_validation_split_match_keras(kind):
    x, _ = data(60)
    y = np.random.default_rng(5).integers(0, 3, 60)
    if kind == "sample_weight":
        weights = {"sample_weight": np.random.default_rng(6).uniform(0, 2, 60).astype(np.float32)}
    else:
        weights = {"class_weight": {0: 0.5, 1: 2.0, 2: 1.0}}
    ours, theirs = weighted_twins()
    h_ours = ours.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0,
                      validation_split=0.2, **weights)
    h_theirs = theirs.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0,
                          validation_split=0.2, **weights)
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(h_ours.history[key], h_theirs.history[key], rtol=1e-4,
                                   err_msg=key)
    if kind == "sample_weight":
        w = weights["sample_weight"]
        weighted = ours.evaluate(x, y, sample_weight=w, verbose=0)
        np.testing.assert_allclose(weighted, theirs.evaluate(x, y, sample_weight=w, verbose=0),
                                   rtol=1e-4)
        # the weights are applied: the weighted loss is not the plain one
        assert abs(weighted[0] - ours.evaluate(x, y, verbose=0)[0]) > 1e-4


def test_sample_weight_errors():
    ours, _ = weighted_twins()
    x, _ = data(8)
    y = np.zeros(8, np.int64)
    with pytest.raises(ValueError, match="one value per example"):
        ours.fit(x, y, sample_weight=np.ones(7), verbose=0)
    with pytest.raises(ValueError, match="both `class_weight` and `sample_weight`"):
        ours.fit(x, y, sample_weight=np.ones(8), class_weight={0: 1.0}, verbose=0)
    with pytest.raises(ValueError, match="no weight for classes \\[0\\]"):
        ours.fit(x, y, class_weight={1: 1.0}, verbose=0)


def custom_step_model(lib, tape_cls):
    """Keras 3's "customizing what happens in fit" guide: train_step and test_step with
    compute_loss, the optimizer's apply and self.metrics."""

    class CustomModel(lib.Model):
        def train_step(self, data):
            x, y = data
            with tape_cls() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = lib.Input((5,))
    return CustomModel(inputs, lib.layers.Dense(1)(lib.layers.Dense(4, activation="relu")(inputs)))


def test_overridden_train_step_runs_eagerly_as_keras():
    theirs, ours = custom_step_model(keras, tf.GradientTape), custom_step_model(gk, gt.GradientTape)
    ours.set_weights(theirs.get_weights())
    x, y = data(48)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    with pytest.warns(RuntimeWarning, match=r"train_step\(\) is Python"):
        h_ours = ours.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    h_theirs = theirs.fit(x, y, epochs=2, batch_size=16, shuffle=False, verbose=0)
    for key in ("loss", "mae"):
        np.testing.assert_allclose(h_ours.history[key], h_theirs.history[key], rtol=1e-4,
                                   err_msg=key)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)
    with pytest.warns(RuntimeWarning, match=r"test_step\(\) is Python"):
        evaluated = ours.evaluate(x, y, verbose=0)
    np.testing.assert_allclose(evaluated, theirs.evaluate(x, y, verbose=0), rtol=1e-4)


def weighted_step_model(lib, tape_cls):
    """A train_step that unpacks (x, y, sample_weight) and weighs the loss with them, as
    fit(sample_weight=...) hands them to it."""

    class WeightedStepModel(lib.Model):
        def train_step(self, data):
            x, y, sample_weight = data
            with tape_cls() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
            self.optimizer.apply(tape.gradient(loss, self.trainable_variables),
                                 self.trainable_variables)
            for metric in self.metrics:  # the loss tracker (compiled without metrics)
                metric.update_state(loss)
            return {m.name: m.result() for m in self.metrics}

    inputs = lib.Input((5,))
    return WeightedStepModel(inputs, lib.layers.Dense(1)(inputs))


def test_overridden_train_step_gets_fits_sample_weights_as_keras():
    theirs, ours = weighted_step_model(keras, tf.GradientTape), weighted_step_model(gk, gt.GradientTape)
    ours.set_weights(theirs.get_weights())
    x, y = data(32)
    weights = np.random.default_rng(3).uniform(0.0, 2.0, size=32).astype(np.float32)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse")
    with pytest.warns(RuntimeWarning, match=r"train_step\(\) is Python"):
        h_ours = ours.fit(x, y, sample_weight=weights, batch_size=16, shuffle=False, verbose=0)
    h_theirs = theirs.fit(x, y, sample_weight=weights, batch_size=16, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_keras_archive_with_python_layers_loads_here_and_in_keras(tmp_path):
    ours, _ = twin_models()
    x, y = data()
    ours.compile(optimizer="adam", loss="mse")
    ours.fit(x, y, epochs=1, batch_size=16, verbose=0)
    path = str(tmp_path / "custom.keras")
    ours.save(path)
    expected = ours.predict(x, verbose=0)
    Linear, Reg = gpuaccel_layers()
    with pytest.raises(NotImplementedError, match="custom_objects"):
        gk.models.load_model(path)
    again = gk.models.load_model(path, custom_objects={"Linear": Linear,
                                                       "ActivityRegularizationLayer": Reg})
    np.testing.assert_allclose(again.predict(x, verbose=0), expected, rtol=1e-6)
    assert again.layers[0].units == 8 and again.layers[0].activation is True
    KLinear, KReg = keras_layers()
    theirs = keras.models.load_model(path, custom_objects={"Linear": KLinear,
                                                           "ActivityRegularizationLayer": KReg})
    np.testing.assert_allclose(theirs.predict(x, verbose=0), expected, rtol=1e-4, atol=1e-5)


def test_python_layer_under_mixed_precision_autocasts_its_weights_as_keras():
    Linear, _ = gpuaccel_layers()
    KLinear, _ = keras_layers()
    x = np.random.default_rng(7).normal(size=(4, 5)).astype(np.float32)
    theirs = KLinear(3, dtype="mixed_bfloat16")
    expected = np.asarray(theirs(x)).astype(np.float32)
    ours = Linear(3, dtype="mixed_bfloat16")
    ours.build((None, 5))
    ours.set_weights(theirs.get_weights())
    out = ours(x)
    assert out.dtype == gt.bfloat16 and ours.weights[0].dtype == gt.float32
    np.testing.assert_allclose(detached(out).astype(np.float32), expected, rtol=2e-2, atol=2e-2)
    with gt.GradientTape() as tape:
        loss = gt.reduce_sum(gt.cast(ours(x), "float32"))
    grads = tape.gradient(loss, ours.trainable_weights)
    assert [g.dtype for g in grads] == [gt.float32, gt.float32]  # the masters' gradients


def test_python_layer_with_two_inputs_in_a_functional_model():
    class Gate(gk.layers.Layer):
        def build(self, input_shape):
            self.scale = self.add_weight(shape=(input_shape[0][-1],), initializer="ones")

        def call(self, inputs):
            a, b = inputs
            return a * gt.sigmoid(b) * self.scale

    a_in, b_in = gk.Input((3,)), gk.Input((3,))
    model = gk.Model([a_in, b_in], gk.layers.Dense(1)(Gate()([a_in, b_in])))
    a = np.random.default_rng(8).normal(size=(6, 3)).astype(np.float32)
    b = np.random.default_rng(9).normal(size=(6, 3)).astype(np.float32)
    kernel, bias = model.layers[-1].get_weights()
    expected = (a / (1 + np.exp(-b))) @ kernel + bias
    np.testing.assert_allclose(model.predict([a, b], verbose=0), expected, rtol=1e-5, atol=1e-6)
    model.compile(optimizer="sgd", loss="mse")
    model.fit([a, b], np.zeros((6, 1), np.float32), epochs=2, batch_size=3, verbose=0)
    gate = model.layers[2]  # after the two InputLayers
    assert isinstance(gate, Gate)
    assert gate._cpp.python_calls == gate._cpp.traced_signatures == 2  # predict, fit
