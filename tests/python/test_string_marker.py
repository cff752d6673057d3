"""``tf.string`` on the TensorFlow face: a marker for the string data gpuaccel keeps on the host
(it has no string tensors), accepted where the tutorials pass it to the tf.io functions and
refused, with the reason, where a string tensor would be made."""
import pickle

import pytest

import gpuaccel as gt

tf = pytest.importorskip("tensorflow")


def test_fixed_len_string_features_parse_as_tensorflows():
    example = tf.train.Example(features=tf.train.Features(feature={
        "name": tf.train.Feature(bytes_list=tf.train.BytesList(value=[b"cat.jpg"])),
        "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[3]))}))
    record = example.SerializeToString()
    want = tf.io.parse_single_example(record, {
        "name": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64)})
    got = gt.io.parse_single_example(record, {
        "name": gt.io.FixedLenFeature([], gt.string),
        "label": gt.io.FixedLenFeature([], gt.int64)})
    assert got["name"].numpy() == want["name"].numpy() == b"cat.jpg"
    assert int(got["label"].numpy()) == int(want["label"].numpy()) == 3
    batch = gt.io.parse_example([record, record], {"name": gt.io.FixedLenFeature([], gt.string)})
    want_batch = tf.io.parse_example([record, record], {"name": tf.io.FixedLenFeature([],
                                                                                      tf.string)})
    assert list(batch["name"].numpy()) == list(want_batch["name"].numpy())


def test_string_tensors_are_refused_with_the_reason():
    assert repr(gt.string) == "tf.string" and gt.string.name == tf.string.name
    for make in (lambda: gt.constant(["a"], dtype=gt.string),
                 lambda: gt.as_dtype(gt.string), lambda: gt.as_dtype("string"),
                 lambda: gt.zeros((2,), dtype=gt.string)):
        with pytest.raises(ValueError, match="no string tensors"):
            make()
    assert pickle.loads(pickle.dumps(gt.string)) is gt.string
