"""gpuaccel.keras.activations, .initializers, .optimizers.schedules, .regularizers and
.constraints against real Keras 3 (TensorFlow backend) with the same inputs: activation values
and gradients (GradientTape on both sides), schedule values per step and a short fit's loss
history, initializer statistics against Keras's formulas (seeded draws, tolerances from the
sample size), regularizer and constraint values, get/serialize/deserialize and config round
trips."""
import math

import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

A, KA = gk.activations, keras.activations


def close(got, want, rel=1e-5):
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(np.abs(want).max(), 1e-6)
    np.testing.assert_allclose(got, want, rtol=0, atol=rel * scale)


# A grid that stays away from every kink the activations have (0, +-0.5, +-0.6, +-0.7, +-1,
# +-2.5, +-3, 6), so the gradients of both sides are the same one-sided derivative.
X = np.linspace(-4.65, 4.65, 32).astype(np.float32).reshape(4, 8)
UPSTREAM = np.random.default_rng(3).standard_normal(X.shape).astype(np.float32)

ACTIVATION_CASES = [
    (A.relu, KA.relu, {}),
    (A.relu, KA.relu, dict(negative_slope=0.1)),
    (A.relu, KA.relu, dict(max_value=2.5)),
    (A.relu, KA.relu, dict(max_value=6.0)),
    (A.relu, KA.relu, dict(threshold=0.6)),
    (A.relu, KA.relu, dict(negative_slope=0.1, max_value=2.5, threshold=0.6)),
    (A.relu6, KA.relu6, {}),
    (A.leaky_relu, KA.leaky_relu, {}),
    (A.leaky_relu, KA.leaky_relu, dict(negative_slope=0.3)),
    (A.sigmoid, KA.sigmoid, {}),
    (A.hard_sigmoid, KA.hard_sigmoid, {}),
    (A.hard_silu, KA.hard_silu, {}),
    (A.hard_swish, KA.hard_swish, {}),
    (A.silu, KA.silu, {}),
    (A.swish, KA.swish, {}),
    (A.gelu, KA.gelu, {}),
    (A.gelu, KA.gelu, dict(approximate=True)),
    (A.elu, KA.elu, {}),
    (A.elu, KA.elu, dict(alpha=0.5)),
    (A.selu, KA.selu, {}),
    (A.celu, KA.celu, {}),
    (A.celu, KA.celu, dict(alpha=0.7)),
    (A.glu, KA.glu, {}),
    (A.glu, KA.glu, dict(axis=0)),
    (A.softplus, KA.softplus, {}),
    (A.softsign, KA.softsign, {}),
    (A.softmax, KA.softmax, {}),
    (A.softmax, KA.softmax, dict(axis=0)),
    (A.log_softmax, KA.log_softmax, {}),
    (A.log_softmax, KA.log_softmax, dict(axis=0)),
    (A.tanh, KA.tanh, {}),
    (A.tanh_shrink, KA.tanh_shrink, {}),
    (A.hard_tanh, KA.hard_tanh, {}),
    (A.exponential, KA.exponential, {}),
    (A.linear, KA.linear, {}),
    (A.mish, KA.mish, {}),
    (A.log_sigmoid, KA.log_sigmoid, {}),
    (A.sparse_plus, KA.sparse_plus, {}),
    (A.sparse_sigmoid, KA.sparse_sigmoid, {}),
    (A.squareplus, KA.squareplus, {}),
    (A.squareplus, KA.squareplus, dict(b=1.5)),
    (A.soft_shrink, KA.soft_shrink, {}),
    (A.soft_shrink, KA.soft_shrink, dict(threshold=0.7)),
    (A.hard_shrink, KA.hard_shrink, {}),
    (A.hard_shrink, KA.hard_shrink, dict(threshold=0.7)),
    (A.threshold, KA.threshold, dict(threshold=0.6, default_value=-0.4)),
]


def _case_id(case):
    ours, _, kwargs = case
    return ours.__name__ + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.mark.parametrize("ours,theirs,kwargs", ACTIVATION_CASES,
                         ids=[_case_id(c) for c in ACTIVATION_CASES])
def test_activation_values_and_gradients_match_keras(ours, theirs, kwargs):
    x_ref = tf.Variable(X)
    with tf.GradientTape() as tape:
        y_ref = theirs(x_ref, **kwargs)
    g_ref = tape.gradient(y_ref, x_ref, output_gradients=tf.constant(UPSTREAM[:y_ref.shape[0],
                                                                              :y_ref.shape[1]]))
    x = ga.tensor(X)
    x.requires_grad = True
    with ga.GradientTape() as tape:
        y = ours(x, **kwargs)
    g = tape.gradient(y, x, output_gradients=ga.tensor(UPSTREAM[:y_ref.shape[0],
                                                                :y_ref.shape[1]]))
    close(y.detach().numpy(), y_ref.numpy())
    close(g.numpy(), g_ref.numpy(), rel=1e-4)


def test_activation_names_get_serialize_deserialize_as_keras():
    names = sorted(n for n in dir(KA) if not n.startswith("_") and n not in
                   ("get", "serialize", "deserialize", "sparsemax"))
    assert A.names() == names  # every Keras activation but sparsemax (no sort op yet)
    for name in names:
        ours, theirs = A.get(name), KA.get(name)
        assert ours.__name__ == theirs.__name__, name
        assert A.serialize(ours) == KA.serialize(theirs), name
        assert A.deserialize(KA.serialize(theirs)) is ours
    assert A.serialize(A.swish) == KA.serialize(KA.swish) == "silu"
    assert A.get(None) is A.linear and KA.get(None) is KA.linear
    assert A.get(keras.saving.serialize_keras_object(KA.relu)) is A.relu
    assert A.get(A.mish) is A.mish
    for bad in ("relux", ""):
        with pytest.raises(ValueError, match="Could not interpret activation function"):
            A.get(bad)
        with pytest.raises(ValueError, match="Could not interpret activation function"):
            KA.get(bad)


def test_glu_odd_axis_is_refused_as_keras():
    with pytest.raises(ValueError, match="axis size must be divisible by 2"):
        A.glu(np.zeros((2, 3), np.float32))
    with pytest.raises(ValueError, match="axis size must be divisible by 2"):
        KA.glu(np.zeros((2, 3), np.float32))


def _copy_weights(ours, theirs):
    weights = [np.random.default_rng(i).standard_normal(w.shape).astype(np.float32) * 0.5
               for i, w in enumerate(theirs.weights)]
    theirs.set_weights(weights)
    ours.set_weights(weights)


@pytest.mark.parametrize("name", ["mish", "hard_silu", "celu", "squareplus", "tanh_shrink"])
def test_activation_layer_runs_names_the_cpp_layers_lack(name):
    x = np.random.default_rng(5).standard_normal((3, 6)).astype(np.float32)
    ours = gk.Sequential([gk.Input((6,)), gk.layers.Dense(4), gk.layers.Activation(name)])
    theirs = keras.Sequential([keras.Input((6,)), keras.layers.Dense(4),
                               keras.layers.Activation(name)])
    _copy_weights(ours, theirs)
    close(ours.predict(x, verbose=0), theirs.predict(x, verbose=0))
    assert ours.layers[-1].get_config()["activation"] == \
        theirs.layers[-1].get_config()["activation"] == name


def test_dense_takes_keras_activation_functions():
    x = np.random.default_rng(6).standard_normal((3, 5)).astype(np.float32)
    ours = gk.layers.Dense(4, activation=KA.gelu)  # Keras's function, by its name
    theirs = keras.layers.Dense(4, activation=KA.gelu)
    ours.build((None, 5))
    theirs.build((None, 5))
    _copy_weights(ours, theirs)
    close(ours(x).detach().numpy(), theirs(x).numpy())
    assert gk.layers.Dense(2, activation="swish").get_config()["activation"] == \
        keras.layers.Dense(2, activation="swish").get_config()["activation"] == "silu"


# ---------------------------------------------------------------- initializers

I, KI = gk.initializers, keras.initializers
SHAPE = (300, 200)  # 60,000 draws: mean and std known to ~0.5% of the std
N = SHAPE[0] * SHAPE[1]


def _moments_match(values, mean, std, low=None, high=None):
    values = np.asarray(values, np.float64)
    assert values.shape == SHAPE
    # Five standard errors: the seeded draws are fixed, so this cannot flake; a wrong formula
    # (a factor of sqrt(2) in the std, a missing truncation correction) is far outside.
    assert abs(values.mean() - mean) < 5 * std / math.sqrt(N)
    assert abs(values.std() - std) < 5 * std / math.sqrt(2 * N)
    if low is not None:
        assert values.min() >= low and values.max() <= high


def _fans(shape):
    return shape[0], shape[1]


def _truncated(std):
    return std / 0.87962566103423978  # Keras's stddev before truncation at 2 sigma


RANDOM_INITIALIZERS = [
    # (ours, Keras's, expected mean, expected std, bounds)
    (I.RandomNormal(mean=0.3, stddev=0.2, seed=1), KI.RandomNormal(mean=0.3, stddev=0.2, seed=1),
     0.3, 0.2, None),
    (I.RandomUniform(minval=-0.5, maxval=1.5, seed=2),
     KI.RandomUniform(minval=-0.5, maxval=1.5, seed=2), 0.5, 2 / math.sqrt(12), (-0.5, 1.5)),
    (I.TruncatedNormal(mean=0.1, stddev=0.3, seed=3),
     KI.TruncatedNormal(mean=0.1, stddev=0.3, seed=3), 0.1, 0.3 * 0.87962566103423978,
     (0.1 - 0.6, 0.1 + 0.6)),
    (I.GlorotNormal(seed=4), KI.GlorotNormal(seed=4), 0.0, math.sqrt(2 / 500), None),
    (I.GlorotUniform(seed=5), KI.GlorotUniform(seed=5), 0.0, math.sqrt(2 / 500),
     (-math.sqrt(6 / 500), math.sqrt(6 / 500))),
    (I.HeNormal(seed=6), KI.HeNormal(seed=6), 0.0, math.sqrt(2 / 300), None),
    (I.HeUniform(seed=7), KI.HeUniform(seed=7), 0.0, math.sqrt(2 / 300),
     (-math.sqrt(6 / 300), math.sqrt(6 / 300))),
    (I.LecunNormal(seed=8), KI.LecunNormal(seed=8), 0.0, math.sqrt(1 / 300), None),
    (I.LecunUniform(seed=9), KI.LecunUniform(seed=9), 0.0, math.sqrt(1 / 300),
     (-math.sqrt(3 / 300), math.sqrt(3 / 300))),
    (I.VarianceScaling(scale=3.0, mode="fan_out", distribution="untruncated_normal", seed=10),
     KI.VarianceScaling(scale=3.0, mode="fan_out", distribution="untruncated_normal", seed=10),
     0.0, math.sqrt(3 / 200), None),
    (I.VarianceScaling(scale=0.5, mode="fan_avg", distribution="uniform", seed=11),
     KI.VarianceScaling(scale=0.5, mode="fan_avg", distribution="uniform", seed=11),
     0.0, math.sqrt(0.5 / 250), (-math.sqrt(1.5 / 250), math.sqrt(1.5 / 250))),
    (I.VarianceScaling(seed=12), KI.VarianceScaling(seed=12), 0.0, math.sqrt(1 / 300), None),
]


@pytest.mark.parametrize("ours,theirs,mean,std,bounds", RANDOM_INITIALIZERS,
                         ids=[type(c[0]).__name__ + str(i) for i, c in
                              enumerate(RANDOM_INITIALIZERS)])
def test_random_initializers_follow_keras_formulas(ours, theirs, mean, std, bounds):
    low, high = bounds if bounds else (None, None)
    # Truncated normals never go beyond 2 of their (uncorrected) standard deviations.
    if bounds is None and getattr(ours, "distribution", "") == "truncated_normal":
        low, high = -2 * _truncated(std) - 1e-6, 2 * _truncated(std) + 1e-6
    values = ours(SHAPE).numpy()
    _moments_match(values, mean, std, low, high)
    _moments_match(theirs(SHAPE).numpy(), mean, std, low, high)  # the formula is Keras's
    np.testing.assert_array_equal(values, ours(SHAPE).numpy())  # seeded: the same each call
    assert ours.get_config() == theirs.get_config()
    assert type(ours).from_config(ours.get_config()).get_config() == theirs.get_config()
    assert I.serialize(ours) == KI.serialize(theirs)


def test_unseeded_initializers_follow_the_global_seed():
    ga.random.set_seed(7)
    first = I.HeNormal()((50, 40)).numpy()
    assert not np.array_equal(first, I.HeNormal()((50, 40)).numpy())
    ga.random.set_seed(7)
    np.testing.assert_array_equal(first, I.HeNormal()((50, 40)).numpy())


def test_deterministic_initializers_equal_keras():
    for ours, theirs, shape in [(I.Zeros(), KI.Zeros(), (3, 4)), (I.Ones(), KI.Ones(), (2, 5)),
                                (I.Constant(2.5), KI.Constant(2.5), (4, 2)),
                                (I.Identity(gain=3.0), KI.Identity(gain=3.0), (3, 5)),
                                (I.zeros(), KI.zeros(), (2,)), (I.ones(), KI.ones(), (1, 2)),
                                (I.constant(-1.0), KI.constant(-1.0), (2, 2)),
                                (I.identity(), KI.identity(), (4, 4)),
                                (I.IdentityInitializer(), KI.IdentityInitializer(), (2, 3))]:
        np.testing.assert_array_equal(ours(shape).numpy(), theirs(shape).numpy())
        assert ours.get_config() == theirs.get_config()
        assert I.serialize(ours) == KI.serialize(theirs)
    with pytest.raises(ValueError, match="Identity matrix initializer can only be used for 2D"):
        I.Identity()((2, 2, 2))


@pytest.mark.parametrize("shape", [(6, 4), (4, 6), (3, 3, 2, 5)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape):
    for ours, theirs in [(I.Orthogonal(gain=2.0, seed=3), KI.Orthogonal(gain=2.0, seed=3)),
                         (I.orthogonal(seed=4), KI.orthogonal(seed=4)),
                         (I.OrthogonalInitializer(seed=5), KI.OrthogonalInitializer(seed=5))]:
        gain = ours.gain
        for values in (ours(shape).numpy(), theirs(shape).numpy()):
            flat = values.reshape(-1, shape[-1]).astype(np.float64)
            gram = flat.T @ flat if flat.shape[0] >= flat.shape[1] else flat @ flat.T
            np.testing.assert_allclose(gram, gain ** 2 * np.eye(len(gram)), atol=1e-5)
        assert ours.get_config() == theirs.get_config()


def test_initializer_lookup_by_name_and_dict_as_keras():
    for name in ["glorot_uniform", "GlorotUniform", "he_normal", "HeNormal", "lecun_normal",
                 "lecun_uniform", "he_uniform", "glorot_normal", "zeros", "ones", "Zeros",
                 "random_normal", "random_uniform", "truncated_normal", "variance_scaling",
                 "orthogonal", "identity", "RandomNormal", "TruncatedNormal",
                 "Orthogonal", "VarianceScaling", "Identity", "Ones",
                 "RandomUniform", "LecunNormal", "LecunUniform", "HeUniform", "GlorotNormal"]:
        ours, theirs = I.get(name), KI.get(name)
        assert type(ours).__name__ == type(theirs).__name__, name
        assert ours.get_config() == theirs.get_config(), name
    # (Keras's get('constant') fails: Constant.from_config needs 'value'; ours gives Constant(0).)
    assert I.get("constant").get_config() == KI.Constant().get_config()
    assert I.get(None) is None and KI.get(None) is None
    config = KI.serialize(KI.HeNormal(seed=3))
    assert I.deserialize(config).get_config() == KI.deserialize(config).get_config()
    assert I.get(config).get_config() == {"seed": 3, "input_axes": None, "output_axes": None}
    # The lowercase names are the classes, as in Keras.
    assert I.glorot_normal is I.GlorotNormal and KI.glorot_normal is KI.GlorotNormal
    assert I.variance_scaling is I.VarianceScaling and KI.variance_scaling is KI.VarianceScaling
    assert I.random_normal is I.RandomNormal and KI.random_normal is KI.RandomNormal
    assert I.random_uniform is I.RandomUniform and KI.random_uniform is KI.RandomUniform
    assert I.truncated_normal is I.TruncatedNormal and KI.truncated_normal is KI.TruncatedNormal
    assert I.he_normal is I.HeNormal and KI.he_normal is KI.HeNormal
    assert I.he_uniform is I.HeUniform and KI.he_uniform is KI.HeUniform
    assert I.lecun_normal is I.LecunNormal and KI.lecun_normal is KI.LecunNormal
    assert I.lecun_uniform is I.LecunUniform and KI.lecun_uniform is KI.LecunUniform
    assert I.glorot_uniform is I.GlorotUniform and KI.glorot_uniform is KI.GlorotUniform
    assert isinstance(I.HeNormal(), I.Initializer) and isinstance(KI.HeNormal(), KI.Initializer)
    for bad in ("nope", 3):
        with pytest.raises(ValueError, match="Could not interpret initializer identifier"):
            I.get(bad)
        with pytest.raises(ValueError, match="Could not interpret initializer identifier"):
            KI.get(bad)
    with pytest.raises(ValueError, match="Invalid `mode` argument"):
        I.VarianceScaling(mode="fan_sideways")


@pytest.mark.parametrize("ours,theirs,std", [
    (I.HeNormal(), KI.HeNormal(), math.sqrt(2 / 400)),
    (I.GlorotUniform(), KI.GlorotUniform(), math.sqrt(2 / 700)),
    (I.RandomNormal(), KI.RandomNormal(), 0.05),
], ids=lambda v: type(v).__name__ if not isinstance(v, float) else "")
def test_builtin_layers_take_default_initializer_objects(ours, theirs, std):
    mine, keras_layer = gk.layers.Dense(300, kernel_initializer=ours), \
        keras.layers.Dense(300, kernel_initializer=theirs)
    mine.build((None, 400))
    keras_layer.build((None, 400))
    for values in (mine.kernel.detach().numpy(), keras_layer.kernel.numpy()):
        assert abs(values.std() - std) < 5 * std / math.sqrt(2 * values.size)
    with pytest.raises(NotImplementedError, match="seeded or parametrized initializer objects"):
        gk.layers.Dense(3, kernel_initializer=I.HeNormal(seed=1))


def test_python_layer_weight_from_an_initializer_object():
    class Scale(gk.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1], 3),
                                     initializer=I.Constant(0.5))

        def call(self, x):
            return ga.matmul(x, self.w)

    layer = Scale()
    y = layer(np.ones((2, 4), np.float32))
    np.testing.assert_allclose(y.detach().numpy(), np.full((2, 3), 2.0))


# ---------------------------------------------------------------- learning-rate schedules

S, KS = gk.optimizers.schedules, keras.optimizers.schedules

SCHEDULES = [
    (S.ExponentialDecay(0.1, 7, 0.5), KS.ExponentialDecay(0.1, 7, 0.5)),
    (S.ExponentialDecay(0.1, 7, 0.5, staircase=True),
     KS.ExponentialDecay(0.1, 7, 0.5, staircase=True)),
    (S.PiecewiseConstantDecay([5, 12], [0.3, 0.2, 0.05]),
     KS.PiecewiseConstantDecay([5, 12], [0.3, 0.2, 0.05])),
    (S.PolynomialDecay(0.2, 15, 0.01, power=2.0), KS.PolynomialDecay(0.2, 15, 0.01, power=2.0)),
    (S.PolynomialDecay(0.2, 6, 0.01, cycle=True), KS.PolynomialDecay(0.2, 6, 0.01, cycle=True)),
    (S.InverseTimeDecay(0.3, 4, 0.7), KS.InverseTimeDecay(0.3, 4, 0.7)),
    (S.InverseTimeDecay(0.3, 4, 0.7, staircase=True),
     KS.InverseTimeDecay(0.3, 4, 0.7, staircase=True)),
    (S.CosineDecay(0.1, 20, alpha=0.1), KS.CosineDecay(0.1, 20, alpha=0.1)),
    (S.CosineDecay(0.0, 15, warmup_target=0.2, warmup_steps=5),
     KS.CosineDecay(0.0, 15, warmup_target=0.2, warmup_steps=5)),
    (S.CosineDecayRestarts(0.1, 4), KS.CosineDecayRestarts(0.1, 4)),
    (S.CosineDecayRestarts(0.1, 3, t_mul=1.0, m_mul=0.5, alpha=0.2),
     KS.CosineDecayRestarts(0.1, 3, t_mul=1.0, m_mul=0.5, alpha=0.2)),
]


@pytest.mark.parametrize("ours,theirs", SCHEDULES,
                         ids=[type(c[0]).__name__ + str(i) for i, c in enumerate(SCHEDULES)])
def test_schedule_values_per_step_match_keras(ours, theirs):
    for step in range(30):
        got = float(ours(step))
        want = float(theirs(tf.constant(step, tf.int64)))
        assert got == pytest.approx(want, rel=2e-6, abs=1e-9), (step, got, want)
    assert ours.get_config() == theirs.get_config()
    assert S.serialize(ours) == KS.serialize(theirs)
    again = S.deserialize(KS.serialize(theirs))
    assert type(again) is type(ours) and again.get_config() == ours.get_config()


def test_schedule_errors_match_keras():
    for ours, theirs in [(S.ExponentialDecay, KS.ExponentialDecay),
                         (S.InverseTimeDecay, KS.InverseTimeDecay)]:
        with pytest.raises(ValueError, match="Argument `decay_steps` must be > 0"):
            ours(0.1, 0, 0.5)
        with pytest.raises(ValueError, match="Argument `decay_steps` must be > 0"):
            theirs(0.1, 0, 0.5)
    with pytest.raises(ValueError, match="boundaries should be 1 less than the length of values"):
        S.PiecewiseConstantDecay([1, 2], [0.1, 0.2])
    with pytest.raises(NotImplementedError, match="must override `__call__"):
        S.LearningRateSchedule()(0)


class InverseTime(S.LearningRateSchedule):
    """A user's schedule, written as a Keras guide would (with tensor ops on the step)."""

    def __init__(self, rate, steps):
        self.rate, self.steps = rate, steps

    def __call__(self, step):
        return self.rate / (1.0 + ga.cast(step, "float32") / self.steps)

    def get_config(self):
        return {"rate": self.rate, "steps": self.steps}


class KerasInverseTime(KS.LearningRateSchedule):
    def __init__(self, rate, steps):
        self.rate, self.steps = rate, steps

    def __call__(self, step):
        return self.rate / (1.0 + tf.cast(step, "float32") / self.steps)

    def get_config(self):
        return {"rate": self.rate, "steps": self.steps}


def _regression_data():
    r = np.random.default_rng(11)
    x = r.standard_normal((48, 5)).astype(np.float32)
    y = (x @ r.standard_normal((5, 2)) + 0.1).astype(np.float32)
    return x, y


@pytest.mark.parametrize("make", [
    lambda S: S.ExponentialDecay(0.05, 3, 0.6),
    lambda S: S.CosineDecay(0.0, 8, warmup_target=0.08, warmup_steps=4),
    lambda S: S.PiecewiseConstantDecay([4, 9], [0.08, 0.03, 0.01]),
    lambda S: InverseTime(0.06, 5) if S is gk.optimizers.schedules else KerasInverseTime(0.06, 5),
], ids=["exponential", "cosine-warmup", "piecewise", "user-subclass"])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "RMSprop"])
def test_fit_applies_the_schedule_per_step_as_keras(make, optimizer):
    x, y = _regression_data()

    def run(K):
        model = K.Sequential([K.Input((5,)), K.layers.Dense(3, activation="tanh"),
                              K.layers.Dense(2)])
        weights = [np.random.default_rng(i).standard_normal(w.shape).astype(np.float32) * 0.4
                   for i, w in enumerate(model.weights)]
        model.set_weights(weights)
        opt = getattr(K.optimizers, optimizer)(learning_rate=make(K.optimizers.schedules))
        model.compile(optimizer=opt, loss="mse")
        history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
        return history.history["loss"], float(opt.learning_rate), int(opt.iterations)

    ours, theirs = run(gk), run(keras)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-5)
    assert ours[2] == theirs[2] == 18
    assert ours[1] == pytest.approx(theirs[1], rel=1e-6)  # the rate at step 18


def test_schedule_in_a_gradient_tape_loop_and_in_config():
    schedule = S.ExponentialDecay(0.5, 1, 0.5)
    opt = gk.optimizers.SGD(learning_rate=schedule)
    w = ga.Variable(np.ones(2, np.float32))
    for expected in (0.5, 0.25, 0.125):
        assert opt.learning_rate == pytest.approx(expected)
        opt.apply_gradients([(ga.tensor(np.ones(2, np.float32)), w)])
    # 1 - 0.5 - 0.25 - 0.125
    np.testing.assert_allclose(w.numpy(), [0.125, 0.125])
    config = opt.get_config()
    theirs = keras.optimizers.SGD(learning_rate=KS.ExponentialDecay(0.5, 1, 0.5)).get_config()
    assert config["learning_rate"] == theirs["learning_rate"]
    again = gk.optimizers.SGD.from_config(config)
    assert again.learning_rate == pytest.approx(0.5)
    with pytest.raises(TypeError, match="its learning rate is not settable"):
        opt.learning_rate = 0.1


@pytest.mark.parametrize("optimizer", ["SGD", "Adam", "AdamW", "RMSprop"])
def test_optimizer_with_a_schedule_serializes_as_keras(optimizer):
    def make(K):
        schedule = K.optimizers.schedules.CosineDecay(0.1, 30, warmup_target=0.2,
                                                      warmup_steps=3)
        return getattr(K.optimizers, optimizer)(learning_rate=schedule, name="opt")

    theirs = keras.optimizers.serialize(make(keras))
    assert gk.optimizers.serialize(make(gk)) == theirs
    again = gk.optimizers.deserialize(theirs)
    assert type(again).__name__ == optimizer
    assert gk.optimizers.serialize(again) == theirs
    assert again.learning_rate == pytest.approx(0.1)  # step 0 of the warmup
    assert keras.optimizers.deserialize(gk.optimizers.serialize(again)).get_config() == \
        keras.optimizers.deserialize(theirs).get_config()


# ---------------------------------------------------------------- regularizers, constraints

R, KR = gk.regularizers, keras.regularizers
C, KC = gk.constraints, keras.constraints
W = np.random.default_rng(21).standard_normal((6, 4)).astype(np.float32)


@pytest.mark.parametrize("ours,theirs", [
    (R.L1(0.03), KR.L1(0.03)), (R.L2(0.02), KR.L2(0.02)), (R.L1L2(0.01, 0.05), KR.L1L2(0.01, 0.05)),
    (R.l1(), KR.l1()), (R.l2(), KR.l2()), (R.l1_l2(l1=0.2), KR.l1_l2(l1=0.2)),
    (R.OrthogonalRegularizer(0.1), KR.OrthogonalRegularizer(0.1)),
    (R.OrthogonalRegularizer(0.2, mode="columns"), KR.OrthogonalRegularizer(0.2, mode="columns")),
    (R.orthogonal_regularizer(), KR.orthogonal_regularizer()),
], ids=lambda r: type(r).__name__)
def test_regularizer_values_gradients_and_configs_match_keras(ours, theirs):
    w_ref = tf.Variable(W)
    with tf.GradientTape() as tape:
        penalty_ref = theirs(w_ref)
    g_ref = tape.gradient(penalty_ref, w_ref)
    w = ga.tensor(W)
    w.requires_grad = True
    with ga.GradientTape() as tape:
        penalty = ours(w)
    g = tape.gradient(penalty, w)
    assert float(penalty.detach().numpy()) == pytest.approx(float(penalty_ref), rel=1e-5)
    close(g.numpy(), g_ref.numpy(), rel=1e-4)
    assert ours.get_config() == theirs.get_config()
    assert R.serialize(ours) == KR.serialize(theirs)
    assert R.deserialize(KR.serialize(theirs)).get_config() == theirs.get_config()


def test_regularizer_lookup_and_errors_as_keras():
    for name in ["l1", "l2", "L1", "L2", "L1L2", "OrthogonalRegularizer",
                 "orthogonal_regularizer"]:
        assert R.get(name).get_config() == KR.get(name).get_config(), name
    assert R.get(None) is None and KR.get(None) is None
    assert isinstance(R.L2(), R.Regularizer) and isinstance(KR.L2(), KR.Regularizer)
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="expected a non-negative float"):
            R.L2(bad)
        with pytest.raises(ValueError, match="expected a non-negative float"):
            KR.L2(bad)
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier"):
        R.get("l3")
    with pytest.raises(ValueError, match="Could not interpret regularizer identifier"):
        KR.get("l3")


@pytest.mark.parametrize("ours,theirs", [
    (C.MaxNorm(1.5), KC.MaxNorm(1.5)), (C.MaxNorm(2.0, axis=1), KC.MaxNorm(2.0, axis=1)),
    (C.max_norm(3), KC.max_norm(3)), (C.NonNeg(), KC.NonNeg()), (C.non_neg(), KC.non_neg()),
    (C.UnitNorm(), KC.UnitNorm()), (C.unit_norm(axis=1), KC.unit_norm(axis=1)),
    (C.MinMaxNorm(0.5, 1.2, rate=0.7), KC.MinMaxNorm(0.5, 1.2, rate=0.7)),
    (C.min_max_norm(axis=1), KC.min_max_norm(axis=1)),
], ids=lambda c: type(c).__name__)
def test_constraint_values_and_configs_match_keras(ours, theirs):
    close(ours(ga.tensor(W)).numpy(), theirs(tf.constant(W)).numpy())
    assert ours.get_config() == theirs.get_config()
    assert C.serialize(ours) == KC.serialize(theirs)
    assert C.deserialize(KC.serialize(theirs)).get_config() == theirs.get_config()


def test_constraint_lookup_as_keras():
    for name in ["max_norm", "MaxNorm", "non_neg", "NonNeg", "unit_norm", "UnitNorm",
                 "min_max_norm", "MinMaxNorm"]:
        assert C.get(name).get_config() == KC.get(name).get_config(), name
    assert C.get(None) is None and KC.get(None) is None
    assert isinstance(C.NonNeg(), C.Constraint) and isinstance(KC.NonNeg(), KC.Constraint)
    with pytest.raises(ValueError, match="Could not interpret constraint identifier"):
        C.get("max_nrom")
    with pytest.raises(ValueError, match="Could not interpret constraint identifier"):
        KC.get("max_nrom")


def _python_dense(K, regularizer, constraint):
    class RegularizedDense(K.layers.Layer):
        def __init__(self, units, **kwargs):
            super().__init__(**kwargs)
            self.units = units

        def build(self, input_shape):
            self.kernel = self.add_weight(shape=(input_shape[-1], self.units),
                                          initializer="zeros", regularizer=regularizer,
                                          constraint=constraint, name="kernel")

        def call(self, x):
            return K.ops.matmul(x, self.kernel) if K is keras else ga.matmul(x, self.kernel)
    return RegularizedDense


@pytest.mark.parametrize("regularizer,constraint", [
    ("l2", None), (None, "max_norm"), ("l1", "non_neg"),
])
def test_python_layer_add_weight_regularizer_and_constraint_train_as_keras(regularizer,
                                                                           constraint):
    x, y = _regression_data()

    def run(K):
        Layer = _python_dense(K, K.regularizers.get(regularizer), K.constraints.get(constraint))
        model = K.Sequential([K.Input((5,)), Layer(2)])
        weights = [np.random.default_rng(4).standard_normal(w.shape).astype(np.float32)
                   for w in model.weights]
        model.set_weights(weights)
        model.compile(optimizer=K.optimizers.SGD(0.05), loss="mse")
        history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        return history.history["loss"], model.get_weights()[0]

    ours, theirs = run(gk), run(keras)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-5)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=2e-5, atol=1e-6)


# ---------------------------------------------------------------- the built-in layers' extras

@pytest.mark.parametrize("kwargs", [
    dict(kernel_regularizer="l2"),
    dict(bias_regularizer="l1", activity_regularizer="l2"),
    dict(kernel_regularizer=lambda K: K.regularizers.L1L2(l1=0.01, l2=0.02),
         kernel_constraint="max_norm", bias_constraint="non_neg"),
    dict(activation="mish", kernel_constraint="unit_norm"),
    dict(activation="hard_silu", activity_regularizer="l1"),
], ids=lambda kw: "-".join(f"{k}={v if isinstance(v, str) else 'object'}"
                           for k, v in kw.items()))
def test_dense_extras_train_as_keras(kwargs):
    """Regularizers, constraints and Python activations on the built-in Dense: fit's loss
    (the penalties included) and the trained weights equal Keras's."""
    x, y = _regression_data()

    def run(K):
        layer_kwargs = {k: (v if k == "activation" else v(K) if callable(v) else
                            (K.regularizers if "regularizer" in k else K.constraints).get(v))
                        for k, v in kwargs.items()}
        model = K.Sequential([K.Input((5,)), K.layers.Dense(4, **layer_kwargs),
                              K.layers.Dense(2)])
        weights = [np.random.default_rng(i).standard_normal(w.shape).astype(np.float32)
                   for i, w in enumerate(model.weights)]
        model.set_weights(weights)
        model.compile(optimizer=K.optimizers.SGD(0.02), loss="mse")
        history = model.fit(x, y, batch_size=16, epochs=3, shuffle=False, verbose=0)
        return history.history["loss"], model.get_weights(), model.layers[0].get_config()

    ours, theirs = run(gk), run(keras)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-5)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
    for key in ("activation", "kernel_regularizer", "bias_regularizer", "kernel_constraint",
                "bias_constraint"):
        assert ours[2][key] == theirs[2][key], key
    assert ours[2].get("activity_regularizer") == theirs[2].get("activity_regularizer")


def test_conv2d_kernel_regularizer_and_constraint_train_as_keras():
    r = np.random.default_rng(13)
    x = r.standard_normal((12, 6, 6, 2)).astype(np.float32)
    y = r.standard_normal((12, 3)).astype(np.float32)

    def run(K):
        model = K.Sequential([
            K.Input((6, 6, 2)),
            K.layers.Conv2D(3, 3, activation="celu", kernel_regularizer=K.regularizers.L2(0.05),
                            kernel_constraint=K.constraints.MaxNorm(1.0, axis=[0, 1, 2])),
            K.layers.Flatten(), K.layers.Dense(3)])
        model.set_weights([np.random.default_rng(i).standard_normal(w.shape).astype(np.float32)
                           * 0.5 for i, w in enumerate(model.weights)])
        model.compile(optimizer=K.optimizers.SGD(0.01), loss="mse")
        history = model.fit(x, y, batch_size=4, epochs=2, shuffle=False, verbose=0)
        return history.history["loss"], model.get_weights()

    ours, theirs = run(gk), run(keras)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-5)
    for a, b in zip(ours[1], theirs[1]):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=1e-6)
