"""``keras.random`` (normal, uniform, dropout, SeedGenerator): Keras's shapes, dtypes, argument
errors and dropout semantics, draws with the right moments, repeatable under
``keras.utils.set_random_seed``, and fresh on every replay of a traced Python layer (a VAE's
sampling layer). The numbers themselves are not Keras's, so moments are compared, with seeds."""
import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


@pytest.fixture
def seeded():
    gk.utils.set_random_seed(7)
    yield
    gk.utils.set_random_seed(0)


def test_shapes_and_dtypes_match_keras(seeded):
    for lib in (keras, gk):
        seed = lib.random.SeedGenerator(1337)
        drawn = [lib.random.normal((3, 4), seed=seed), lib.random.uniform((5,), dtype="float16"),
                 lib.random.dropout(np.ones((2, 6), np.float32), 0.5, seed=3)]
        assert [tuple(t.shape) for t in drawn] == [(3, 4), (5,), (2, 6)]
        assert [str(np.asarray(t).dtype) for t in drawn] == ["float32", "float16", "float32"]


def test_normal_and_uniform_have_their_moments_and_repeat_under_the_seed():
    gk.utils.set_random_seed(11)
    try:
        normal = np.asarray(gk.random.normal((20000,), mean=2.0, stddev=3.0))
        uniform = np.asarray(gk.random.uniform((20000,), minval=-1.0, maxval=3.0))
        gk.utils.set_random_seed(11)
        again = np.asarray(gk.random.normal((20000,), mean=2.0, stddev=3.0))
    finally:
        gk.utils.set_random_seed(0)
    np.testing.assert_array_equal(again, normal)
    # 5 standard errors of the mean and of the standard deviation
    assert abs(normal.mean() - 2.0) < 5 * 3.0 / np.sqrt(20000)
    assert abs(normal.std() - 3.0) < 5 * 3.0 / np.sqrt(2 * 20000)
    assert -1.0 < uniform.min() and uniform.max() < 3.0
    assert abs(uniform.mean() - 1.0) < 5 * (4.0 / np.sqrt(12)) / np.sqrt(20000)


def test_dropout_zeroes_at_the_rate_and_scales_the_rest_as_keras(seeded):
    ones = np.ones((4000,), np.float32)
    for lib in (keras, gk):
        values = np.asarray(lib.random.dropout(ones, 0.25))
        np.testing.assert_allclose(np.unique(values), [0.0, 1.0 / 0.75], rtol=1e-6)
        assert abs((values == 0).mean() - 0.25) < 5 * np.sqrt(0.25 * 0.75 / 4000)
        rows = np.asarray(lib.random.dropout(np.ones((50, 6), np.float32), 0.5,
                                             noise_shape=(50, 1)))
        assert (rows == rows[:, :1]).all()  # one draw per row, broadcast along it
        assert 0 < (rows[:, 0] == 0).sum() < 50


def test_bad_arguments_are_refused_as_keras():
    for lib in (keras, gk):
        with pytest.raises(ValueError, match="rate"):
            lib.random.dropout(np.ones((3,), np.float32), 1.5)
        with pytest.raises(ValueError, match="seed"):
            lib.random.normal((2,), seed="not a seed")


def test_a_traced_sampling_layer_draws_afresh_on_every_call(seeded):
    class Sampling(gk.layers.Layer):
        def __init__(self):
            super().__init__()
            self.seed_generator = gk.random.SeedGenerator(1337)

        def call(self, z_mean):
            shape = gk.ops.shape(z_mean)
            return z_mean + gk.random.normal(shape=(shape[0], shape[1]), seed=self.seed_generator)

    layer = Sampling()
    zeros = np.zeros((64, 3), np.float32)
    first, second = np.asarray(layer(zeros)), np.asarray(layer(zeros))
    assert layer._cpp.python_calls == 1  # the second call replayed the trace
    assert not np.allclose(first, second)
    assert abs(second.mean()) < 5 / np.sqrt(second.size)
