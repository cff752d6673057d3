"""Files and images in input pipelines, against real TensorFlow on the same bytes: ``tf.io``
(read_file, write_file, gfile with TF's errors), the image codecs of ``tf.image``/``tf.io``
(PNG/BMP/GIF pixels exact, JPEG within libjpeg's rounding), ``Dataset.list_files`` and datasets
of paths, and ``py_function``/``numpy_function`` (eager, inside ``Dataset.map``, gradients).
Every image is generated here from seeded NumPy data and encoded by PIL or by the framework."""
import io
import os

import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import errors
from gpuaccel._host_strings import HostString

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")
Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(41)
RGB = RNG.integers(0, 256, (9, 11, 3), dtype=np.uint8)
RGBA = RNG.integers(0, 256, (6, 5, 4), dtype=np.uint8)
GRAY = RNG.integers(0, 256, (7, 4), dtype=np.uint8)
GRAY16 = RNG.integers(0, 65536, (4, 6), dtype=np.uint16)


def _encoded(array, fmt, **options):
    buffer = io.BytesIO()
    Image.fromarray(array).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def _animated_gif():
    frames = [Image.fromarray(RNG.integers(0, 256, (4, 6, 3), dtype=np.uint8)) for _ in range(3)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:])
    return buffer.getvalue()


FILES = {"png": _encoded(RGB, "PNG"), "rgba_png": _encoded(RGBA, "PNG"),
         "gray_png": _encoded(GRAY, "PNG"), "png16": _encoded(GRAY16, "PNG"),
         "bmp": _encoded(RGB, "BMP"), "gif": _encoded(RGB, "GIF"), "anim_gif": _animated_gif(),
         "jpeg": _encoded(RGB, "JPEG", quality=90), "gray_jpeg": _encoded(GRAY, "JPEG")}


def _jpeg_close(ours, theirs):
    """libjpeg's fast DCT (TF's default) rounds otherwise than the accurate one (PIL's): the
    rule is a mean difference under two levels and no pixel off by more than a few. (On these
    noise images the mean is 1.1 to 1.7 levels, the largest gap 8; smooth images differ less.)"""
    assert ours.shape == theirs.shape
    diff = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
    assert diff.mean() < 2.0 and diff.max() <= 8, (diff.mean(), diff.max())


# ---- item 2: decoders, exact for PNG/BMP/GIF ----

@pytest.mark.parametrize("op,name,channels", [
    ("decode_png", "png", 0), ("decode_png", "png", 1), ("decode_png", "png", 4),
    ("decode_png", "rgba_png", 0), ("decode_png", "rgba_png", 1), ("decode_png", "rgba_png", 3),
    ("decode_png", "gray_png", 3), ("decode_png", "gray_png", 4), ("decode_png", "png16", 0),
    ("decode_png", "gif", 0), ("decode_bmp", "bmp", 0), ("decode_bmp", "bmp", 4),
    ("decode_image", "bmp", 0), ("decode_image", "gif", 0), ("decode_image", "anim_gif", 3),
    ("decode_gif", "anim_gif", None), ("decode_gif", "png", None), ("decode_jpeg", "png", 1)])
def test_lossless_decoding_is_tensorflows_pixel_for_pixel(op, name, channels):
    kwargs = {} if channels is None else {"channels": channels}
    ours = getattr(ga.image, op)(FILES[name], **kwargs)
    theirs = getattr(tf.io, op)(FILES[name], **kwargs).numpy()
    assert ours.dtype == ga.uint8
    assert tuple(ours.shape) == theirs.shape
    np.testing.assert_array_equal(ours.numpy(), theirs)


def test_tf_image_codecs_are_tf_io_codecs_as_in_tensorflow():
    assert ga.image.decode_png is ga.io.decode_png and tf.image.decode_png is tf.io.decode_png
    np.testing.assert_array_equal(ga.image.decode_png(FILES["gray_png"], channels=1).numpy(),
                                  tf.image.decode_png(FILES["gray_png"], channels=1).numpy())
    np.testing.assert_array_equal(ga.image.decode_bmp(FILES["bmp"], channels=3).numpy(),
                                  tf.image.decode_bmp(FILES["bmp"], channels=3).numpy())
    np.testing.assert_array_equal(ga.image.decode_gif(FILES["gif"]).numpy(),
                                  tf.image.decode_gif(FILES["gif"]).numpy())
    # encoders: the same pixels back through TF's decoders (the bytes may differ: zlib, libjpeg)
    np.testing.assert_array_equal(tf.image.decode_png(ga.image.encode_png(RGB).numpy()).numpy(),
                                  tf.image.decode_png(tf.image.encode_png(RGB)).numpy())
    _jpeg_close(tf.io.decode_jpeg(ga.image.encode_jpeg(RGB, quality=80).numpy()).numpy(),
                tf.io.decode_jpeg(tf.image.encode_jpeg(RGB, quality=80)).numpy())


@pytest.mark.parametrize("name,channels", [("jpeg", 0), ("jpeg", 1), ("jpeg", 3),
                                           ("gray_jpeg", 0), ("gray_jpeg", 3)])
def test_jpeg_decoding_is_tensorflows_accurate_dct_and_near_its_default(name, channels):
    ours = ga.io.decode_jpeg(FILES[name], channels=channels).numpy()
    accurate = tf.io.decode_jpeg(FILES[name], channels=channels, dct_method="INTEGER_ACCURATE")
    np.testing.assert_array_equal(ours, accurate.numpy())
    _jpeg_close(ours, tf.io.decode_jpeg(FILES[name], channels=channels).numpy())


def test_jpeg_ratio_downscales_in_libjpeg_as_tensorflow():
    for ratio in (2, 4):
        ours = ga.image.decode_jpeg(FILES["jpeg"], ratio=ratio).numpy()
        theirs = tf.io.decode_jpeg(FILES["jpeg"], ratio=ratio, dct_method="INTEGER_ACCURATE")
        np.testing.assert_array_equal(ours, theirs.numpy())
    with pytest.raises(errors.UnimplementedError, match="fancy_upscaling"):
        ga.image.decode_jpeg(FILES["jpeg"], fancy_upscaling=False)


def test_decode_image_dtypes_and_animations_follow_tensorflow():
    for name in ("png", "png16", "bmp", "gif"):  # float32: TF's own roundings, bit for bit
        ours = ga.image.decode_image(FILES[name], dtype=ga.float32)
        theirs = tf.io.decode_image(FILES[name], dtype=tf.float32).numpy()
        assert ours.dtype == ga.float32
        np.testing.assert_array_equal(ours.numpy(), theirs)
    first = ga.image.decode_image(FILES["anim_gif"], expand_animations=False)
    np.testing.assert_array_equal(
        first.numpy(), tf.io.decode_image(FILES["anim_gif"], expand_animations=False).numpy())
    assert ga.image.decode_image(FILES["png"]).ndim == 3
    with pytest.raises(TypeError, match="no uint16"):
        ga.image.decode_png(FILES["png16"], dtype="uint16")


@pytest.mark.parametrize("op,data,kwargs,match", [
    ("decode_jpeg", b"garbage", {}, "Unknown image file format"),
    ("decode_png", FILES["png"][:40], {}, "Invalid PNG"),
    ("decode_jpeg", FILES["jpeg"][:200], {}, "Invalid JPEG"),
    ("decode_png", FILES["bmp"], {}, "decode_bmp"),
    ("decode_bmp", FILES["png"], {}, "DecodeBmp"),
    ("decode_png", FILES["anim_gif"], {}, "animated gifs"),
    ("decode_png", FILES["png"], {"channels": 2}, "must be 0, 1, 3 or 4"),
    ("decode_bmp", FILES["bmp"], {"channels": 1}, "for BMP"),
    ("decode_jpeg", FILES["jpeg"], {"channels": 4}, "4 channels"),
    ("decode_image", FILES["gif"], {"channels": 1}, "0 or 3 for GIF")])
def test_bad_image_bytes_raise_invalid_argument_as_tensorflow(op, data, kwargs, match):
    with pytest.raises(tf.errors.InvalidArgumentError):
        getattr(tf.io, op)(data, **kwargs)
    with pytest.raises(errors.InvalidArgumentError, match=match):
        getattr(ga.io, op)(data, **kwargs)


def test_encoders_round_trip_through_tensorflows_decoders():
    png = ga.image.encode_png(ga.tensor(RGBA))
    assert isinstance(png, HostString)
    np.testing.assert_array_equal(tf.io.decode_png(png.numpy()).numpy(), RGBA)
    ours = tf.io.decode_jpeg(ga.io.encode_jpeg(RGB).numpy()).numpy()
    theirs = tf.io.decode_jpeg(tf.io.encode_jpeg(RGB)).numpy()
    _jpeg_close(ours, theirs)
    gray = ga.io.encode_jpeg(RGB[..., :1])
    assert tf.io.decode_jpeg(gray.numpy()).shape == (9, 11, 1)
    with pytest.raises(errors.InvalidArgumentError, match="1 or 3 channels"):
        ga.io.encode_jpeg(RGBA)
    with pytest.raises(TypeError, match="must be uint8"):
        ga.io.encode_png(RGB.astype(np.float32))


def test_is_jpeg_and_extract_jpeg_shape_match_tensorflow():
    for name in ("jpeg", "png", "gray_jpeg"):
        assert bool(ga.image.is_jpeg(FILES[name]).numpy()) == bool(tf.image.is_jpeg(FILES[name]))
    np.testing.assert_array_equal(ga.io.is_jpeg([FILES["jpeg"], FILES["png"]]).numpy(),
                                  tf.io.is_jpeg([FILES["jpeg"], FILES["png"]]).numpy())
    for name, output_type in (("jpeg", "int32"), ("gray_jpeg", "int64")):
        ours = ga.image.extract_jpeg_shape(FILES[name], output_type=output_type)
        theirs = tf.image.extract_jpeg_shape(FILES[name], output_type=output_type)
        assert ours.dtype.name == theirs.dtype.name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    with pytest.raises(errors.InvalidArgumentError, match="Invalid JPEG data"):
        ga.io.extract_jpeg_shape(FILES["png"])


# ---- item 1: tf.io files and gfile ----

def test_read_and_write_file_match_tensorflow(tmp_path):
    path = str(tmp_path / "sub" / "dir" / "a.bin")  # write_file creates missing parents
    payload = b"\x00bytes\xff\x00"
    ga.io.write_file(path, payload)
    tf_path = str(tmp_path / "tf" / "a.bin")
    tf.io.write_file(tf_path, payload)
    contents = ga.io.read_file(path)
    assert contents.numpy() == tf.io.read_file(tf_path).numpy() == payload
    assert type(contents.numpy()) is bytes and tuple(contents.shape) == ()
    ga.io.write_file(path, "héllo")  # str is written as UTF-8
    assert ga.io.read_file(path).numpy() == "héllo".encode()
    for call, error in ((lambda io_: io_.read_file(str(tmp_path / "missing")),
                         "NotFoundError"),
                        (lambda io_: io_.read_file(str(tmp_path)), "FailedPreconditionError")):
        with pytest.raises(getattr(tf.errors, error)):
            call(tf.io)
        with pytest.raises(getattr(errors, error)):
            call(ga.io)


def _gfile_calls(root):
    """(name, call) pairs run on both gfiles in the same fresh folder."""
    return [
        ("exists", lambda g: (g.exists(f"{root}/a.txt"), g.exists(f"{root}/nope"))),
        ("isdir", lambda g: (g.isdir(f"{root}/d"), g.isdir(f"{root}/a.txt"))),
        ("listdir", lambda g: sorted(g.listdir(root))),
        ("listdir missing", lambda g: g.listdir(f"{root}/nope")),
        ("glob", lambda g: sorted(g.glob(f"{root}/*.txt"))),
        ("makedirs", lambda g: (g.makedirs(f"{root}/m/n"), g.isdir(f"{root}/m/n"))),
        ("makedirs over file", lambda g: g.makedirs(f"{root}/a.txt/x")),
        ("copy", lambda g: (g.copy(f"{root}/a.txt", f"{root}/b.txt"),
                            g.GFile(f"{root}/b.txt").read())),
        ("copy exists", lambda g: g.copy(f"{root}/a.txt", f"{root}/b.txt")),
        ("copy overwrite", lambda g: g.copy(f"{root}/a.txt", f"{root}/b.txt", overwrite=True)),
        ("rename exists", lambda g: g.rename(f"{root}/b.txt", f"{root}/a.txt")),
        ("rename", lambda g: (g.rename(f"{root}/b.txt", f"{root}/c.txt"),
                              g.exists(f"{root}/b.txt"))),
        ("remove missing", lambda g: g.remove(f"{root}/nope")),
        ("remove dir", lambda g: g.remove(f"{root}/d")),
        ("walk", lambda g: [(os.path.relpath(p, root), sorted(ds), sorted(fs))
                            for p, ds, fs in g.walk(root)]),
        ("walk missing", lambda g: list(g.walk(f"{root}/nope"))),
        ("read text", lambda g: g.GFile(f"{root}/a.txt").readlines()),
        ("read bytes", lambda g: g.GFile(f"{root}/a.txt", "rb").read(4)),
        ("size", lambda g: g.GFile(f"{root}/a.txt").size()),
        ("stat", lambda g: (g.stat(f"{root}/a.txt").length, g.stat(f"{root}/d").is_directory)),
        ("read missing", lambda g: g.GFile(f"{root}/nope").read()),
        ("write read-only", lambda g: g.GFile(f"{root}/a.txt").write("x")),
        ("bad mode", lambda g: g.GFile(f"{root}/a.txt", "x")),
        ("rmtree", lambda g: (g.rmtree(f"{root}/m"), g.exists(f"{root}/m"))),
        ("rmtree missing", lambda g: g.rmtree(f"{root}/nope")),
    ]


def _outcome(call, gfile):
    try:
        return "ok", call(gfile)
    except Exception as error:  # noqa: BLE001 - the error's class name is what is compared
        return "error", type(error).__name__


def test_gfile_matches_tensorflows_results_and_errors(tmp_path):
    outcomes = {}
    for face, gfile in (("tf", tf.io.gfile), ("ga", ga.io.gfile)):
        root = tmp_path / face
        (root / "d" / "e").mkdir(parents=True)
        (root / "a.txt").write_text("line1\nline2")
        (root / "d" / "f.txt").write_text("x")
        outcomes[face] = [(name, _outcome(call, gfile)) for name, call in _gfile_calls(root)]
    for (name, theirs), (_, ours) in zip(outcomes["tf"], outcomes["ga"]):
        if ours[0] == "ok" and name == "glob":
            ours = ("ok", [p.replace(f"{os.sep}ga{os.sep}", f"{os.sep}tf{os.sep}")
                           for p in ours[1]])
        assert ours == theirs, name
    with ga.io.gfile.GFile(str(tmp_path / "w.txt"), "w") as f:
        f.write("abc")
        f.write(b"def")
    with ga.io.gfile.GFile(str(tmp_path / "w.txt"), "a") as f:
        f.write("g")
    assert (tmp_path / "w.txt").read_text() == "abcdefg"


# ---- item 3: list_files and datasets of paths ----

@pytest.fixture(scope="module")
def image_folder(tmp_path_factory):
    """Six generated images (JPEG and PNG) in a fresh folder."""
    root = tmp_path_factory.mktemp("images")
    for i in range(6):
        array = RNG.integers(0, 256, (12 + i, 10, 3), dtype=np.uint8)
        fmt = "PNG" if i % 2 else "JPEG"
        (root / f"img_{i}.{fmt.lower()}").write_bytes(_encoded(array, fmt))
    return str(root)


def _names(dataset):
    return [os.path.basename(p) for p in dataset.as_numpy_iterator()]


def test_list_files_sorts_shuffles_and_seeds_as_tensorflow(image_folder):
    pattern = os.path.join(image_folder, "*")
    ordered = _names(ga.data.Dataset.list_files(pattern, shuffle=False))
    assert ordered == _names(tf.data.Dataset.list_files(pattern, shuffle=False))
    assert all(isinstance(p, bytes) for p in ordered)
    seeded = ga.data.Dataset.list_files(pattern, seed=7)
    first, second = _names(seeded), _names(seeded)
    assert sorted(first) == sorted(second) == ordered  # the same set, TF's
    assert first != second  # reshuffled each epoch, as TF's (6! orders: a tie is 1 in 720)
    assert _names(ga.data.Dataset.list_files(pattern, seed=7)) == first  # seed: reproducible
    both = [os.path.join(image_folder, "*.png"), os.path.join(image_folder, "img_0*")]
    assert _names(ga.data.Dataset.list_files(both, shuffle=False)) == _names(
        tf.data.Dataset.list_files(both, shuffle=False))
    with pytest.raises(errors.InvalidArgumentError, match="No files matched"):
        ga.data.Dataset.list_files(os.path.join(image_folder, "*.gif"))


def test_datasets_of_strings_batch_and_prefetch_like_tensorflow():
    paths = ["a/x.png", "b/y.png", "c/z.png"]
    ours = ga.data.Dataset.from_tensor_slices((paths, np.arange(3, dtype=np.int32)))
    theirs = tf.data.Dataset.from_tensor_slices((paths, np.arange(3, dtype=np.int32)))
    for element in (ours.shuffle(3, seed=1).batch(2).prefetch(1), ours.batch(2)):
        batches = [(b[0].numpy(), b[1].numpy()) for b in element]
        assert all(isinstance(s, np.ndarray) and s.dtype == object for s, _ in batches)
        rows = sorted((s, int(i)) for strings, ints in batches for s, i in zip(strings, ints))
        assert rows == sorted((s, int(i)) for s, i in theirs.as_numpy_iterator())
    assert list(ours.as_numpy_iterator())[1][0] == b"b/y.png"
    contents = [b"ends in NUL\x00", "plain"]  # file contents keep every byte, as in TF
    assert list(ga.data.Dataset.from_tensor_slices(contents).as_numpy_iterator()) == list(
        tf.data.Dataset.from_tensor_slices(contents).as_numpy_iterator()) == [
        b"ends in NUL\x00", b"plain"]
    padded = ga.data.Dataset.from_tensor_slices(contents[::-1]).padded_batch(2)  # short first
    reference = tf.data.Dataset.from_tensor_slices(contents[::-1]).padded_batch(2)
    assert [list(b.numpy()) for b in padded] == [list(b) for b in reference.as_numpy_iterator()]


def _tutorial_pipeline(framework, pattern):
    def load_image(path):
        image = framework.io.decode_image(framework.io.read_file(path), channels=3,
                                          expand_animations=False)
        return framework.image.resize(image, [8, 8])
    return framework.data.Dataset.list_files(pattern, shuffle=False).map(load_image).batch(4)


def test_tutorial_pipeline_matches_tensorflows(image_folder):
    pattern = os.path.join(image_folder, "*.png")
    ours = [b.numpy() for b in _tutorial_pipeline(ga, pattern)]
    theirs = [b.numpy() for b in _tutorial_pipeline(tf, pattern)]
    assert [b.shape for b in ours] == [b.shape for b in theirs] == [(3, 8, 8, 3)]
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-3)

    def load_jpeg(path):  # read_file + decode_jpeg + resize, per element, through map
        return ga.image.resize(ga.io.decode_jpeg(ga.io.read_file(path)), [8, 8])
    jpegs = sorted(os.path.join(image_folder, f) for f in os.listdir(image_folder)
                   if f.endswith(".jpeg"))
    mapped = ga.data.Dataset.from_tensor_slices(jpegs).map(load_jpeg)
    reference = [tf.image.resize(tf.io.decode_jpeg(tf.io.read_file(p),
                                                   dct_method="INTEGER_ACCURATE"), [8, 8])
                 for p in jpegs]
    for got, want in zip(mapped, reference):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-3)


# ---- item 4: py_function / numpy_function ----

def test_py_function_calls_func_with_tensors_and_converts_to_tout():
    seen = []

    def scale(x, y):
        seen.append(type(x))
        return x * 2 + y
    out = ga.py_function(scale, [ga.constant([1.0, 2.0]), 3.0], Tout=ga.float32)
    ref = tf.py_function(lambda x, y: x * 2 + y, [tf.constant([1.0, 2.0]), 3.0], Tout=tf.float32)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    assert seen == [ga.Tensor]
    one = ga.constant(1, dtype=ga.int32)  # (a Python 1 is int64 in gpuaccel, int32 in TF)
    pair = ga.py_function(lambda x: [x, x + 1], [one], Tout=[ga.int32, ga.int32])
    assert [int(t.numpy()) for t in pair] == [1, 2]
    single = ga.py_function(lambda x: x, [one], Tout=[ga.int32])
    assert isinstance(single, list) and len(single) == 1
    with pytest.raises(errors.InvalidArgumentError, match="expects to see 2 values"):
        ga.py_function(lambda x: [x], [1], Tout=[ga.int32, ga.int32])
    with pytest.raises(errors.InvalidArgumentError):
        ga.py_function(lambda x: 1.7, [1], Tout=ga.int32)
    with pytest.raises(ValueError, match="callable"):
        ga.py_function(3, [1], Tout=ga.int32)


def test_numpy_function_passes_arrays_and_converts_results():
    kinds = []

    def double(a):
        kinds.append(type(a))
        return a * 2
    out = ga.numpy_function(double, [ga.constant([1.0, 2.0])], Tout=ga.float32)
    assert kinds == [np.ndarray] and out.dtype == ga.float32
    np.testing.assert_array_equal(out.numpy(), [2.0, 4.0])
    as_float64 = ga.numpy_function(lambda a: a.astype(np.float64), [np.ones(2, np.float32)],
                                   Tout=ga.float32)
    assert as_float64.dtype == ga.float32
    with pytest.raises(errors.InvalidArgumentError, match="expects int32"):
        ga.numpy_function(lambda a: a * 2.5, [np.ones(2, np.float32)], Tout=ga.int32)


def test_gradients_flow_through_py_function_only_as_in_tensorflow():
    values = np.array([1.0, 2.0], np.float32)
    results = {}
    for name, fw in (("ga", ga), ("tf", tf)):
        x = fw.Variable(values)
        grads = []
        for wrap in (fw.py_function, fw.numpy_function):
            with fw.GradientTape() as tape:
                total = fw.reduce_sum(wrap(lambda a: a * a * 3, [x], Tout=fw.float32))
            grad = tape.gradient(total, x)
            grads.append(None if grad is None else grad.numpy())
        results[name] = grads
    np.testing.assert_allclose(results["ga"][0], results["tf"][0])  # 6x: [6, 12]
    assert results["ga"][1] is None and results["tf"][1] is None


def test_py_function_inside_dataset_map_matches_tensorflow():
    data = np.arange(4, dtype=np.float32)

    def pipeline(fw, wrap):
        return fw.data.Dataset.from_tensor_slices(data).map(
            lambda v: wrap(lambda a: a * 2 + 1, [v], Tout=fw.float32)).batch(2)
    for wrap_name in ("py_function", "numpy_function"):
        ours = [b.numpy() for b in pipeline(ga, getattr(ga, wrap_name))]
        theirs = [b.numpy() for b in pipeline(tf, getattr(tf, wrap_name))]
        np.testing.assert_array_equal(np.concatenate(ours), np.concatenate(theirs))
    names = ga.data.Dataset.from_tensor_slices(["ab", "cde"]).map(
        lambda s: ga.py_function(lambda t: len(t.numpy()), [s], Tout=ga.int32))
    assert [int(n.numpy()) for n in names] == [2, 3]
