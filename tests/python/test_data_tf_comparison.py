"""``gpuaccel.data.Dataset`` against real ``tf.data.Dataset``: each pipeline is written twice,
once per framework, on the same NumPy inputs, and must give the same elements (values, dtypes,
structure), cardinality and element_spec. Seeded draws (``random``, ``sample_from_datasets``)
are compared by their rule (range, multiset, reproducibility with a seed), not TF's exact
numbers."""
import os

import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel.data import Dataset

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")
TFDataset = tf.data.Dataset

RNG = np.random.default_rng(30)
FEATURES = RNG.normal(size=(6, 3)).astype(np.float32)
LABELS = np.array([2, 0, 1, 2, 1, 0], np.int64)
WITH_REPEATS = np.array([4, 1, 4, 3, 1, 0, 3], np.int64)
# keys x % 3 whose unfinished groups (of window 2) end in an order other than their first use
GROUPED = np.array([5, 3, 9, 1, 7, 2, 8, 4, 6], np.int64)
LENGTHS = [3, 1, 5, 2, 6, 4, 2, 7, 1]


def _leaves(element):
    if isinstance(element, tuple):
        return [leaf for part in element for leaf in _leaves(part)]
    if isinstance(element, dict):
        return [leaf for key in sorted(element) for leaf in _leaves(element[key])]
    return [np.asarray(element)]


def assert_same_elements(ours, theirs, rtol=0.0):
    """Same number of elements, each with the same structure, dtypes, shapes and values."""
    mine, reference = list(ours.as_numpy_iterator()), list(theirs.as_numpy_iterator())
    assert len(mine) == len(reference), (mine, reference)
    for a, b in zip(mine, reference):
        assert type(a) is type(b) or not isinstance(b, (tuple, dict)), (a, b)
        for x, y in zip(_leaves(a), _leaves(b), strict=True):
            assert x.dtype == y.dtype and x.shape == y.shape, (x, y)
            np.testing.assert_allclose(x, y, rtol=rtol)


def spec_tuple(spec):
    """(shape, dtype name) leaves of an element_spec from either framework."""
    if isinstance(spec, tuple):
        return tuple(spec_tuple(s) for s in spec)
    if isinstance(spec, dict):
        return {k: spec_tuple(v) for k, v in spec.items()}
    shape = spec.shape.as_list() if hasattr(spec.shape, "as_list") else list(spec.shape)
    return tuple(shape), spec.dtype.name


def test_cardinality_enumerate_flat_map_prefetch_unbatch_zip():
    ours = Dataset.from_tensor_slices((FEATURES, LABELS)).batch(4).unbatch()
    theirs = TFDataset.from_tensor_slices((FEATURES, LABELS)).batch(4).unbatch()
    assert_same_elements(ours, theirs)
    assert ours.cardinality() == int(theirs.cardinality())  # both unknown after unbatch

    ours = Dataset.zip((Dataset.range(3), Dataset.from_tensor_slices(FEATURES))).enumerate(5)
    theirs = TFDataset.zip((TFDataset.range(3), TFDataset.from_tensor_slices(FEATURES))).enumerate(5)
    assert_same_elements(ours, theirs)
    assert ours.cardinality() == int(theirs.cardinality()) == 3
    assert_same_elements(Dataset.zip(Dataset.range(2), Dataset.range(4, 9)),
                         TFDataset.zip(TFDataset.range(2), TFDataset.range(4, 9)))

    ours = Dataset.range(1, 4).flat_map(lambda n: Dataset.range(n)).prefetch(2)
    theirs = TFDataset.range(1, 4).flat_map(lambda n: TFDataset.range(n)).prefetch(2)
    assert_same_elements(ours, theirs)
    for ds, reference in [(Dataset.range(10).repeat(), TFDataset.range(10).repeat()),
                          (Dataset.range(10).filter(lambda x: x > 3),
                           TFDataset.range(10).filter(lambda x: x > 3)),
                          (Dataset.range(10).batch(4).prefetch(1),
                           TFDataset.range(10).batch(4).prefetch(1))]:
        assert ds.cardinality() == int(reference.cardinality())


def test_reduce_scan_get_single_element_apply():
    ours = Dataset.from_tensor_slices(LABELS).reduce(np.int64(0), lambda state, x: state + x)
    theirs = TFDataset.from_tensor_slices(LABELS).reduce(np.int64(0), lambda state, x: state + x)
    assert ours.dtype.name == theirs.dtype.name and int(ours) == int(theirs) == 6
    pair_sum = lambda state, element: (state[0] + element[0], state[1] + element[1])  # noqa: E731
    ours = Dataset.from_tensor_slices((FEATURES, LABELS)).reduce(
        (np.zeros(3, np.float32), np.int64(0)), pair_sum)
    theirs = TFDataset.from_tensor_slices((FEATURES, LABELS)).reduce(
        (np.zeros(3, np.float32), np.int64(0)), pair_sum)
    np.testing.assert_allclose(ours[0].numpy(), theirs[0].numpy(), rtol=1e-6)
    assert int(ours[1]) == int(theirs[1])

    step = lambda state, x: (state + x, state * 10)  # noqa: E731 - running sum, emits the old one
    assert_same_elements(Dataset.range(6).scan(np.int64(0), step),
                         TFDataset.range(6).scan(np.int64(0), step))

    ours = Dataset.from_tensor_slices(FEATURES).batch(6).get_single_element()
    theirs = TFDataset.from_tensor_slices(FEATURES).batch(6).get_single_element()
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for ds, reference, message in [(Dataset.range(0), TFDataset.range(0), "Dataset was empty"),
                                   (Dataset.range(2), TFDataset.range(2), "more than one")]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            reference.get_single_element()
        with pytest.raises(ga.errors.InvalidArgumentError, match=message):
            ds.get_single_element()

    assert_same_elements(Dataset.range(5).apply(lambda ds: ds.skip(2).map(lambda x: x * 3)),
                         TFDataset.range(5).apply(lambda ds: ds.skip(2).map(lambda x: x * 3)))
    with pytest.raises(TypeError, match="must return a Dataset"):
        Dataset.range(3).apply(lambda ds: 3)


@pytest.mark.parametrize("size, shift, stride, drop", [(3, 2, 1, False), (3, 2, 1, True),
                                                       (2, 1, 3, True), (3, None, 2, False)])
def test_window_flattened_with_flat_map(size, shift, stride, drop):
    ours = Dataset.range(8).window(size, shift, stride, drop)
    theirs = TFDataset.range(8).window(size, shift, stride, drop)
    assert ours.cardinality() == int(theirs.cardinality())
    assert_same_elements(ours.flat_map(lambda w: w.batch(size)),
                         theirs.flat_map(lambda w: w.batch(size)))


def test_window_of_tuples_is_a_tuple_of_datasets():
    ours = Dataset.from_tensor_slices((FEATURES, LABELS)).window(4, 3)
    theirs = TFDataset.from_tensor_slices((FEATURES, LABELS)).window(4, 3)
    assert_same_elements(ours.flat_map(lambda x, y: Dataset.zip((x.batch(4), y.batch(4)))),
                         theirs.flat_map(lambda x, y: TFDataset.zip((x.batch(4), y.batch(4)))))


def test_shard_take_while_unique_rebatch():
    for num_shards, index in [(3, 0), (3, 2), (4, 1)]:
        ours = Dataset.from_tensor_slices(FEATURES).shard(num_shards, index)
        theirs = TFDataset.from_tensor_slices(FEATURES).shard(num_shards, index)
        assert_same_elements(ours, theirs)
        assert ours.cardinality() == int(theirs.cardinality())
        assert_same_elements(ours.batch(2), theirs.batch(2))  # the row-index fast path
    with pytest.raises(ValueError, match="index must be in"):
        Dataset.range(4).shard(2, 2)

    assert_same_elements(Dataset.range(10).take_while(lambda x: x < 4),
                         TFDataset.range(10).take_while(lambda x: x < 4))
    assert_same_elements(Dataset.from_tensor_slices(WITH_REPEATS).unique(),
                         TFDataset.from_tensor_slices(WITH_REPEATS).unique())
    with pytest.raises(TypeError, match="integer or boolean scalars"):
        list(Dataset.from_tensor_slices(FEATURES).unique())

    for sizes, drop in [(3, False), (3, True), ([2, 3], False)]:
        ours = Dataset.range(10).batch(4).rebatch(sizes, drop_remainder=drop)
        theirs = TFDataset.range(10).batch(4).rebatch(sizes, drop_remainder=drop)
        assert_same_elements(ours, theirs)
        assert spec_tuple(ours.element_spec) == spec_tuple(theirs.element_spec)


def test_group_by_window_and_bucket_by_sequence_length():
    key = lambda x: x % 3  # noqa: E731
    ours = Dataset.from_tensor_slices(GROUPED).group_by_window(
        key, lambda k, window: window.batch(5), window_size=2)
    theirs = TFDataset.from_tensor_slices(GROUPED).group_by_window(
        key, lambda k, window: window.batch(5), window_size=2)
    assert_same_elements(ours, theirs)  # the unfinished groups come last, by key
    calls = []  # the windows do not read the input again (for its element spec, say)
    grouped = Dataset.range(9).map(lambda x: calls.append(1) or x).group_by_window(
        key, lambda k, window: window.batch(2), window_size=2)
    assert len(list(grouped)) == 6 and len(calls) == 9
    sized = lambda k: k + 1  # noqa: E731
    assert_same_elements(
        Dataset.range(12).group_by_window(key, lambda k, w: w.batch(4), window_size_func=sized),
        TFDataset.range(12).group_by_window(key, lambda k, w: w.batch(4), window_size_func=sized))

    def sequences():
        for n in LENGTHS:
            yield np.arange(n, dtype=np.int64)

    ours = Dataset.from_generator(sequences, output_signature=ga.TensorSpec((None,), ga.int64))
    theirs = TFDataset.from_generator(sequences,
                                      output_signature=tf.TensorSpec((None,), tf.int64))
    for boundaries, to_boundary in [([3, 5], False), ([3, 8], True)]:
        assert_same_elements(
            ours.bucket_by_sequence_length(lambda x: x.shape[0], boundaries, [2, 2, 3],
                                           pad_to_bucket_boundary=to_boundary),
            theirs.bucket_by_sequence_length(lambda x: tf.shape(x)[0], boundaries, [2, 2, 3],
                                             pad_to_bucket_boundary=to_boundary))
    with pytest.raises(ValueError, match="bucket_batch_sizes"):
        ours.bucket_by_sequence_length(lambda x: x.shape[0], [3, 5], [2, 2])


def test_counter_and_choose_from_datasets():
    assert_same_elements(Dataset.counter(4, -3).take(5), TFDataset.counter(4, -3).take(5))
    assert int(Dataset.counter().cardinality()) == int(TFDataset.counter().cardinality()) == -1

    choices = np.array([0, 2, 2, 1, 0, 2, 2], np.int64)
    for stop in (True, False):
        ours = Dataset.choose_from_datasets(
            [Dataset.range(3), Dataset.range(10, 12), Dataset.range(20, 22)],
            Dataset.from_tensor_slices(choices), stop_on_empty_dataset=stop)
        theirs = TFDataset.choose_from_datasets(
            [TFDataset.range(3), TFDataset.range(10, 12), TFDataset.range(20, 22)],
            TFDataset.from_tensor_slices(choices), stop_on_empty_dataset=stop)
        assert_same_elements(ours, theirs)
    with pytest.raises(TypeError, match="int64 scalars"):
        list(Dataset.choose_from_datasets([Dataset.range(2)], Dataset.range(2).map(
            lambda x: x.to(ga.int32))))


def test_random_and_sample_from_datasets_follow_the_rule():
    ours = [int(v) for v in Dataset.random(seed=7).take(200)]
    theirs = [int(v) for v in TFDataset.random(seed=7).take(200)]
    assert int(Dataset.random(seed=1).cardinality()) == int(
        TFDataset.random(seed=1).cardinality()) == -1
    for values in (ours, theirs):  # the rule both follow: uniform over [0, 2**32)
        assert all(0 <= v < 2 ** 32 for v in values) and len(set(values)) == 200
        assert 2 ** 30 < np.mean(values) < 3 * 2 ** 30
    assert ours == [int(v) for v in Dataset.random(seed=7).take(200)]  # seeded: reproducible
    assert ours != [int(v) for v in Dataset.random(seed=8).take(200)]
    for ds in (Dataset.random(seed=7, rerandomize_each_iteration=True).take(5),
               TFDataset.random(seed=7, rerandomize_each_iteration=True).take(5)):
        assert [int(v) for v in ds] != [int(v) for v in ds]  # each iteration draws anew
    for ds in (Dataset.random(seed=7).take(5), TFDataset.random(seed=7).take(5)):
        assert [int(v) for v in ds] == [int(v) for v in ds]  # each iteration repeats
    spec = Dataset.random(seed=1).element_spec
    assert spec_tuple(spec) == spec_tuple(TFDataset.random(seed=1).element_spec)

    def mixed(D, seed, stop=False):
        return D.sample_from_datasets([D.range(5), D.range(100, 110)], weights=[0.3, 0.7],
                                      seed=seed, stop_on_empty_dataset=stop)

    ours, theirs = mixed(Dataset, 3), mixed(TFDataset, 3)
    mine, reference = [int(v) for v in ours], [int(v) for v in theirs]
    assert sorted(mine) == sorted(reference) == list(range(5)) + list(range(100, 110))
    for values in (mine, reference):  # each input keeps its own order
        assert [v for v in values if v < 100] == list(range(5))
    assert mine == [int(v) for v in mixed(Dataset, 3)] and mine != [int(v) for v in
                                                                   mixed(Dataset, 4)]
    for values in ([int(v) for v in mixed(Dataset, 3, True)],
                   [int(v) for v in mixed(TFDataset, 3, True)]):
        # stops at the first exhausted input: one of them is fully drawn, the other is not
        low = [v for v in values if v < 100]
        assert low == list(range(len(low))) and (len(low) == 5 or len(values) - len(low) == 10)
    with pytest.raises(ValueError, match="non-negative"):
        Dataset.sample_from_datasets([Dataset.range(2)], weights=[-1.0])


def test_element_spec_matches_tf_data():
    def pipelines(D):
        slices = D.from_tensor_slices((FEATURES, LABELS))
        return [slices, slices.batch(4), slices.batch(4, drop_remainder=True),
                slices.batch(4).unbatch(), slices.shuffle(6, seed=1).take(3).repeat(2),
                D.range(3).enumerate(), D.zip((D.range(2), slices)),
                D.from_tensor_slices({"a": FEATURES}).batch(2).prefetch(1),
                D.range(4).concatenate(D.range(2)).filter(lambda x: x > 0).cache(),
                slices.shard(2, 0).take_while(lambda x, y: y > 0),
                D.from_tensor_slices(LABELS).unique().skip(1)]
    for ours, theirs in zip(pipelines(Dataset), pipelines(TFDataset), strict=True):
        assert spec_tuple(ours.element_spec) == spec_tuple(theirs.element_spec)
    padded_ours = Dataset.range(1, 4).map(lambda n: ga.fill([int(n)], 1.0)).padded_batch(2)
    padded_theirs = TFDataset.range(1, 4).map(lambda n: tf.fill([n], 1.0)).padded_batch(2)
    assert spec_tuple(padded_ours.element_spec) == spec_tuple(padded_theirs.element_spec)


def test_with_options_are_kept_and_merged():
    def configured(data):
        first, second = data.Options(), data.Options()
        first.deterministic = False
        first.threading.private_threadpool_size = 2
        second.deterministic = True
        second.experimental_distribute.auto_shard_policy = \
            data.experimental.AutoShardPolicy.DATA
        return data.Dataset.range(4).with_options(first).map(lambda x: x + 1).with_options(
            second)

    ours, theirs = configured(ga.data), configured(tf.data)
    assert_same_elements(ours, theirs)
    for ds in (ours, theirs):
        options = ds.options()
        assert options.deterministic is True and options.threading.private_threadpool_size == 2
        assert int(options.experimental_distribute.auto_shard_policy) == 2
        assert ds.map(lambda x: x).options().deterministic is True  # travels downstream
    for options in (ga.data.Options(), tf.data.Options()):
        with pytest.raises(AttributeError, match="Cannot set the property"):
            options.determinstic = True  # a misspelt option fails, it is not silently kept
    with pytest.raises(TypeError, match="gpuaccel.data.Options"):
        Dataset.range(2).with_options({"deterministic": True})


def test_ignore_errors_drops_the_elements_whose_map_raised():
    values = np.array([1.0, 2.0, 0.0, 4.0, 0.0, 8.0], np.float32)

    def reciprocal(x):
        if float(x) == 0.0:
            raise ga.errors.InvalidArgumentError("division by zero", "reciprocal")
        return 1.0 / x

    theirs = TFDataset.from_tensor_slices(values).map(
        lambda x: tf.debugging.check_numerics(1.0 / x, "division by zero")).ignore_errors()
    for parallel in (None, 3):
        ours = Dataset.from_tensor_slices(values).map(
            reciprocal, num_parallel_calls=parallel).ignore_errors()
        assert_same_elements(ours, theirs)
    assert_same_elements(
        Dataset.range(6).filter(lambda x: reciprocal(x % 3) > 0.4).ignore_errors(),
        TFDataset.range(6).filter(
            lambda x: tf.debugging.check_numerics(1.0 / tf.cast(x % 3, tf.float32), "zero") > 0.4
        ).ignore_errors())
    with pytest.raises(ga.errors.InvalidArgumentError, match="division by zero"):
        list(Dataset.from_tensor_slices(values).map(reciprocal))  # without it, the error stands
    with pytest.warns(UserWarning, match="dropped an element"):
        assert len(list(Dataset.from_tensor_slices(values).map(reciprocal).ignore_errors(
            log_warning=True))) == 4
