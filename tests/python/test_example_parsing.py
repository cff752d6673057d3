"""parse_single_example / parse_example, serialize_tensor / parse_tensor and decode_raw against
TensorFlow 2.21: the same values, dtypes and shapes from the same bytes, TF's errors for a
missing feature, a wrong size or type, and the typed refusal of VarLenFeature (gpuaccel has no
SparseTensor)."""
import numpy as np
import pytest

import gpuaccel as gt
import tensorflow as tf  # the reference
gio = gt.io
from gpuaccel import errors as gt_errors

RNG = np.random.RandomState(5)


def _example(values):
    """A serialized Example (made with TF's protos) of {key: float32 / int64 / bytes list}."""
    feature = {}
    for key, value in values.items():
        value = list(value)
        if value and isinstance(value[0], bytes):
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(value=value))
        elif value and isinstance(value[0], (int, np.integer)):
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(value=value))
        else:
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=value))
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


FLOATS = RNG.randn(6).astype(np.float32)
SERIALIZED = [
    _example({"f": FLOATS[:4], "i": [3, -2**40], "s": [b"cat"], "seq": [1.0, 2.0, 3.0, 4.0]}),
    _example({"f": FLOATS[2:], "i": [7, 8], "s": [b"dog"], "seq": [5.0, 6.0]}),
    _example({"f": [0.5, 1.5, 2.5, 3.5], "i": [0, 1]}),  # no "s", no "seq"
]


def _specs(io, api):
    string = getattr(api, "string", bytes)  # gpuaccel has no tf.string dtype object
    return {
        "f": io.FixedLenFeature([2, 2], api.float32),
        "i": io.FixedLenFeature([2], api.int64),
        "s": io.FixedLenFeature([], string, default_value=b"none"),
        "seq": io.FixedLenSequenceFeature([2], api.float32, allow_missing=True),
        "absent": io.FixedLenFeature([3], api.int64, default_value=[1, 2, 3]),
    }


def _assert_same(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for key, want in theirs.items():
        want = want.numpy()
        got = ours[key]
        if isinstance(want, bytes) or want.dtype == object:  # strings stay on the host
            assert isinstance(got, (bytes, np.ndarray)), key
            np.testing.assert_array_equal(np.asarray(got, dtype=object), want)
            continue
        assert got.dtype.name == want.dtype.name, key
        assert tuple(got.shape) == want.shape, key
        np.testing.assert_array_equal(got.numpy(), want)


def test_parse_single_example_matches_tensorflow():
    for record in SERIALIZED:
        _assert_same(gio.parse_single_example(record, _specs(gio, gt)),
                     tf.io.parse_single_example(record, _specs(tf.io, tf)))
    parsed = gio.parse_single_example(SERIALIZED[0], _specs(gio, gt))
    assert parsed["s"] == b"cat" and isinstance(parsed["s"], bytes)
    assert tuple(parsed["seq"].shape) == (2, 2)


def test_parse_example_matches_tensorflow_batch_and_padding():
    ours = gio.parse_example(SERIALIZED, _specs(gio, gt))
    theirs = tf.io.parse_example(SERIALIZED, _specs(tf.io, tf))
    _assert_same(ours, theirs)
    assert tuple(ours["seq"].shape) == (3, 2, 2)  # padded to the longest with zeros
    assert list(ours["s"]) == [b"cat", b"dog", b"none"]
    padded = {"seq": gio.FixedLenSequenceFeature([], gt.float32, allow_missing=True,
                                                 default_value=-1.0)}
    _assert_same(gio.parse_example(SERIALIZED, padded), tf.io.parse_example(SERIALIZED, {
        "seq": tf.io.FixedLenSequenceFeature([], tf.float32, allow_missing=True,
                                             default_value=-1.0)}))


def _both_raise(features_of, record, error=None):
    """The error type name and message of TF and of gpuaccel for one parse."""
    with pytest.raises(Exception) as theirs:
        tf.io.parse_single_example(record, features_of(tf.io, tf))
    with pytest.raises(Exception) as ours:
        gio.parse_single_example(record, features_of(gio, gt))
    assert type(ours.value).__name__ == (error or type(theirs.value).__name__)
    return str(ours.value), str(theirs.value)


def test_parse_errors_are_tensorflows():
    ours, theirs = _both_raise(lambda io, api: {"z": io.FixedLenFeature([3], api.float32)},
                               SERIALIZED[0])
    assert "Feature: z (data type: float) is required but could not be found." in ours
    assert "Feature: z (data type: float) is required but could not be found." in theirs
    ours, theirs = _both_raise(lambda io, api: {"f": io.FixedLenFeature([3], api.float32)},
                               SERIALIZED[0])
    assert "Key: f." in ours and "Key: f." in theirs and "needs 3" in ours
    ours, theirs = _both_raise(lambda io, api: {"f": io.FixedLenFeature([4], api.int64)},
                               SERIALIZED[0])
    assert "Data type: float but expected type: int64" in ours
    assert "Data type: float but expected type: int64" in theirs
    ours, theirs = _both_raise(lambda io, api: {"z": io.FixedLenFeature([2, 2], api.float32,
                                                                         default_value=5.0)},
                               SERIALIZED[0])
    assert "Input to reshape is a tensor with 1 values, but the requested shape has 4" in ours
    assert "Input to reshape is a tensor with 1 values, but the requested shape has 4" in theirs
    for features_of in (lambda io, api: {"f": io.FixedLenFeature([None], api.float32)},
                        lambda io, api: {"f": io.FixedLenSequenceFeature([], api.float32)},
                        lambda io, api: {}, lambda io, api: None):
        ours, theirs = _both_raise(features_of, SERIALIZED[0], "ValueError")
        assert ours.split(" Received")[0] == theirs.split(" Received")[0]
    with pytest.raises(gt_errors.InvalidArgumentError, match="Name: <unknown>, Feature: s"):
        gio.parse_example(SERIALIZED, {"s": gio.FixedLenFeature([], bytes)})
    with pytest.raises(gt_errors.InvalidArgumentError, match="not in the list of allowed"):
        gio.parse_single_example(SERIALIZED[0], {"i": gio.FixedLenFeature([2], gt.int32)})
    with pytest.raises(gt_errors.InvalidArgumentError, match="Could not parse example input"):
        gio.parse_single_example(b"\xff\xff", {"i": gio.FixedLenFeature([2], gt.int64)})


def test_varlen_feature_is_refused_with_the_dense_spec_to_use():
    with pytest.raises(gt_errors.UnimplementedError,
                       match="FixedLenSequenceFeature\\(\\[\\], dtype, allow_missing=True\\)"):
        gio.parse_single_example(SERIALIZED[0], {"f": gio.VarLenFeature(gt.float32)})
    # what it suggests is TF's dense form of the VarLenFeature result for one example
    theirs = tf.sparse.to_dense(tf.io.parse_single_example(
        SERIALIZED[1], {"f": tf.io.VarLenFeature(tf.float32)})["f"]).numpy()
    ours = gio.parse_single_example(SERIALIZED[1], {"f": gio.FixedLenSequenceFeature(
        [], gt.float32, allow_missing=True)})["f"]
    np.testing.assert_array_equal(ours.numpy(), theirs)


@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "uint8", "bool", "float16",
                                   "bfloat16"])
def test_serialize_tensor_is_tensorflows_bytes(dtype):
    values = RNG.randn(2, 3) * 3
    theirs = tf.cast(tf.constant(values.astype(np.float32)), dtype)
    ours = gt.tensor(theirs.numpy(), dtype=getattr(gt, dtype))
    serialized = gio.serialize_tensor(ours)
    assert serialized == tf.io.serialize_tensor(theirs).numpy()
    back = gio.parse_tensor(tf.io.serialize_tensor(theirs).numpy(), getattr(gt, dtype))
    assert back.dtype.name == dtype and tuple(back.shape) == (2, 3)
    np.testing.assert_array_equal(np.asarray(back.numpy(), np.float32),
                                  np.asarray(theirs.numpy(), np.float32))


def test_serialize_tensor_scalars_strings_and_parse_errors():
    assert gio.serialize_tensor(gt.tensor(3.0)) == tf.io.serialize_tensor(tf.constant(3.0)).numpy()
    strings = np.array([b"ab", b"c"], dtype=object)
    assert gio.serialize_tensor(strings) == tf.io.serialize_tensor(tf.constant(strings)).numpy()
    np.testing.assert_array_equal(gio.parse_tensor(gio.serialize_tensor(strings), bytes), strings)
    # make_tensor_proto's form (values in float_val, not tensor_content) parses too
    proto = tf.make_tensor_proto([1.5, 2.5], dtype=tf.float32).SerializeToString()
    np.testing.assert_array_equal(gio.parse_tensor(proto, gt.float32).numpy(), [1.5, 2.5])
    with pytest.raises(gt_errors.InvalidArgumentError,
                       match=r"Type mismatch between parsed tensor \(float\) and dtype \(int32\)"):
        gio.parse_tensor(gio.serialize_tensor(gt.tensor([1.0])), gt.int32)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Type mismatch between parsed tensor \(float\) and dtype \(int32\)"):
        tf.io.parse_tensor(tf.io.serialize_tensor(tf.constant([1.0])), tf.int32)
    with pytest.raises(gt_errors.InvalidArgumentError, match="Could not parse `serialized`"):
        gio.parse_tensor(b"\xff\xff\xff", gt.int32)


def test_decode_raw_matches_tensorflow():
    data = RNG.randn(6).astype(np.float32).tobytes()
    for dtype in ("float32", "int32", "uint8", "int64", "float16"):
        for little_endian in (True, False):
            if dtype == "int64" and len(data) % 8:
                continue
            theirs = tf.io.decode_raw(data, getattr(tf, dtype), little_endian=little_endian)
            ours = gio.decode_raw(data, getattr(gt, dtype), little_endian=little_endian)
            assert ours.dtype.name == dtype and tuple(ours.shape) == tuple(theirs.shape)
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    rows = [b"\x01\x00\x02\x00", b"\x03\x00\x04\x00"]
    np.testing.assert_array_equal(gio.decode_raw(rows, gt.uint8).numpy(),
                                  tf.io.decode_raw(rows, tf.uint8).numpy())
    ragged = [b"\x01\x00", b"\x02\x00\x03\x00\x04\x00\x05\x00"]
    np.testing.assert_array_equal(gio.decode_raw(ragged, gt.int32, fixed_length=8).numpy(),
                                  tf.io.decode_raw(ragged, tf.int32, fixed_length=8).numpy())
    for call, message in [
            (lambda io, api: io.decode_raw(b"\x01\x00\x02", api.int32),
             "Input to DecodeRaw has length 3 that is not a multiple of 4, the size of int32"),
            (lambda io, api: io.decode_raw(ragged, api.uint8),
             "DecodeRaw requires input strings to all be the same size, but element 1 has size "
             "2 != 8"),
            (lambda io, api: io.decode_raw(ragged, api.int32, fixed_length=6),
             r"fixed_length \(6\) must be a multiple of the size of out_type \(4\)")]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message):
            call(tf.io, tf)
        with pytest.raises(gt_errors.InvalidArgumentError, match=message):
            call(gio, gt)
