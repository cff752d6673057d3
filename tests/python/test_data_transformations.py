"""``Dataset.cache/unbatch/filter/zip/from_generator/padded_batch/interleave`` (and
``flat_map/skip/enumerate/concatenate/from_tensors``) against tf.data's documented results,
computed here by hand or by real tf.data."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel.data import Dataset


def values(ds):
    return [np.asarray(e).tolist() for e in ds.as_numpy_iterator()]


def test_cache_replays_the_first_pass_and_freezes_a_shuffle():
    calls = []

    def record(x):
        calls.append(1)
        return x * 2

    ds = Dataset.range(5).map(record).cache()
    assert values(ds) == [0, 2, 4, 6, 8] and len(calls) == 5
    assert values(ds) == [0, 2, 4, 6, 8] and len(calls) == 5  # served from the cache
    shuffled = Dataset.range(50).shuffle(50, seed=1).cache()
    first = values(shuffled)
    assert values(shuffled) == first and first != list(range(50))
    batched = Dataset.from_tensor_slices(np.arange(10.0)).shuffle(10, seed=2).cache().batch(4)
    epoch1, epoch2 = values(batched), values(batched)
    assert epoch1 == epoch2 and sorted(sum(epoch1, [])) == list(range(10))


def test_cache_after_a_partial_pass_is_not_kept():
    calls = []
    ds = Dataset.range(4).map(lambda x: calls.append(1) or x).cache()
    next(iter(ds))
    assert values(ds) == [0, 1, 2, 3]
    assert values(ds) == [0, 1, 2, 3] and len(calls) == 5


def test_unbatch_filter_zip_skip_enumerate_concatenate():
    ds = Dataset.from_tensor_slices((np.arange(6).reshape(3, 2), np.arange(3))).batch(2)
    assert values(ds.unbatch().map(lambda a, b: a)) == [[0, 1], [2, 3], [4, 5]]
    assert values(Dataset.range(10).filter(lambda x: x > 6)) == [7, 8, 9]
    assert values(Dataset.range(4).filter(lambda x: int(x) % 2 == 0)) == [0, 2]
    zipped = Dataset.zip((Dataset.range(3), Dataset.range(10, 20)))
    assert [tuple(int(v) for v in e) for e in zipped] == [(0, 10), (1, 11), (2, 12)]
    assert zipped.cardinality() == 3
    assert values(Dataset.range(5).skip(3)) == [3, 4]
    assert values(Dataset.from_tensor_slices(np.arange(5)).skip(2).batch(2)) == [[2, 3], [4]]
    assert [(int(i), int(v)) for i, v in Dataset.range(3, 5).enumerate(1)] == [(1, 3), (2, 4)]
    assert values(Dataset.range(2).concatenate(Dataset.range(5, 7))) == [0, 1, 5, 6]
    assert values(Dataset.from_tensors([1, 2])) == [[1, 2]]
    with pytest.raises(TypeError, match="scalar boolean|boolean"):
        values(Dataset.range(3).filter(lambda x: "yes"))


def test_from_generator_with_output_signature():
    def gen(limit):
        for i in range(limit):
            yield np.full((i + 1,), i, np.int32), float(i)

    signature = (ga.TensorSpec(shape=(None,), dtype=ga.int32), ga.TensorSpec((), ga.float32))
    ds = Dataset.from_generator(gen, args=(3,), output_signature=signature)
    elements = list(ds)
    assert [e[0].numpy().tolist() for e in elements] == [[0], [1, 1], [2, 2, 2]]
    assert elements[1][1].dtype == ga.float32 and len(list(ds)) == 3  # re-iterable
    bad = Dataset.from_generator(lambda: iter([np.zeros(2)]),
                                 output_signature=ga.TensorSpec((3,), ga.float32))
    with pytest.raises(TypeError, match="does not match the output_signature shape"):
        list(bad)
    with pytest.raises(TypeError, match="output_signature"):
        Dataset.from_generator(gen)


def test_padded_batch_pads_to_the_longest_and_to_given_shapes():
    ds = Dataset.range(1, 5).map(lambda x: ga.fill([int(x)], int(x)))
    assert values(ds.padded_batch(2)) == [[[1, 0], [2, 2]], [[3, 3, 3, 0], [4, 4, 4, 4]]]
    assert values(ds.padded_batch(2, padded_shapes=[5], padding_values=-1)) == [
        [[1, -1, -1, -1, -1], [2, 2, -1, -1, -1]], [[3, 3, 3, -1, -1], [4, 4, 4, 4, -1]]]
    with pytest.raises(ValueError, match="above the padded shape"):
        values(ds.padded_batch(2, padded_shapes=[2]))


def test_interleave_order_is_tf_datas():
    ds = Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(6),
                                        cycle_length=2, block_length=4)
    # The example of tf.data.Dataset.interleave's documentation.
    assert values(ds) == [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3,
                          4, 4, 5, 5, 5, 5, 5, 5]
    assert values(Dataset.range(3).flat_map(lambda x: Dataset.range(x))) == [0, 0, 1]


def test_interleave_matches_tensorflow_when_blocks_end_exactly():
    tf = pytest.importorskip("tensorflow")
    expected = list(tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(4), cycle_length=2,
        block_length=2).as_numpy_iterator())
    ours = values(Dataset.range(1, 6).interleave(lambda x: Dataset.from_tensors(x).repeat(4),
                                                 cycle_length=2, block_length=2))
    assert ours == [int(v) for v in expected]
