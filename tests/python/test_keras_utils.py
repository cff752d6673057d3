"""keras.utils against real Keras on the same inputs: pad_sequences, timeseries_dataset_from_array,
split_dataset, pack/unpack_x_y_sample_weight, normalize, img_to_array, and PyDataset subclasses
in fit/evaluate/predict (same batches, hooks, losses and weights). Seeded shuffles are compared
by their rule (same multiset, reproducible), not Keras's order."""
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

from gpuaccel import keras as gk  # noqa: E402

RNG = np.random.default_rng(32)
SERIES = RNG.normal(size=(20, 2)).astype(np.float32)
SERIES_TARGETS = np.arange(100, 120, dtype=np.int64)
X = RNG.normal(size=(12, 3)).astype(np.float32)
Y = RNG.normal(size=(12, 1)).astype(np.float32)
START = [RNG.normal(size=(3, 1)).astype(np.float32), np.zeros(1, np.float32)]


def as_lists(dataset):
    """Every element of a gpuaccel or tf.data dataset as nested NumPy arrays."""
    def numpy(value):
        if isinstance(value, tuple):
            return tuple(numpy(v) for v in value)
        return np.asarray(value)
    return [numpy(e) for e in dataset.as_numpy_iterator()]


def assert_same_elements(ours, theirs):
    mine, reference = as_lists(ours), as_lists(theirs)
    assert len(mine) == len(reference)
    for a, b in zip(mine, reference):
        for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,),
                        strict=True):
            assert x.shape == y.shape and x.dtype == y.dtype, (x, y)
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("kwargs", [
    {}, {"maxlen": 2}, {"maxlen": 4, "padding": "post", "truncating": "post", "value": -1},
    {"dtype": "float32", "padding": "post", "value": 0.5}])
def test_pad_sequences_matches_keras(kwargs):
    sequences = [[1, 2, 3], [4], [], [5, 6, 7, 8, 9]]
    ours = gk.utils.pad_sequences(sequences, **kwargs)
    theirs = keras.utils.pad_sequences(sequences, **kwargs)
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    frames = [RNG.normal(size=(n, 2)).astype(np.float32) for n in (1, 3)]
    np.testing.assert_array_equal(gk.utils.pad_sequences(frames, dtype="float32", maxlen=2),
                                  keras.utils.pad_sequences(frames, dtype="float32", maxlen=2))
    for bad in ({"padding": "middle"}, {"truncating": "both"}):
        with pytest.raises(ValueError, match="not understood"):
            gk.utils.pad_sequences(sequences, **bad)
        with pytest.raises(ValueError, match="not understood"):
            keras.utils.pad_sequences(sequences, **bad)


@pytest.mark.parametrize("kwargs", [
    {"sequence_length": 4, "sequence_stride": 3, "sampling_rate": 2, "batch_size": 2,
     "start_index": 2, "end_index": 17},
    {"sequence_length": 5, "batch_size": None},
    {"sequence_length": 3, "batch_size": 4}])
def test_timeseries_dataset_from_array_matches_keras(kwargs):
    for targets in (SERIES_TARGETS, None):
        assert_same_elements(gk.utils.timeseries_dataset_from_array(SERIES, targets, **kwargs),
                             keras.utils.timeseries_dataset_from_array(SERIES, targets, **kwargs))


def test_timeseries_shuffle_and_bad_indices():
    def pairs(utils, seed):
        ds = utils.timeseries_dataset_from_array(SERIES, SERIES_TARGETS, 3, batch_size=None,
                                                 shuffle=True, seed=seed)
        return [(tuple(np.round(s, 6).ravel()), int(t)) for s, t in ds.as_numpy_iterator()]

    ours, theirs = pairs(gk.utils, 5), pairs(keras.utils, 5)
    assert sorted(ours) == sorted(theirs) and ours != sorted(ours, key=lambda p: p[1])
    assert pairs(gk.utils, 5) == ours and pairs(gk.utils, 6) != ours
    for utils in (gk.utils, keras.utils):
        with pytest.raises(ValueError, match="start_index"):
            utils.timeseries_dataset_from_array(SERIES, None, 3, start_index=20)
        with pytest.raises(ValueError, match="end_index"):
            utils.timeseries_dataset_from_array(SERIES, None, 3, start_index=5, end_index=3)


@pytest.mark.parametrize("left, right", [(0.33, None), (None, 0.35), (3, None), (0.25, 0.5),
                                         (4, 4)])
def test_split_dataset_matches_keras(left, right):
    # int32: Keras 3.15 turns a lone int64 array into int32 elements (not one inside a tuple);
    # gpuaccel keeps the dtype it is given
    for data in (np.arange(10, dtype=np.int32), (np.arange(20).reshape(10, 2), np.arange(10))):
        ours = gk.utils.split_dataset(data, left_size=left, right_size=right)
        theirs = keras.utils.split_dataset(data, left_size=left, right_size=right)
        for mine, reference in zip(ours, theirs, strict=True):
            assert_same_elements(mine, reference)


def test_split_dataset_of_a_dataset_shuffle_and_errors():
    left, right = gk.utils.split_dataset(gk.utils.split_dataset(np.arange(10), left_size=8)[0],
                                         right_size=0.25)
    assert [int(v) for v in left] == list(range(6)) and [int(v) for v in right] == [6, 7]
    shuffled = [sorted(int(v) for v in part) for part in
                gk.utils.split_dataset(np.arange(10), left_size=4, shuffle=True, seed=1)]
    theirs = [sorted(int(v) for v in part) for part in
              keras.utils.split_dataset(np.arange(10), left_size=4, shuffle=True, seed=1)]
    for parts in (shuffled, theirs):  # the rule: a split of a permutation of all ten
        assert [len(p) for p in parts] == [4, 6] and sorted(sum(parts, [])) == list(range(10))
    assert shuffled != [list(range(4)), list(range(4, 10))]
    for bad, message in [({"left_size": 11}, "positive integer smaller than 10"),
                         ({"left_size": 0.0}, "float within the range"),
                         ({"left_size": 0.6, "right_size": 0.6}, "greater than 1"),
                         ({}, "At least one")]:
        with pytest.raises(ValueError, match=message):
            gk.utils.split_dataset(np.arange(10), **bad)
        with pytest.raises(ValueError, match=message):
            keras.utils.split_dataset(np.arange(10), **bad)


def test_pack_and_unpack_x_y_sample_weight_match_keras():
    for data in [(1, 2), [1, 2], 1, (1,), (1, 2, 3)]:
        assert gk.utils.unpack_x_y_sample_weight(data) == \
            keras.utils.unpack_x_y_sample_weight(data)
    for args in [(1,), (1, None, None), ((1,), 2), ([1, 2],), ((1, 2),), (1, 2, 3)]:
        assert gk.utils.pack_x_y_sample_weight(*args) == keras.utils.pack_x_y_sample_weight(*args)
    for utils in (gk.utils, keras.utils):
        with pytest.raises(ValueError, match="expected to be in format"):
            utils.unpack_x_y_sample_weight((1, 2, 3, 4))


def test_normalize_and_img_to_array_match_keras():
    for axis, order in [(-1, 2), (-1, 1), (1, 2)]:
        np.testing.assert_allclose(gk.utils.normalize(X, axis=axis, order=order),
                                   keras.utils.normalize(X, axis=axis, order=order), rtol=1e-6)
    image = RNG.integers(0, 255, size=(4, 5, 3)).astype(np.uint8)
    for img, fmt in [(image, None), (image, "channels_first"), (image[..., 0], None),
                     (image[..., 0], "channels_first")]:
        ours = gk.utils.img_to_array(img, data_format=fmt)
        theirs = keras.utils.img_to_array(img, data_format=fmt)
        assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
        np.testing.assert_array_equal(ours, theirs)
    for utils in (gk.utils, keras.utils):
        with pytest.raises(ValueError, match="Unsupported image shape"):
            utils.img_to_array(np.zeros(3))


def test_image_files_are_refused_with_advice():
    with pytest.raises(AttributeError, match="PIL.Image.open"):
        gk.utils.load_img("picture.png")
    assert callable(keras.utils.load_img)


def batches_class(base):
    """A PyDataset of 3 batches of 4 rows that records the indices it is asked for and its
    epoch hooks."""
    class Batches(base):
        def __init__(self, with_labels=True, **kwargs):
            super().__init__(**kwargs)
            self.with_labels, self.asked, self.epochs_ended = with_labels, [], 0

        def __len__(self):
            return 3

        def __getitem__(self, index):
            self.asked.append(index)
            rows = slice(4 * index, 4 * index + 4)
            return (X[rows], Y[rows]) if self.with_labels else X[rows]

        def on_epoch_end(self):
            self.epochs_ended += 1
    return Batches


def fit_on_py_dataset(framework, base, shuffle, epochs=2, then_evaluate=True):
    model = framework.Sequential([framework.Input((3,)), framework.layers.Dense(1)])
    model.set_weights(START)
    model.compile(optimizer=framework.optimizers.SGD(0.1), loss="mse")
    data = batches_class(base)(workers=1)
    history = model.fit(data, epochs=epochs, shuffle=shuffle, verbose=0)
    if not then_evaluate:
        return data
    evaluated = model.evaluate(batches_class(base)(), verbose=0)
    predicted = model.predict(batches_class(base)(with_labels=False), verbose=0)
    return data, history.history["loss"], model.get_weights(), evaluated, predicted


def test_py_dataset_trains_like_keras():
    ours = fit_on_py_dataset(gk, gk.utils.PyDataset, shuffle=False)
    theirs = fit_on_py_dataset(keras, keras.utils.PyDataset, shuffle=False)
    # Keras on TensorFlow first reads batches 0 and 1 once (to learn the input spec) and calls
    # on_epoch_end once more; the epochs themselves read the same indices
    assert ours[0].asked == theirs[0].asked[-6:] == [0, 1, 2, 0, 1, 2]
    assert ours[0].epochs_ended == 2 and theirs[0].epochs_ended >= 2
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5)
    for mine, reference in zip(ours[2], theirs[2], strict=True):
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[3], theirs[3], rtol=1e-5)
    np.testing.assert_allclose(ours[4], theirs[4], rtol=1e-5, atol=1e-6)
    assert gk.utils.Sequence is gk.utils.PyDataset and keras.utils.Sequence is \
        keras.utils.PyDataset


def test_py_dataset_shuffle_reorders_each_epochs_batches():
    for framework, base in ((gk, gk.utils.PyDataset), (keras, keras.utils.PyDataset)):
        framework.utils.set_random_seed(4)  # Keras draws the order from Python's random
        asked = fit_on_py_dataset(framework, base, True, epochs=6, then_evaluate=False).asked
        epochs = [asked[-18:][3 * i:3 * i + 3] for i in range(6)]
        assert all(sorted(epoch) == [0, 1, 2] for epoch in epochs)  # every batch once an epoch
        assert any(epoch != [0, 1, 2] for epoch in epochs)
    model = gk.Sequential([gk.Input((3,)), gk.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    with pytest.raises(ValueError, match="PyDataset"):
        model.fit(batches_class(gk.utils.PyDataset)(), Y, verbose=0)
