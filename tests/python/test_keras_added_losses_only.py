"""A model compiled without a loss (``compile(optimizer=...)``) trains on the losses its layers
add (add_loss, regularizers) as in Keras 3, needs no labels (``fit(x)``), logs their sum as
"loss", and without any added loss raises Keras's "No loss to compute" error before changing a
weight. Each case runs the same program on gpuaccel.keras and Keras with the same weights."""
import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")

pytestmark = pytest.mark.filterwarnings("ignore:Gradients do not exist")  # Keras: the 2nd Dense

NO_LOSS = "No loss to compute. Provide a `loss` argument in `compile()`."


def output_penalty_model(lib):
    """Dense -> a Python layer that adds a penalty on its input (the Dense output) and passes
    it on -> Dense: only the added loss gives the weights gradients."""

    class OutputPenalty(lib.layers.Layer):
        def call(self, inputs):
            self.add_loss(0.05 * lib.ops.sum(inputs * inputs))
            return inputs

    inputs = lib.Input((4,))
    hidden = OutputPenalty()(lib.layers.Dense(3)(inputs))
    return lib.Model(inputs, lib.layers.Dense(2)(hidden))


def twins(build):
    theirs = build(keras)
    ours = build(gk)
    ours.set_weights(theirs.get_weights())
    return ours, theirs


def data(rows=12, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(rows, 4)).astype(np.float32),
            rng.normal(size=(rows, 2)).astype(np.float32))


def compile_without_loss(ours, theirs, **kwargs):
    ours.compile(optimizer=gk.optimizers.SGD(0.1), **kwargs)
    theirs.compile(optimizer=keras.optimizers.SGD(0.1), **kwargs)


def assert_same_weights(ours, theirs):
    for mine, expected in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(mine, expected, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("with_labels", [True, False], ids=["fit_x_y", "fit_x"])
def test_fit_trains_on_the_added_losses_alone(with_labels):
    ours, theirs = twins(output_penalty_model)
    compile_without_loss(ours, theirs)
    x, y = data()
    labels = (y,) if with_labels else ()
    logs = [model.fit(x, *labels, batch_size=4, epochs=2, shuffle=False, verbose=0).history
            for model in (ours, theirs)]
    assert ours.loss is None and list(logs[0]) == ["loss"]
    np.testing.assert_allclose(logs[0]["loss"], logs[1]["loss"], rtol=1e-4)
    assert logs[0]["loss"][1] < logs[0]["loss"][0]  # it did train
    assert_same_weights(ours, theirs)
    np.testing.assert_allclose(ours.evaluate(x, *labels, verbose=0),
                               theirs.evaluate(x, *labels, verbose=0), rtol=1e-4)


def test_a_dataset_of_inputs_alone_trains():
    ours, theirs = twins(output_penalty_model)
    compile_without_loss(ours, theirs)
    x, _ = data()
    ours.fit(gt.data.Dataset.from_tensor_slices(x).batch(4), verbose=0)
    theirs.fit(x, batch_size=4, shuffle=False, verbose=0)
    assert_same_weights(ours, theirs)


def test_a_regularizer_is_an_added_loss_too():
    def build(lib):
        return lib.Sequential([lib.Input((4,)),
                               lib.layers.Dense(3, kernel_regularizer=lib.regularizers.l2(0.1))])

    ours, theirs = twins(build)
    compile_without_loss(ours, theirs)
    x, y = data()
    losses = [model.fit(x, y, batch_size=6, shuffle=False, verbose=0).history["loss"]
              for model in (ours, theirs)]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-4)
    assert_same_weights(ours, theirs)


def test_compute_loss_sums_the_added_losses():
    ours, theirs = twins(output_penalty_model)
    compile_without_loss(ours, theirs)
    x, y = data(rows=5)
    values = []
    for model in (ours, theirs):
        y_pred = model(x)  # the call whose added losses compute_loss sums
        values.append(float(np.asarray(model.compute_loss(x, y, y_pred))))
    np.testing.assert_allclose(values[0], values[1], rtol=1e-5)


def test_without_any_loss_every_step_raises_keras_error_before_an_update():
    def build(lib):
        return lib.Sequential([lib.Input((4,)), lib.layers.Dense(2)])

    ours, theirs = twins(build)
    compile_without_loss(ours, theirs, metrics=["mae"])
    x, y = data()
    before = ours.get_weights()
    calls = [lambda m: m.fit(x, y, verbose=0), lambda m: m.evaluate(x, y, verbose=0),
             lambda m: m.train_on_batch(x, y), lambda m: m.test_on_batch(x, y),
             lambda m: m.compute_loss(x, y, m(x))]
    for call in calls:
        messages = []
        for model in (ours, theirs):
            with pytest.raises(ValueError) as raised:
                call(model)
            messages.append(str(raised.value))
        assert messages[0] == messages[1] == NO_LOSS
    for mine, expected in zip(ours.get_weights(), before):
        np.testing.assert_array_equal(mine, expected)


def penalised_subclassed_model(lib):
    """A subclassed model whose own call adds a loss (Keras's Model.add_loss), as the guides'
    VAE adds its KL term."""

    class PenalisedModel(lib.Model):
        def __init__(self):
            super().__init__()
            self.hidden = lib.layers.Dense(4)
            self.head = lib.layers.Dense(2)

        def call(self, inputs):
            hidden = self.hidden(inputs)
            self.add_loss(0.1 * lib.ops.mean(lib.ops.square(hidden)))
            return self.head(hidden)

    return PenalisedModel()


@pytest.mark.parametrize("loss", ["mse", None])
def test_a_subclassed_models_own_add_loss_trains_as_keras(loss):
    x, y = data()
    theirs, ours = penalised_subclassed_model(keras), penalised_subclassed_model(gk)
    theirs(x[:2])
    ours(x[:2])
    ours.set_weights(theirs.get_weights())
    ours(x)
    theirs(x)
    np.testing.assert_allclose([float(np.asarray(v)) for v in ours.losses],
                               [float(v) for v in theirs.losses], rtol=1e-5)
    ours.compile(optimizer=gk.optimizers.SGD(0.1), loss=loss)
    theirs.compile(optimizer=keras.optimizers.SGD(0.1), loss=loss)
    histories = [model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0).history["loss"]
                 for model in (ours, theirs)]
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-4)
    assert_same_weights(ours, theirs)


def endpoint_model(lib):
    """A layer called with the targets as a second argument adds the loss itself (the
    "endpoint" pattern): the model, compiled without a loss, trains on it from a dict of
    inputs and no labels."""

    class CrossentropyEndpoint(lib.layers.Layer):
        def call(self, targets, logits):
            self.add_loss(lib.ops.mean(lib.ops.square(targets - lib.ops.sigmoid(logits))))
            return lib.ops.sigmoid(logits)

    features, targets = lib.Input((4,), name="features"), lib.Input((2,), name="targets")
    logits = lib.layers.Dense(2)(features)
    return lib.Model([features, targets], CrossentropyEndpoint()(targets, logits))


def test_a_layer_called_with_its_targets_gives_the_loss_of_a_model_without_one():
    x, y = data()
    ours, theirs = twins(endpoint_model)
    compile_without_loss(ours, theirs)
    inputs = {"features": x, "targets": (y > 0).astype(np.float32)}
    losses = [model.fit(inputs, batch_size=4, shuffle=False, verbose=0).history["loss"]
              for model in (ours, theirs)]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-4)
    assert_same_weights(ours, theirs)
