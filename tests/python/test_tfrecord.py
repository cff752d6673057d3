"""TFRecord files and tf.train.Example against TensorFlow 2.21: the Example protos serialize to
TF's bytes, files written by either library (plain, GZIP, ZLIB) read in the other, damaged files
raise TF's DataLossErrors, TFRecordDataset interleaves files in TF's order, and the tutorial
pipeline (write image+label Examples, TFRecordDataset -> map(parse) -> batch) gives TF's
batches."""
import gzip
import zlib

import numpy as np
import pytest

import gpuaccel as gt
import tensorflow as tf  # the reference
gio = gt.io
from gpuaccel import _tfrecord, errors as gt_errors

RNG = np.random.RandomState(3)
IMAGES = RNG.randint(0, 256, size=(5, 4, 3, 2), dtype=np.uint8)
LABELS = RNG.randint(0, 10, size=5).astype(np.int64)
WEIGHTS = RNG.rand(5, 2).astype(np.float32)
RECORDS = [b"hello", b"", b"world!", bytes(range(256)) * 3]


def _image_example(train, image, label, weight):
    """One Example in the tutorial's layout, built with ``train`` (tf.train or gpuaccel.train)."""
    def int64(v):
        return train.Feature(int64_list=train.Int64List(value=[int(x) for x in np.ravel(v)]))
    return train.Example(features=train.Features(feature={
        "height": int64(image.shape[0]), "width": int64(image.shape[1]),
        "depth": int64(image.shape[2]), "label": int64(label),
        "weight": train.Feature(float_list=train.FloatList(value=weight.tolist())),
        "image_raw": train.Feature(bytes_list=train.BytesList(value=[image.tobytes()])),
    }))


def test_example_protos_serialize_to_tensorflows_bytes_and_back():
    ours = _image_example(gt.train, IMAGES[0], LABELS[0], WEIGHTS[0])
    theirs = _image_example(tf.train, IMAGES[0], LABELS[0], WEIGHTS[0])
    assert ours.SerializeToString(deterministic=True) == \
        theirs.SerializeToString(deterministic=True)
    assert gt.train.Example.FromString(theirs.SerializeToString()) == ours
    parsed = tf.train.Example()
    parsed.ParseFromString(ours.SerializeToString())
    assert parsed == theirs
    assert ours.features.feature["weight"].WhichOneof("kind") == "float_list"
    assert gt.train.Example.DESCRIPTOR.full_name == "tensorflow.Example"


def test_sequence_example_round_trips_through_tensorflow():
    ours = gt.train.SequenceExample()
    ours.context.feature["id"].int64_list.value.append(7)
    for frame in ([1.0, 2.0], [3.0]):
        ours.feature_lists.feature_list["frames"].feature.add().float_list.value.extend(frame)
    theirs = tf.train.SequenceExample.FromString(ours.SerializeToString())
    assert list(theirs.context.feature["id"].int64_list.value) == [7]
    assert [list(f.float_list.value) for f in
            theirs.feature_lists.feature_list["frames"].feature] == [[1.0, 2.0], [3.0]]
    assert gt.train.SequenceExample.FromString(theirs.SerializeToString()) == ours


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_files_written_by_either_library_read_in_the_other(tmp_path, compression):
    ours, theirs = str(tmp_path / "ours.tfrecord"), str(tmp_path / "theirs.tfrecord")
    with gio.TFRecordWriter(ours, options=gio.TFRecordOptions(compression_type=compression)) as w:
        for record in RECORDS:
            w.write(record)
    with tf.io.TFRecordWriter(theirs, tf.io.TFRecordOptions(compression_type=compression)) as w:
        for record in RECORDS:
            w.write(record)
    assert list(tf.data.TFRecordDataset(ours, compression_type=compression)
                .as_numpy_iterator()) == RECORDS
    assert list(gt.data.TFRecordDataset(theirs, compression_type=compression)) == RECORDS
    assert list(gio.tf_record_iterator(theirs, options=compression)) == RECORDS
    if compression is None:  # uncompressed framing is fully determined: the same bytes
        assert open(ours, "rb").read() == open(theirs, "rb").read()
    else:  # the same record stream inside the deflate stream
        inflate = gzip.decompress if compression == "GZIP" else zlib.decompress
        assert inflate(open(ours, "rb").read()) == inflate(open(theirs, "rb").read())


def test_writer_flush_close_and_its_errors(tmp_path):
    path = str(tmp_path / "w.tfrecord")
    writer = gio.TFRecordWriter(path, "GZIP")
    writer.write("text")  # a str is written as UTF-8, as TF does
    writer.flush()  # what was written so far is readable while the writer stays open
    assert list(tf.data.TFRecordDataset(path, "GZIP").as_numpy_iterator()) == [b"text"]
    writer.close()
    writer.close()  # closing twice is harmless, as in TF
    with pytest.raises(gt_errors.FailedPreconditionError, match="Writer is closed"):
        writer.write(b"late")
    with pytest.raises(TypeError, match="SerializeToString"):
        gio.TFRecordWriter(str(tmp_path / "x.tfrecord")).write(3)
    with pytest.raises(gt_errors.NotFoundError, match="No such file or directory"):
        gio.TFRecordWriter(str(tmp_path / "missing_dir" / "x.tfrecord"))
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZ2"'):
        gio.TFRecordOptions("BZ2")
    with pytest.raises(ValueError, match='Not a valid compression_type: "BZ2"'):
        tf.io.TFRecordOptions("BZ2")
    assert gio.TFRecordOptions.get_compression_type_string(gio.TFRecordOptions("ZLIB")) == \
        tf.io.TFRecordOptions.get_compression_type_string(tf.io.TFRecordOptions("ZLIB")) == "ZLIB"


def _tf_error(path, compression=None):
    with pytest.raises(tf.errors.OpError) as info:
        list(tf.compat.v1.io.tf_record_iterator(path, options=compression))
    return type(info.value).__name__, info.value.message


def _our_error(path, compression=None):
    with pytest.raises(gt_errors.OpError) as info:
        list(gt.data.TFRecordDataset(path, compression_type=compression))
    with pytest.raises(type(info.value)):
        list(gio.tf_record_iterator(path, options=compression))
    return type(info.value).__name__, info.value.message


def _damaged_files(tmp_path):
    path = str(tmp_path / "good.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for record in RECORDS:
            w.write(record)
    good = open(path, "rb").read()
    third = 12 + 5 + 4 + 12 + 4  # offset of the third record
    damage = {
        "data_crc": (third + 12 + 2, 0x01), "length_crc": (third + 9, 0x01),
        "footer_crc": (third + 12 + 6, 0x80), "first_header": (3, 0x40)}
    files = {}
    for name, (at, bit) in damage.items():
        data = bytearray(good)
        data[at] ^= bit
        files[name] = bytes(data)
    files["cut_in_data"] = good[:third + 12 + 3]
    files["cut_in_header"] = good[:third + 7]  # TF reads a partial header as the end
    files["not_a_tfrecord"] = b"this is a text file, not records\n"
    for name, data in files.items():
        with open(tmp_path / name, "wb") as f:
            f.write(data)
    return {name: str(tmp_path / name) for name in files}


def test_damaged_files_raise_tensorflows_errors(tmp_path):
    for name, path in _damaged_files(tmp_path).items():
        if name == "cut_in_header":
            assert list(gt.data.TFRecordDataset(path)) == RECORDS[:2] == \
                list(tf.data.TFRecordDataset(path).as_numpy_iterator())
            continue
        ours = _our_error(path)
        assert ours == _tf_error(path), name
        assert ours[0] == "DataLossError"
    missing = str(tmp_path / "nope.tfrecord")
    assert _our_error(missing) == _tf_error(missing) == (
        "NotFoundError", f"{missing}; No such file or directory")
    error_class, message = _our_error(_damaged_files(tmp_path)["data_crc"])
    assert issubclass(getattr(gt_errors, error_class), OSError)  # a damaged file is an OSError


def test_compressed_files_read_as_tensorflow_reads_them(tmp_path):
    path = str(tmp_path / "plain.tfrecord")
    with gio.TFRecordWriter(path) as w:
        w.write(b"x")
    assert _tf_error(path, "GZIP")[0] == "DataLossError"
    with pytest.raises(gt_errors.DataLossError, match="not a valid GZIP stream"):
        list(gt.data.TFRecordDataset(path, compression_type="GZIP"))
    # a GZIP file without its trailer: TF reads the records that are whole, and so do we
    cut = str(tmp_path / "cut.tfrecord.gz")
    with open(cut, "wb") as f:
        f.write(gzip.compress(b"".join(_tfrecord.frame(r) for r in RECORDS))[:-5])
    assert list(gt.data.TFRecordDataset(cut, "GZIP")) == RECORDS == \
        list(tf.data.TFRecordDataset(cut, "GZIP").as_numpy_iterator())


def test_masked_crc_is_tensorboards_reference():
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c
    for data in RECORDS + [bytes(RNG.randint(0, 256, 1000, dtype=np.uint8))]:
        assert _tfrecord.masked_crc32c(data) == masked_crc32c(data)


def test_dataset_interleaves_files_in_tensorflows_order(tmp_path):
    paths = []
    for f, count in enumerate([3, 1, 4, 2]):
        paths.append(str(tmp_path / f"part{f}.tfrecord"))
        with gio.TFRecordWriter(paths[-1]) as w:
            for r in range(count):
                w.write(f"file{f}-record{r}")
    for reads in (None, 2, 3, 5):
        expected = list(tf.data.TFRecordDataset(paths, num_parallel_reads=reads)
                        .as_numpy_iterator())
        assert list(gt.data.TFRecordDataset(paths, num_parallel_reads=reads)) == expected, reads
    ours = gt.data.TFRecordDataset(paths)
    assert ours.cardinality() == gt.data.UNKNOWN_CARDINALITY
    assert [r for r in ours.take(2)] == [b"file0-record0", b"file0-record1"]
    with pytest.raises(TypeError, match="must contain string elements"):
        gt.data.TFRecordDataset([3])


def _tutorial_pipeline(api, io, path):
    """tensorflow/docs' tfrecord tutorial, the image part: parse each record, decode its raw
    pixels, batch."""
    description = {
        "height": io.FixedLenFeature([], api.int64), "width": io.FixedLenFeature([], api.int64),
        "depth": io.FixedLenFeature([], api.int64), "label": io.FixedLenFeature([], api.int64),
        "weight": io.FixedLenFeature([2], api.float32),
        "image_raw": io.FixedLenFeature([], getattr(api, "string", "string")),
    }

    def parse(record):
        parsed = io.parse_single_example(record, description)
        image = io.decode_raw(parsed["image_raw"], api.uint8)
        image = api.reshape(image, IMAGES.shape[1:])
        return {"image": image, "weight": parsed["weight"]}, parsed["label"]

    return api.data.TFRecordDataset(path).map(parse).batch(2)


def test_tutorial_pipeline_gives_tensorflows_batches(tmp_path):
    ours_path, theirs_path = str(tmp_path / "ours.tfrecord"), str(tmp_path / "theirs.tfrecord")
    with gio.TFRecordWriter(ours_path) as ours, tf.io.TFRecordWriter(theirs_path) as theirs:
        for image, label, weight in zip(IMAGES, LABELS, WEIGHTS):
            ours.write(_image_example(gt.train, image, label, weight).SerializeToString())
            theirs.write(_image_example(tf.train, image, label, weight).SerializeToString())
    expected = list(_tutorial_pipeline(tf, tf.io, theirs_path).as_numpy_iterator())
    assert len(expected) == 3
    for path in (ours_path, theirs_path):  # our reader on both files
        batches = list(_tutorial_pipeline(gt, gio, path))
        assert len(batches) == len(expected)
        for (features, label), (want_features, want_label) in zip(batches, expected):
            assert features["image"].dtype == gt.uint8 and label.dtype == gt.int64
            assert features["weight"].dtype == gt.float32
            np.testing.assert_array_equal(features["image"].numpy(), want_features["image"])
            np.testing.assert_array_equal(features["weight"].numpy(), want_features["weight"])
            np.testing.assert_array_equal(label.numpy(), want_label)
    # and TF reads the file we wrote into the same batches
    for got, want in zip(_tutorial_pipeline(tf, tf.io, ours_path).as_numpy_iterator(), expected):
        np.testing.assert_array_equal(got[0]["image"], want[0]["image"])
        np.testing.assert_array_equal(got[1], want[1])


def test_records_and_lines_answer_numpy_as_tensorflows_string_scalars(tmp_path):
    """The tutorials print `raw_record.numpy()` and map `tf.train.Example.FromString` over it."""
    path = str(tmp_path / "r.tfrecord")
    with tf.io.TFRecordWriter(path) as writer:
        for payload in (b"first\x00", b"", b"third"):
            writer.write(payload)
    text = tmp_path / "lines.txt"
    text.write_bytes(b"alpha\nbeta\r\n\ngamma")
    for ours, theirs in ((gt.data.TFRecordDataset(path), tf.data.TFRecordDataset(path)),
                         (gt.data.TextLineDataset(str(text)), tf.data.TextLineDataset(str(text)))):
        got = [record.numpy() for record in ours]
        want = [record.numpy() for record in theirs]
        assert got == want and all(type(g) is bytes for g in got)
        assert all(record.shape == () for record in ours)
