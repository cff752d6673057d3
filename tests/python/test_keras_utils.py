"""keras.utils against real Keras on the same inputs: pad_sequences, timeseries_dataset_from_array,
split_dataset, pack/unpack_x_y_sample_weight, normalize, img_to_array, load_img/array_to_img/
save_img (the same PIL images and files), and PyDataset subclasses
in fit/evaluate/predict (same batches, hooks, losses and weights). Seeded shuffles are compared
by their rule (same multiset, reproducible), not Keras's order."""
import contextlib
import io
import os
import sys

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import keras  # noqa: E402

from gpuaccel import keras as gk  # noqa: E402
from tf_comparison import raised  # noqa: E402

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


@pytest.fixture(scope="module")
def image_files(tmp_path_factory):
    """A 7x10 RGB PNG and JPEG, an RGBA PNG and a grayscale PNG of seeded pixels."""
    from PIL import Image
    folder = tmp_path_factory.mktemp("images")
    rgb = RNG.integers(0, 256, size=(7, 10, 3)).astype(np.uint8)
    files = {"rgb.png": Image.fromarray(rgb, "RGB"), "rgb.jpg": Image.fromarray(rgb, "RGB"),
             "rgba.png": Image.fromarray(RNG.integers(0, 256, size=(7, 10, 4)).astype(
                 np.uint8), "RGBA"),
             "gray.png": Image.fromarray(rgb[..., 0], "L")}
    for name, image in files.items():
        image.save(folder / name)
    return folder


def _same_image(ours, theirs):
    assert (ours.mode, ours.size) == (theirs.mode, theirs.size)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


@pytest.mark.parametrize("name,kwargs", [
    ("rgb.png", {}), ("rgb.jpg", {}), ("rgba.png", {}), ("gray.png", {}),
    ("rgb.png", {"color_mode": "grayscale"}), ("gray.png", {"color_mode": "rgba"}),
    ("rgba.png", {"color_mode": "rgb", "target_size": (4, 6)}),
    ("rgb.jpg", {"target_size": (5, 3), "interpolation": "bilinear"}),
    ("rgb.png", {"target_size": (9, 4), "interpolation": "bicubic", "keep_aspect_ratio": True}),
    ("rgb.png", {"target_size": (3, 8), "interpolation": "lanczos", "keep_aspect_ratio": True}),
    ("rgb.png", {"target_size": (7, 10), "interpolation": "no such filter"})])
def test_load_img_gives_kerass_pil_image(image_files, name, kwargs):
    _same_image(gk.utils.load_img(str(image_files / name), **kwargs),
                keras.utils.load_img(str(image_files / name), **kwargs))
    data = (image_files / name).read_bytes()
    _same_image(gk.utils.load_img(io.BytesIO(data), **kwargs),
                keras.utils.load_img(io.BytesIO(data), **kwargs))
    _same_image(gk.utils.load_img(image_files / name, **kwargs),
                keras.utils.load_img(image_files / name, **kwargs))


@pytest.mark.parametrize("args,kwargs", [
    ((3,), {}), (("rgb.png",), {"color_mode": "cmyk"}),
    (("rgb.png",), {"target_size": (4, 4), "interpolation": "no such filter"})])
def test_load_img_errors_are_kerass(image_files, args, kwargs):
    args = tuple(str(image_files / a) if isinstance(a, str) else a for a in args)
    theirs = raised(keras.utils.load_img, *args, **kwargs)
    assert theirs is not None
    assert raised(gk.utils.load_img, *args, **kwargs) == theirs


ARRAYS = {"float_rgb": RNG.normal(size=(4, 5, 3)).astype(np.float32),
          "rgba": RNG.integers(0, 256, size=(4, 5, 4)).astype(np.float32),
          "one_channel": RNG.integers(0, 256, size=(4, 5, 1)).astype(np.float32),
          "wide_range": RNG.integers(0, 1000, size=(4, 5, 1)).astype(np.float32),
          "constant": np.full((3, 2, 3), 7.0, np.float32),
          "channels_first": RNG.normal(size=(3, 4, 5)).astype(np.float32)}


@pytest.mark.parametrize("name,kwargs", [
    ("float_rgb", {}), ("rgba", {"scale": False}), ("one_channel", {"scale": False}),
    ("wide_range", {"scale": False}), ("constant", {}), ("float_rgb", {"dtype": "float16"}),
    ("channels_first", {"data_format": "channels_first"})])
def test_array_to_img_gives_kerass_pil_image(name, kwargs):
    _same_image(gk.utils.array_to_img(ARRAYS[name], **kwargs),
                keras.utils.array_to_img(ARRAYS[name], **kwargs))


@pytest.mark.parametrize("array,kwargs", [
    (np.zeros((4, 5)), {}), (np.zeros((4, 5, 2)), {}), (np.zeros((4, 5, 3)),
                                                         {"data_format": "channels_middle"})])
def test_array_to_img_errors_are_kerass(array, kwargs):
    theirs = raised(keras.utils.array_to_img, array, **kwargs)
    assert theirs is not None
    assert raised(gk.utils.array_to_img, array, **kwargs) == theirs


@pytest.mark.parametrize("file_name,kwargs", [
    ("a.png", {}), ("a.jpg", {}), ("a.JPG", {"quality": 50}), ("a.bin", {"file_format": "png"})])
def test_save_img_writes_kerass_file(tmp_path, file_name, kwargs):
    from PIL import Image
    jpeg = file_name.lower().endswith("jpg")  # RGBA to JPEG: written as RGB, with a warning
    array = ARRAYS["rgba"] if jpeg else ARRAYS["float_rgb"]
    for library, folder in ((gk, "ours"), (keras, "theirs")):
        (tmp_path / folder).mkdir()
        with pytest.warns(UserWarning, match="RGBA") if jpeg else contextlib.nullcontext():
            library.utils.save_img(tmp_path / folder / file_name, array, **kwargs)
    assert (tmp_path / "ours" / file_name).read_bytes() == \
        (tmp_path / "theirs" / file_name).read_bytes()
    assert Image.open(tmp_path / "ours" / file_name).size == (5, 4)


@pytest.fixture(scope="module")
def class_folders(tmp_path_factory):
    """Two class folders of seeded PNGs of several sizes (one grayscale, one in a nested
    folder), plus files and folders Keras skips (a .txt, a hidden folder)."""
    from PIL import Image
    root = tmp_path_factory.mktemp("classes")
    sizes = {"cats/a.png": (7, 9), "cats/b.png": (6, 6), "cats/c.png": (9, 5),
             "dogs/d.png": (8, 10), "dogs/inner/e.png": (5, 7), "dogs/f.png": (6, 8)}
    for name, (height, width) in sizes.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        pixels = RNG.integers(0, 256, size=(height, width, 3)).astype(np.uint8)
        image = Image.fromarray(pixels[..., 0], "L") if name == "dogs/f.png" else \
            Image.fromarray(pixels, "RGB")
        image.save(root / name)
    (root / "cats" / "notes.txt").write_text("not an image")
    (root / ".cache").mkdir()
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(root / ".cache" / "x.png")
    return root


def _batches(dataset):
    return [tuple(np.asarray(part) for part in batch) if isinstance(batch, tuple)
            else (np.asarray(batch),) for batch in dataset]


@pytest.mark.parametrize("kwargs", [
    {"image_size": (5, 6), "batch_size": 4},
    {"image_size": (4, 4), "label_mode": "categorical", "crop_to_aspect_ratio": True,
     "interpolation": "nearest", "batch_size": None},
    {"image_size": (6, 4), "label_mode": "binary", "pad_to_aspect_ratio": True,
     "interpolation": "bicubic"},
    {"image_size": 3, "labels": None, "color_mode": "rgba", "data_format": "channels_first"},
    {"image_size": (3, 5), "class_names": ["dogs", "cats"], "interpolation": "area"},
])  # (not color_mode='grayscale' of colour files: PIL's and TF's grey weights differ)
def test_image_dataset_from_directory_matches_keras(class_folders, capsys, kwargs):
    kwargs = {"shuffle": False, **kwargs}
    ours = gk.utils.image_dataset_from_directory(str(class_folders), **kwargs)
    our_output = capsys.readouterr().out
    theirs = keras.utils.image_dataset_from_directory(str(class_folders), **kwargs)
    assert our_output == capsys.readouterr().out
    assert ours.class_names == theirs.class_names
    assert ours.file_paths == theirs.file_paths
    our_batches, their_batches = _batches(ours), _batches(theirs)
    assert len(our_batches) == len(their_batches)
    for our_batch, their_batch in zip(our_batches, their_batches):
        for mine, expected in zip(our_batch, their_batch):
            assert mine.dtype == expected.dtype and mine.shape == expected.shape
            np.testing.assert_allclose(mine, expected, rtol=1e-5, atol=1e-3)


def test_image_dataset_split_and_shuffle_follow_kerass_seeded_order(class_folders, capsys):
    kwargs = {"image_size": (4, 4), "seed": 3, "validation_split": 0.34, "subset": "both",
              "batch_size": 2}
    ours = gk.utils.image_dataset_from_directory(str(class_folders), **kwargs)
    our_output = capsys.readouterr().out
    theirs = keras.utils.image_dataset_from_directory(str(class_folders), **kwargs)
    assert our_output == capsys.readouterr().out
    assert "Using 4 files for training." in our_output
    for our_part, their_part in zip(ours, theirs):
        assert our_part.file_paths == their_part.file_paths
    # validation is not shuffled: the same batches; training: the same images in some order
    for mine, expected in zip(_batches(ours[1]), _batches(theirs[1])):
        np.testing.assert_allclose(mine[0], expected[0], atol=1e-3)
        np.testing.assert_array_equal(mine[1], expected[1])
    our_train = np.concatenate([b[0] for b in _batches(ours[0])])
    their_train = np.concatenate([b[0] for b in _batches(theirs[0])])
    order = np.argsort(our_train.reshape(len(our_train), -1).sum(1))
    their_order = np.argsort(their_train.reshape(len(their_train), -1).sum(1))
    np.testing.assert_allclose(our_train[order], their_train[their_order], atol=1e-3)


@pytest.mark.parametrize("kwargs", [
    {"labels": "folders"}, {"labels": [0, 1], "class_names": ["a"]}, {"label_mode": "sparse"},
    {"color_mode": "cmyk"}, {"image_size": (1, 2, 3)}, {"interpolation": "cubic"},
    {"validation_split": 1.5, "subset": "training", "seed": 1},
    {"validation_split": 0.2}, {"validation_split": 0.2, "subset": "testing", "seed": 1},
    {"validation_split": 0.2, "subset": "training"}, {"class_names": ["cats", "birds"]},
    {"labels": [0, 1, 0]}, {"labels": None, "class_names": ["cats"]},
    {"label_mode": "binary", "class_names": ["cats"]},
])
def test_image_dataset_from_directory_errors_are_kerass(class_folders, capsys, kwargs):
    theirs = raised(keras.utils.image_dataset_from_directory, str(class_folders), **kwargs)
    assert theirs is not None
    assert raised(gk.utils.image_dataset_from_directory, str(class_folders), **kwargs) == theirs


def _functional_graph(k):
    """Two named inputs merged, a Dense, then the first input again: (output, first input)."""
    first, second = k.Input((3,), name="first"), k.Input((3,), name="second")
    merged = k.layers.Dense(2)(k.layers.Add()([second, first]))
    return k.layers.Concatenate()([merged, first]), first


def test_get_source_inputs_and_is_keras_tensor_match_keras():
    for k in (gk, keras):
        output, first = _functional_graph(k)
        assert [t.name for t in k.utils.get_source_inputs(output)] == ["second", "first"]
        assert k.utils.get_source_inputs(first) == [first]
        assert k.utils.is_keras_tensor(output) and k.utils.is_keras_tensor(first)
        assert not k.utils.is_keras_tensor(np.zeros(3))
        assert not k.utils.is_keras_tensor(k.ops.convert_to_tensor(np.zeros(3)))
    array = np.zeros(2)
    assert gk.utils.get_source_inputs(array) is array and \
        keras.utils.get_source_inputs(array) is array


@pytest.mark.parametrize("dtype", [None, "float32", "int8", "bfloat16", "string", int, float,
                                   bool, "int", np.float16, np.dtype("uint8"), "float64",
                                   "complex64", "float", "int33", 3.5])
def test_standardize_dtype_matches_keras(dtype):
    ours = raised(gk.utils.standardize_dtype, dtype) or gk.utils.standardize_dtype(dtype)
    assert ours == (raised(keras.utils.standardize_dtype, dtype)
                    or keras.utils.standardize_dtype(dtype))


def test_clear_session_restarts_the_automatic_names_as_kerass():
    for k in (gk, keras):
        k.utils.clear_session()
        before = [k.layers.Dense(1).name, k.layers.Dense(1).name, k.Input((2,)).name,
                  k.Input((2,)).name, k.optimizers.Adam().name, k.optimizers.Adam().name]
        k.utils.clear_session(free_memory=False)
        after = [k.layers.Dense(1).name, k.Input((2,)).name, k.optimizers.Adam().name]
        # (a Keras Input's tensor is named 'keras_tensor...', gpuaccel's after its layer)
        assert before[:2] + before[4:] == ["dense", "dense_1", "adam", "adam_1"]
        assert before[2] != before[3] and after == ["dense", before[2], "adam"]


def _keras_objects(k):
    """One object of each family, with arguments both frameworks configure alike (and a name
    given where Keras would number it: the count depends on what the suite made before)."""
    return [k.activations.relu, k.losses.MeanSquaredError(),
            k.optimizers.Adam(0.01, name="adam"), k.initializers.GlorotUniform(seed=1),
            k.regularizers.L2(0.1), k.constraints.NonNeg(),
            k.optimizers.schedules.ExponentialDecay(0.1, 10, 0.5), "relu", 3, None,
            [1, k.regularizers.L1(0.2)], (1, 2.5), {"a": k.constraints.UnitNorm(axis=0)}]


def test_serialize_keras_object_writes_kerass_configs():
    for ours, theirs in zip(_keras_objects(gk), _keras_objects(keras)):
        assert gk.utils.serialize_keras_object(ours) == \
            keras.saving.serialize_keras_object(theirs)
    assert gk.saving.serialize_keras_object is gk.utils.serialize_keras_object


def test_deserialize_keras_object_reads_kerass_configs():
    for theirs in _keras_objects(keras) + [keras.metrics.AUC(name="auc"),
                                           keras.layers.Dropout(0.3, name="drop")]:
        config = keras.saving.serialize_keras_object(theirs)
        ours = gk.saving.deserialize_keras_object(config)
        if hasattr(theirs, "get_config"):
            assert type(ours).__name__ == type(theirs).__name__
            expected, got = theirs.get_config(), ours.get_config()
            shared = [k for k in expected if k in got and not isinstance(expected[k], dict)]
            assert (shared or not expected) and \
                {k: got[k] for k in shared} == {k: expected[k] for k in shared}
        elif callable(theirs):
            assert ours is gk.activations.relu
        else:
            assert gk.utils.serialize_keras_object(ours) == config
    # and back: Keras reads what gpuaccel writes
    for ours in _keras_objects(gk)[1:7]:
        again = keras.saving.deserialize_keras_object(gk.utils.serialize_keras_object(ours))
        assert again.get_config() == ours.get_config()


def test_deserialize_keras_object_finds_custom_classes_and_refuses_unknown_ones():
    class Scale(gk.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def call(self, inputs):
            return inputs * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    config = {"module": "my_package", "class_name": "Scale", "config": {"factor": 3.0},
              "registered_name": "Scale"}
    layer = gk.utils.deserialize_keras_object(config, custom_objects={"Scale": Scale})
    assert isinstance(layer, Scale) and layer.factor == 3.0
    with pytest.raises(TypeError, match="Could not locate class 'Scale'"):
        gk.utils.deserialize_keras_object(config)
    with pytest.raises(TypeError, match="Could not locate class 'Scale'"):
        keras.saving.deserialize_keras_object(config)


def test_image_files_without_pil_name_the_package_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "PIL", None)  # `from PIL import Image` now fails
    for call, args in ((gk.utils.load_img, ("picture.png",)),
                       (gk.utils.array_to_img, (np.zeros((2, 2, 3)),)),
                       (gk.utils.save_img, ("picture.png", np.zeros((2, 2, 3))))):
        with pytest.raises(ImportError, match="pip install pillow"):
            call(*args)


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
