"""``model.metrics`` as Keras 3 lists it, [loss tracker, CompileMetrics], and what a custom
``train_step`` does through it, against real Keras: the guide "Customizing what happens in
fit()" updates every metric of ``self.metrics`` with ``sample_weight=sample_weight``, and Keras
gives the weights to ``weighted_metrics`` alone (``metrics=`` stay unweighted);
``compute_metrics``/``get_metrics_result`` do the same in one call. Same weights, data and
order in both, so the histories agree to float32 rounding."""
import keras
import numpy as np
import pytest
import tensorflow as tf_real

import gpuaccel as tf
from gpuaccel import keras as gk

RNG = np.random.default_rng(21)
X = RNG.random((240, 8)).astype(np.float32)
Y = RNG.random((240, 1)).astype(np.float32)
WEIGHTS = RNG.random((240, 1)).astype(np.float32)
KERNEL = RNG.standard_normal((8, 1)).astype(np.float32) * 0.1


def guide_model(lib, tape, by_compute_metrics):
    class CustomModel(lib.Model):
        def train_step(self, data):
            x, y, sample_weight = data
            with tape() as recorder:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
            variables = self.trainable_variables
            self.optimizer.apply(recorder.gradient(loss, variables), variables)
            if by_compute_metrics:
                for metric in self.metrics:
                    if metric.name == "loss":
                        metric.update_state(loss)
                return self.compute_metrics(x, y, y_pred, sample_weight)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics}

    inputs = lib.Input((8,))
    model = CustomModel(inputs, lib.layers.Dense(1)(inputs))
    model.set_weights([KERNEL, np.zeros(1, np.float32)])
    model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse", metrics=["mae"],
                  weighted_metrics=["mse"])
    return model


@pytest.mark.parametrize("by_compute_metrics", [False, True])
def test_custom_train_step_weighs_only_weighted_metrics_as_keras(by_compute_metrics):
    histories = []
    for lib, tape in ((gk, tf.GradientTape), (keras, tf_real.GradientTape)):
        model = guide_model(lib, tape, by_compute_metrics)
        history = model.fit(X, Y, sample_weight=WEIGHTS, batch_size=40, epochs=3, shuffle=False,
                            verbose=0)
        histories.append(history.history)
        assert [m.name for m in model.metrics] == ["loss", "compile_metrics"]
        assert [m.name for m in model.metrics[1].metrics] == ["mae", "mse"]
        assert sorted(model.get_metrics_result()) == ["loss", "mae", "mse"]
    ours, theirs = histories
    assert sorted(ours) == sorted(theirs) == ["loss", "mae", "mse"]
    for name in theirs:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-5, atol=1e-7)
    # the weights reached mse and not mae: weighted and unweighted mae differ on these data
    assert abs(np.average(np.abs(Y[:, 0] - 0.5), weights=WEIGHTS[:, 0])
               - np.mean(np.abs(Y[:, 0] - 0.5))) > 1e-3


def test_compile_metrics_container_resets_and_lists_variables():
    model = gk.Sequential([gk.Input((8,)), gk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse", metrics=["mae", gk.metrics.TruePositives()])
    container = model.metrics[-1]
    assert container is model.metrics[-1]  # the same object while compile's lists stand
    container.update_state(np.ones((4, 1), np.float32), np.ones((4, 1), np.float32))
    assert float(container.result()["true_positives"]) == 4.0
    assert container.variables
    container.reset_state()
    assert float(container.result()["true_positives"]) == 0.0
    model.compile(optimizer="sgd", loss="mse")
    assert [m.name for m in model.metrics] == ["loss"]  # no container without metrics
