"""``gpuaccel.random`` against real ``tf.random``. The draws cannot be TF's numbers (TF keys its
Philox streams its own way), so each function is held to TF's rules: the same shapes and
dtypes, values in the same range, the same distribution (moments of a large sample from both,
within bounds of many standard errors), the same seed pair giving the same draws and another
pair other draws, and TF's errors for bad arguments. What is deterministic (create_rng_state,
Algorithm, the seed helpers' shapes) is compared exactly."""
import numpy as np
import pytest

import gpuaccel as gt

tf = pytest.importorskip("tensorflow")

SEED = [7, 11]
N = 20000  # a large sample: a mean's standard error is std / 141


def _both(call):
    """call(gpuaccel) and call(tensorflow), each after seeding its global stream (no test
    depends on an unseeded draw)."""
    gt.random.set_seed(1)
    tf.random.set_seed(1)
    ours, theirs = call(gt), call(tf)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert ours.dtype.name == theirs.dtype.name, (ours.dtype.name, theirs.dtype.name)
    return np.asarray(ours.numpy(), np.float64), np.asarray(theirs.numpy(), np.float64)


def _same_distribution(ours, theirs, mean, std):
    """Both samples' means within 6 standard errors of ``mean`` and their standard deviations
    within 5% of ``std``."""
    for sample in (ours, theirs):
        assert abs(sample.mean() - mean) < 6 * std / np.sqrt(sample.size), sample.mean()
        assert abs(sample.std() - std) < 0.05 * std, sample.std()


# (draw given tf or gpuaccel, theoretical mean, std, lowest, highest allowed)
SAMPLES = [
    (lambda m: m.random.normal([N], mean=-1.0, stddev=0.5), -1.0, 0.5, -np.inf, np.inf),
    (lambda m: m.random.uniform([N], minval=2.0, maxval=4.0), 3.0, 2 / np.sqrt(12), 2.0, 4.0),
    (lambda m: m.random.uniform([N], minval=-3, maxval=3, dtype="int64"), -0.5,
     np.sqrt((6 ** 2 - 1) / 12), -3, 2),
    (lambda m: m.random.stateless_normal([N], SEED, mean=2.0, stddev=3.0), 2.0, 3.0, -np.inf,
     np.inf),
    (lambda m: m.random.stateless_uniform([N], SEED, minval=-1.0, maxval=3.0), 1.0, 4 / np.sqrt(12),
     -1.0, 3.0),
    (lambda m: m.random.stateless_uniform([N], SEED, minval=2, maxval=9, dtype="int32"), 5.0,
     np.sqrt((7 ** 2 - 1) / 12), 2, 8),
    (lambda m: m.random.stateless_truncated_normal([N], SEED, mean=1.0, stddev=2.0), 1.0,
     2.0 * 0.879626, -3.0, 5.0),
    (lambda m: m.random.stateless_parameterized_truncated_normal([N], SEED, 0.0, 1.0, 1.0, 3.0),
     1.51005, 0.41648, 1.0, 3.0),
    (lambda m: m.random.stateless_gamma([N], SEED, alpha=2.5, beta=2.0), 1.25,
     np.sqrt(2.5) / 2, 0.0, np.inf),
    (lambda m: m.random.stateless_gamma([N], SEED, alpha=0.4), 0.4, np.sqrt(0.4), 0.0, np.inf),
    (lambda m: m.random.stateless_poisson([N], SEED, lam=3.5), 3.5, np.sqrt(3.5), 0, np.inf),
    (lambda m: m.random.stateless_poisson([N], SEED, lam=40.0, dtype="float32"), 40.0,
     np.sqrt(40.0), 0, np.inf),
    (lambda m: m.random.stateless_binomial([N], SEED, counts=20.0, probs=0.3), 6.0, np.sqrt(4.2), 0,
     20),
    (lambda m: m.random.stateless_binomial([N], SEED, counts=12, probs=0.8, output_dtype="int64"),
     9.6, np.sqrt(1.92), 0, 12),
    (lambda m: m.random.truncated_normal([N], stddev=0.5), 0.0, 0.5 * 0.879626, -1.0, 1.0),
    (lambda m: m.random.truncated_normal([N], mean=3.0, dtype="float16"), 3.0, 0.879626, 1.0,
     5.0),
    (lambda m: m.random.stateless_truncated_normal([N], [0, 5], dtype="float16"), 0.0,
     0.879626, -2.0, 2.0),
    (lambda m: m.random.gamma([N], alpha=3.0), 3.0, np.sqrt(3.0), 0.0, np.inf),
    (lambda m: m.random.poisson([N], lam=0.7), 0.7, np.sqrt(0.7), 0, np.inf),
    (lambda m: m.random.Generator.from_seed(3).normal([N]), 0.0, 1.0, -np.inf, np.inf),
    (lambda m: m.random.Generator.from_seed(3).truncated_normal([N]), 0.0, 0.879626, -2.0, 2.0),
    (lambda m: m.random.Generator.from_seed(3).uniform([N], 5, 10, dtype="int64"), 7.0,
     np.sqrt(2.0), 5, 9),
    (lambda m: m.random.Generator.from_seed(3).binomial([N], counts=8.0, probs=0.5), 4.0,
     np.sqrt(2.0), 0, 8),
]


@pytest.mark.parametrize("draw, mean, std, low, high", SAMPLES,
                         ids=[f"sample-{i}" for i in range(len(SAMPLES))])
def test_draws_follow_tensorflows_distribution(draw, mean, std, low, high):
    ours, theirs = _both(draw)
    assert ours.min() >= low and ours.max() <= high
    assert theirs.min() >= low and theirs.max() <= high
    _same_distribution(ours, theirs, mean, std)


def test_categorical_follows_the_softmax():
    logits = np.log(np.array([[0.1, 0.6, 0.3], [0.5, 0.0 + 1e-9, 0.5]], np.float32))
    for module in (gt, tf):
        draws = module.random.stateless_categorical(logits, N, SEED).numpy()
        assert draws.shape == (2, N) and draws.dtype == np.int64
        for row, p in zip(draws, np.exp(logits)):
            freq = np.bincount(row, minlength=3) / N
            np.testing.assert_allclose(freq, p / p.sum(), atol=0.015)
    ours = gt.random.categorical(logits, 5, dtype="int32")
    theirs = tf.random.categorical(logits, 5, dtype=tf.int32)
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.dtype.name == "int32"


def test_shuffle_permutes_rows():
    rows = np.arange(40, dtype=np.int32).reshape(20, 2)
    for module in (gt, tf):
        module.random.set_seed(3)
        out = module.random.shuffle(rows).numpy()
        assert out.shape == rows.shape and out.dtype == np.int32
        assert sorted(map(tuple, out)) == sorted(map(tuple, rows))  # whole rows, each once
        assert not np.array_equal(out, rows)
        module.random.set_seed(3)
        np.testing.assert_array_equal(module.random.shuffle(rows).numpy(), out)


def test_shapes_of_parameter_broadcasts():
    alpha = np.float32([[1.0], [2.0]])
    beta = np.float32([1.0, 3.0, 0.5])
    for module in (gt, tf):
        assert tuple(module.random.gamma([4], alpha, beta).shape) == (4, 2, 3)
        assert tuple(module.random.poisson([5, 2], [1.0, 2.0, 3.0]).shape) == (5, 2, 3)
        assert module.random.poisson([2], [1.0]).dtype.name == "float32"
        assert module.random.stateless_poisson([2, 3], SEED, [1.0, 2.0, 3.0]).dtype.name == \
            "int32"
        assert tuple(module.random.stateless_gamma([4, 2, 3], SEED, alpha, beta).shape) == \
            (4, 2, 3)


@pytest.mark.parametrize("name, args", [
    ("stateless_normal", ([3, 2],)),
    ("stateless_uniform", ([5],)),
    ("stateless_truncated_normal", ([4],)),
    ("stateless_poisson", ([6], )),
    ("stateless_gamma", ([6],)),
])
def test_same_seed_same_draws_other_seed_other_draws(name, args):
    extra = {"stateless_poisson": {"lam": 4.0}, "stateless_gamma": {"alpha": 2.0}}.get(name, {})
    fn = getattr(gt.random, name)
    gt.random.set_seed(5)
    first = fn(*args, seed=[1, 2], **extra).numpy()
    gt.random.uniform([3])  # the global stream moving does not change a stateless draw
    again = fn(*args, seed=np.int64([1, 2]), **extra).numpy()
    other = fn(*args, seed=[1, 3], **extra).numpy()
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)
    # ... and a stateless draw leaves the global stream where it was
    gt.random.set_seed(5)
    expected = gt.random.normal([4]).numpy()
    gt.random.set_seed(5)
    fn(*args, seed=[1, 2], **extra)
    np.testing.assert_array_equal(gt.random.normal([4]).numpy(), expected)


def test_generators():
    a, b = gt.random.Generator.from_seed(42), gt.random.Generator.from_seed(42)
    np.testing.assert_array_equal(a.normal([5]).numpy(), b.normal([5]).numpy())
    np.testing.assert_array_equal(a.uniform([3]).numpy(), b.uniform([3]).numpy())
    assert not np.array_equal(a.normal([5]).numpy(), gt.random.Generator.from_seed(43)
                              .normal([5]).numpy())
    children = a.split(2)
    assert len(children) == 2 == len(tf.random.Generator.from_seed(1).split(2))
    assert not np.array_equal(children[0].normal([4]).numpy(), children[1].normal([4]).numpy())
    seeds, their_seeds = a.make_seeds(3), tf.random.Generator.from_seed(1).make_seeds(3)
    assert tuple(seeds.shape) == tuple(their_seeds.shape) and seeds.dtype.name == "int64"
    assert gt.random.stateless_normal([2], seeds[:, 0]).shape == (2,)
    full = a.uniform_full_int([1000])
    assert full.dtype.name == "int64" and full.numpy().min() < -2 ** 60 and \
        full.numpy().max() > 2 ** 60
    gt.random.set_global_generator(gt.random.Generator.from_seed(9))
    first = gt.random.get_global_generator().normal([3]).numpy()
    gt.random.set_global_generator(gt.random.Generator.from_seed(9))
    np.testing.assert_array_equal(gt.random.get_global_generator().normal([3]).numpy(), first)
    assert a.algorithm == tf.random.Generator.from_seed(1).algorithm == \
        gt.random.Algorithm.PHILOX.value


def test_deterministic_helpers_match_tensorflow():
    for alg in ("philox", "threefry", gt.random.Algorithm.PHILOX):
        their_alg = tf.random.Algorithm.PHILOX if alg is gt.random.Algorithm.PHILOX else alg
        ours, theirs = gt.random.create_rng_state(12, alg), tf.random.create_rng_state(12,
                                                                                       their_alg)
        assert ours.dtype.name == theirs.dtype.name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert {a.name: a.value for a in gt.random.Algorithm} == \
        {a.name: a.value for a in tf.random.Algorithm}
    for seed in ([1, 2], np.int64([1, 2])):
        for ours, theirs in ((gt.random.split(seed, 3), tf.random.split(seed, 3)),
                             (gt.random.fold_in(seed, 7), tf.random.fold_in(seed, 7))):
            assert tuple(ours.shape) == tuple(theirs.shape)
            assert ours.dtype.name == theirs.dtype.name
    np.testing.assert_array_equal(gt.random.fold_in([1, 2], 7).numpy(),
                                  gt.random.fold_in([1, 2], 7).numpy())
    assert not np.array_equal(gt.random.fold_in([1, 2], 7).numpy(),
                              gt.random.fold_in([1, 2], 8).numpy())


@pytest.mark.parametrize("call, error", [
    (lambda m: m.random.stateless_normal([2], seed=[1]), "InvalidArgumentError"),
    (lambda m: m.random.stateless_normal([2], seed=[1, 2, 3]), "InvalidArgumentError"),
    (lambda m: m.random.stateless_uniform([2], seed=[1, 2], dtype="int32", maxval=None, minval=0),
     ValueError),
    (lambda m: m.random.uniform([2], dtype="int32"), ValueError),
    (lambda m: m.random.stateless_categorical([0.0, 1.0], 3, seed=[1, 2]), "InvalidArgumentError"),
    (lambda m: m.random.categorical([[0.0, 1.0]], 3, dtype="float32"), ValueError),
    (lambda m: m.random.stateless_gamma([4, 2], seed=[1, 2], alpha=[1.0, 2.0, 3.0]),
     "InvalidArgumentError"),
    (lambda m: m.random.stateless_binomial([2], [1, 2], [8.0], [0.5]), "InvalidArgumentError"),
    (lambda m: m.random.stateless_parameterized_truncated_normal([3], [1, 2], 0.0, 1.0, 2.0, 1.0),
     "InvalidArgumentError"),
], ids=["seed-short", "seed-long", "int-bounds", "int-maxval", "categorical-rank",
        "categorical-dtype", "gamma-shape", "binomial-shape", "truncated-bounds"])
def test_bad_arguments_raise_tensorflows_errors(call, error):
    for module in (tf, gt):
        expected = getattr(module.errors, error) if isinstance(error, str) else error
        with pytest.raises(expected):
            call(module)
