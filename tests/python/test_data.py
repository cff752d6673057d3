"""gpuaccel.data: values and order against NumPy, shuffle semantics, batching, map, repeat/take,
cardinality, prefetch overlap and its error/shutdown paths, and the C++ row gather."""
import gc
import threading
import time

import numpy as np
import pytest

import gpuaccel
from gpuaccel import _C
from gpuaccel.data import AUTOTUNE, Dataset, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY


def numpy_list(ds):
    return list(ds.as_numpy_iterator())


def xy(n=10, features=3):
    x = np.arange(n * features, dtype=np.float32).reshape(n, features)
    y = np.arange(n, dtype=np.int64) * 10
    return x, y


# ---- sources and structure ----

def test_slices_single_array_values_and_order():
    x, _ = xy()
    out = numpy_list(Dataset.from_tensor_slices(x))
    assert len(out) == 10
    for i, row in enumerate(out):
        np.testing.assert_array_equal(row, x[i])
        assert row.dtype == np.float32


def test_slices_tuple_yields_tuples_of_tensors():
    x, y = xy()
    elements = list(Dataset.from_tensor_slices((x, y)))
    assert len(elements) == 10
    for i, (a, b) in enumerate(elements):
        assert isinstance(a, gpuaccel.Tensor) and isinstance(b, gpuaccel.Tensor)
        assert a.shape == (3,) and b.shape == ()
        np.testing.assert_array_equal(a.numpy(), x[i])
        assert b.numpy() == y[i] and b.numpy().dtype == np.int64


def test_slices_dict_and_tensor_inputs():
    x, y = xy(6)
    ds = Dataset.from_tensor_slices({"image": gpuaccel.tensor(x), "label": y})
    out = numpy_list(ds)
    assert [sorted(e) for e in out] == [["image", "label"]] * 6
    np.testing.assert_array_equal(np.stack([e["image"] for e in out]), x)
    np.testing.assert_array_equal([e["label"] for e in out], y)


def test_slices_float64_becomes_float32_and_uint8_kept():
    out = numpy_list(Dataset.from_tensor_slices((np.linspace(0, 1, 4), np.arange(4, dtype=np.uint8))))
    assert out[0][0].dtype == np.float32 and out[0][1].dtype == np.uint8
    np.testing.assert_allclose([e[0] for e in out], np.linspace(0, 1, 4), rtol=1e-6)


def test_slices_length_mismatch_names_both_lengths():
    with pytest.raises(ValueError, match=r"component 0 has 5 and component 1 has 4"):
        Dataset.from_tensor_slices((np.zeros((5, 2)), np.zeros(4)))


def test_slices_scalar_is_an_error():
    with pytest.raises(ValueError, match="scalar"):
        Dataset.from_tensor_slices(np.float32(3.0))


# ---- batch ----

def test_batch_sizes_and_values():
    x, y = xy(10)
    batches = list(Dataset.from_tensor_slices((x, y)).batch(4))
    assert [b[0].shape for b in batches] == [(4, 3), (4, 3), (2, 3)]
    assert [b[1].shape for b in batches] == [(4,), (4,), (2,)]
    np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x)
    np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in batches]), y)
    dropped = list(Dataset.from_tensor_slices((x, y)).batch(4, drop_remainder=True))
    assert [b[0].shape[0] for b in dropped] == [4, 4]


def test_batch_after_map_stacks_elements():
    x, y = xy(7)
    ds = Dataset.from_tensor_slices((x, y)).map(lambda a, b: (a * 2.0, b + 1)).batch(3)
    batches = numpy_list(ds)
    assert [b[0].shape for b in batches] == [(3, 3), (3, 3), (1, 3)]
    np.testing.assert_allclose(np.concatenate([b[0] for b in batches]), x * 2)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in batches]), y + 1)


def test_batch_of_different_shapes_is_a_clear_error():
    ds = Dataset.range(3).map(lambda i: gpuaccel.zeros(int(i.numpy()) + 1)).batch(2)
    with pytest.raises(ValueError, match=r"different shapes.*\(1,\).*\(2,\)"):
        list(ds)


def test_batch_size_must_be_positive():
    with pytest.raises(ValueError, match=r"batch_size must be in \[1, 2\*\*63 - 1\], got 0"):
        Dataset.range(3).batch(0)


# ---- shuffle ----

def shuffled_order(ds):
    return [int(v) for v in np.concatenate([np.atleast_1d(e) for e in ds.as_numpy_iterator()])]


@pytest.mark.parametrize("buffer_size", [1, 3, 10, 100])
def test_shuffle_is_a_permutation(buffer_size):
    ds = Dataset.range(50).shuffle(buffer_size, seed=1)
    order = shuffled_order(ds)
    assert sorted(order) == list(range(50))
    if buffer_size == 1:
        assert order == list(range(50))  # a buffer of one cannot reorder
    else:
        assert order != list(range(50))


def test_shuffle_small_buffer_keeps_elements_near_their_place():
    order = shuffled_order(Dataset.range(200).shuffle(4, seed=3))
    # With a buffer of 4, element i cannot come out before position i - 3.
    assert all(pos >= value - 3 for pos, value in enumerate(order))


def test_shuffle_seeded_reproducible_and_reshuffled_per_epoch():
    make = lambda: Dataset.range(40).shuffle(40, seed=7)  # noqa: E731
    a, b = make(), make()
    first_a, second_a = shuffled_order(a), shuffled_order(a)
    assert first_a == shuffled_order(b)
    assert second_a == shuffled_order(b)
    assert first_a != second_a  # a new order each epoch
    fixed = Dataset.range(40).shuffle(40, seed=7, reshuffle_each_iteration=False)
    assert shuffled_order(fixed) == shuffled_order(fixed)


def test_shuffle_unseeded_differs_between_datasets():
    orders = {tuple(shuffled_order(Dataset.range(30).shuffle(30))) for _ in range(3)}
    assert len(orders) > 1


def test_shuffle_batch_fast_path_keeps_pairs_together():
    n = 1000
    x = np.random.default_rng(0).normal(size=(n, 5)).astype(np.float32)
    y = np.arange(n, dtype=np.int64)
    ds = Dataset.from_tensor_slices((x, y)).shuffle(n, seed=2).batch(64)
    assert ds.cardinality() == 16
    seen = []
    for bx, by in ds:
        np.testing.assert_array_equal(bx.numpy(), x[by.numpy()])  # rows stay with their labels
        seen.append(by.numpy())
    order = np.concatenate(seen)
    assert sorted(order.tolist()) == list(range(n)) and order.tolist() != list(range(n))
    second = np.concatenate([b[1].numpy() for b in ds])
    assert second.tolist() != order.tolist()


def test_shuffle_on_mapped_dataset_uses_a_buffer():
    ds = Dataset.range(30).map(lambda v: v * 2).shuffle(8, seed=5)
    order = shuffled_order(ds)
    assert sorted(order) == list(range(0, 60, 2)) and order != sorted(order)
    assert order == shuffled_order(Dataset.range(30).map(lambda v: v * 2).shuffle(8, seed=5))


# ---- map ----

def test_map_gets_tuple_parts_as_arguments():
    x, y = xy(5)
    calls = []

    def fn(a, b):
        calls.append((a.shape, b.shape))
        return a.sum(), b * 2

    out = numpy_list(Dataset.from_tensor_slices((x, y)).map(fn))
    assert calls == [((3,), ())] * 5
    np.testing.assert_allclose([e[0] for e in out], x.sum(axis=1))
    np.testing.assert_array_equal([e[1] for e in out], y * 2)


def test_map_dict_and_numpy_results_become_tensors():
    ds = Dataset.from_tensor_slices({"a": np.arange(3, dtype=np.float32)})
    out = list(ds.map(lambda d: np.float32(1.5) * d["a"].numpy()))
    assert all(isinstance(t, gpuaccel.Tensor) for t in out)
    np.testing.assert_allclose([t.numpy() for t in out], [0.0, 1.5, 3.0])


@pytest.mark.parametrize("calls", [2, AUTOTUNE])
def test_parallel_map_keeps_order(calls):
    out = shuffled_order(Dataset.range(40).map(lambda v: v + 1, num_parallel_calls=calls))
    assert out == list(range(1, 41))


# ---- repeat, take, cardinality, len ----

def test_repeat_take_values_and_cardinality():
    ds = Dataset.range(3)
    assert shuffled_order(ds.repeat(2)) == [0, 1, 2, 0, 1, 2]
    assert ds.repeat(2).cardinality() == 6
    assert ds.repeat().cardinality() == INFINITE_CARDINALITY
    assert shuffled_order(ds.repeat().take(7)) == [0, 1, 2, 0, 1, 2, 0]
    assert ds.repeat().take(7).cardinality() == 7
    assert ds.take(2).cardinality() == 2 and ds.take(10).cardinality() == 3
    assert ds.take(-1).cardinality() == 3
    assert shuffled_order(ds.take(2)) == [0, 1]
    assert Dataset.range(0).repeat().cardinality() == 0
    assert list(Dataset.range(0).repeat()) == []  # no endless loop over nothing


def test_cardinality_through_transformations():
    ds = Dataset.range(10)
    assert ds.batch(3).cardinality() == 4
    assert ds.batch(3, drop_remainder=True).cardinality() == 3
    assert ds.map(lambda v: v).shuffle(4).prefetch(2).cardinality() == 10
    assert ds.repeat().batch(3).cardinality() == INFINITE_CARDINALITY
    assert INFINITE_CARDINALITY == -1 and UNKNOWN_CARDINALITY == -2
    assert gpuaccel.data.AUTOTUNE == -1 and gpuaccel.data.experimental.AUTOTUNE == -1


def test_len_and_its_errors():
    assert len(Dataset.range(10).batch(4)) == 3
    with pytest.raises(TypeError, match="The dataset is infinite."):
        len(Dataset.range(3).repeat())


def test_take_on_shuffled_slices_is_a_subset():
    x, y = xy(20)
    batches = list(Dataset.from_tensor_slices((x, y)).shuffle(20, seed=0).take(7).batch(3))
    assert [b[1].shape[0] for b in batches] == [3, 3, 1]
    labels = np.concatenate([b[1].numpy() for b in batches])
    assert len(set(labels.tolist())) == 7


# ---- prefetch ----

def test_prefetch_values_and_order():
    x, y = xy(23)
    for depth in (1, 3, AUTOTUNE):
        batches = list(Dataset.from_tensor_slices((x, y)).batch(5).prefetch(depth))
        assert len(batches) == 5
        np.testing.assert_array_equal(np.concatenate([b[0].numpy() for b in batches]), x)
        np.testing.assert_array_equal(np.concatenate([b[1].numpy() for b in batches]), y)


def test_prefetch_keeps_dict_and_single_structures():
    ds = Dataset.from_tensor_slices({"a": np.arange(4), "b": np.ones(4)}).prefetch(2)
    out = numpy_list(ds)
    assert sorted(out[0]) == ["a", "b"] and [e["a"] for e in out] == [0, 1, 2, 3]
    single = list(Dataset.range(3).prefetch(1))
    assert all(isinstance(t, gpuaccel.Tensor) for t in single)


def test_prefetch_overlaps_producer_and_consumer():
    # Overlap is checked on the order of events, not on elapsed time (which depends on the
    # machine's load): with prefetching, the producer starts on batch k + 1 before the consumer
    # is done with batch k; run serially, it never does.
    delay, n = 0.02, 10
    events = []

    def slow(bx, by):
        events.append(("produce", time.perf_counter()))
        time.sleep(delay)
        return bx, by

    x, y = xy(n * 4)

    def overlapped(dataset):
        events.clear()
        consumed = []
        for _ in dataset:
            time.sleep(delay)
            consumed.append(time.perf_counter())
        assert len(consumed) == n
        starts = [t for kind, t in events if kind == "produce"]
        return any(starts[k + 1] < consumed[k] for k in range(n - 1))

    base = Dataset.from_tensor_slices((x, y)).batch(4).map(slow)
    assert overlapped(base.prefetch(AUTOTUNE))
    assert not overlapped(base)


class MapFailure(Exception):
    pass


def test_map_error_surfaces_in_consumer_with_its_type():
    def fn(v):
        if int(v.numpy()) == 3:
            raise MapFailure("element 3 is bad")
        return v

    for ds in (Dataset.range(6).map(fn).prefetch(2),
               Dataset.range(6).map(fn).batch(2).prefetch(1),
               Dataset.range(6).map(fn, num_parallel_calls=2)):
        got = []
        with pytest.raises(MapFailure, match="element 3 is bad"):
            for e in ds:
                got.append(e)
        assert len(got) >= 1  # what came before the error was delivered


def test_dropping_a_prefetching_iterator_midway_does_not_hang():
    produced = []

    def fn(v):
        produced.append(int(v.numpy()))
        return v

    ds = Dataset.range(10_000).map(fn).prefetch(3)
    threads_before = threading.active_count()

    def drop_iterators():
        for _ in range(20):
            it = iter(ds)
            next(it)
            next(it)
            del it
            gc.collect()
        for e in ds:  # and a `break` out of a for loop
            break

    # A watchdog for a hang, generous enough for any machine's load (no speed is asserted).
    worker = threading.Thread(target=drop_iterators, daemon=True)
    worker.start()
    worker.join(timeout=600)
    assert not worker.is_alive(), "dropping prefetching iterators hung"
    # Each abandoned iterator stopped after at most a few elements ahead of the consumer.
    assert len(produced) <= 21 * (2 + 3 + 2)


def test_prefetcher_binding_directly():
    items = [(gpuaccel.tensor([i]), gpuaccel.tensor([2 * i])) for i in range(5)]
    p = _C.Prefetcher(iter(items), 2)
    out = [(a.numpy()[0], b.numpy()[0]) for a, b in p]
    assert out == [(i, 2 * i) for i in range(5)]
    with pytest.raises(TypeError, match="gpuaccel Tensors"):
        next(_C.Prefetcher(iter([1, 2]), 1))
    with pytest.raises(ValueError, match="at least 1"):
        _C.Prefetcher(iter(items), 0)
    closed = _C.Prefetcher(iter(items), 1)
    closed.close()
    assert list(closed) == []


# ---- the C++ row gather ----

def test_gather_rows_matches_numpy_indexing():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 4, 2)).astype(np.float32)
    y = rng.integers(0, 9, size=50).astype(np.uint8)
    t = gpuaccel.tensor(rng.normal(size=(50, 3)).astype(np.float32))
    idx = rng.permutation(50)[:17]
    gx, gy, gt = _C.gather_rows([x, y, t], idx)
    np.testing.assert_array_equal(gx.numpy(), x[idx])
    np.testing.assert_array_equal(gy.numpy(), y[idx])
    np.testing.assert_array_equal(gt.numpy(), t.numpy()[idx])
    g64, = _C.gather_rows([x.astype(np.float64)], idx)
    assert g64._dtype_name == "float32"
    np.testing.assert_array_equal(g64.numpy(), x[idx])
    # a non-contiguous tensor view is read correctly
    view = gpuaccel.tensor(x[:, :, 0].T.copy()).T
    gv, = _C.gather_rows([view], idx)
    np.testing.assert_array_equal(gv.numpy(), x[:, :, 0][idx])


def test_gather_rows_errors():
    x = np.zeros((5, 2), np.float32)
    with pytest.raises(ValueError, match=r"index 5 at position 1 is out of range for 5 rows"):
        _C.gather_rows([x], np.array([0, 5]))
    with pytest.raises(ValueError, match="component 1 has 4 rows but component 0 has 5"):
        _C.gather_rows([x, np.zeros(4)], np.array([0]))
    with pytest.raises(ValueError, match="dtype <U1|dtype"):
        _C.gather_rows([np.array(["a", "b"])], np.array([0]))
