"""A Model subclass with no ``call`` and no inputs that only drives the models it holds from
its own ``train_step``/``test_step`` (the Keras guides' GAN) fits and evaluates, as in Keras 3:
no graph of its own is built. Compared with Keras on the same weights and a deterministic
step; plus tensor-valued shapes (``tf.ones((tf.shape(x)[0], 1))``) as such steps write them."""
import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.filterwarnings("ignore:gpuaccel.*is Python")


def driver_model(lib, tf_module):
    """Holds a regressor and trains it towards ones in its train_step; test_step reports the
    same error without training."""

    class Driver(lib.Model):
        def __init__(self, regressor):
            super().__init__()
            self.regressor = regressor
            self.error_tracker = lib.metrics.Mean(name="error")

        @property
        def metrics(self):
            return [self.error_tracker]

        def compile(self, regressor_optimizer):
            super().compile()
            self.regressor_optimizer = regressor_optimizer

        def _error(self, images):
            targets = tf_module.ones((tf_module.shape(images)[0], 1))
            return lib.ops.mean(lib.ops.square(self.regressor(images) - targets))

        def train_step(self, images):
            with tf_module.GradientTape() as tape:
                error = self._error(images)
            weights = self.regressor.trainable_weights
            self.regressor_optimizer.apply(tape.gradient(error, weights), weights)
            self.error_tracker.update_state(error)
            return {"error": self.error_tracker.result()}

        def test_step(self, images):
            self.error_tracker.update_state(self._error(images))
            return {"error": self.error_tracker.result()}

    regressor = lib.Sequential([lib.Input((3,)), lib.layers.Dense(1)])
    return Driver(regressor)


def test_a_model_without_call_fits_and_evaluates_by_its_own_steps_as_keras():
    theirs, ours = driver_model(keras, tf), driver_model(gk, gt)
    ours.regressor.set_weights(theirs.regressor.get_weights())
    theirs.compile(keras.optimizers.SGD(0.1))
    ours.compile(gk.optimizers.SGD(0.1))
    x = np.random.default_rng(0).normal(size=(12, 3)).astype(np.float32)
    h_theirs = theirs.fit(tf.data.Dataset.from_tensor_slices(x).batch(4), epochs=2, verbose=0)
    h_ours = ours.fit(gt.data.Dataset.from_tensor_slices(x).batch(4), epochs=2, verbose=0)
    np.testing.assert_allclose(h_ours.history["error"], h_theirs.history["error"], rtol=1e-5)
    for mine, expected in zip(ours.regressor.get_weights(), theirs.regressor.get_weights()):
        np.testing.assert_allclose(mine, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        ours.evaluate(gt.data.Dataset.from_tensor_slices(x).batch(4), verbose=0),
        theirs.evaluate(tf.data.Dataset.from_tensor_slices(x).batch(4), verbose=0), rtol=1e-5)


def test_shapes_may_hold_integer_tensors_as_in_tensorflow():
    x = np.zeros((5, 3), np.float32)
    for lib in (tf, gt):
        batch = lib.shape(lib.constant(x))
        assert tuple(lib.ones((batch[0], 1)).shape) == (5, 1)
        assert tuple(lib.zeros(batch).shape) == (5, 3)
        assert tuple(gk.random.uniform(gt.shape(gt.constant(x))).shape) == (5, 3)
    with pytest.raises(TypeError, match="shape entries must be integers"):
        gt.ones((gt.constant(2.0), 1))
