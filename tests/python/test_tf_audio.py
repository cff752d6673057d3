"""``tf.audio.decode_wav``/``encode_wav`` and ``keras.utils.audio_dataset_from_directory``
against TensorFlow 2.21 / Keras 3 on the same WAV files (generated here from seeded NumPy data):
the samples, the bytes, the labels, the split and the batches' shapes."""
import os

import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import errors, keras

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")
tf_keras = pytest.importorskip("keras")

RNG = np.random.default_rng(52)
# k / 65536 values include exact halves of an int16 step: TF rounds them away from zero
STEREO = np.concatenate([RNG.uniform(-1.2, 1.2, (9, 2)),
                         np.array([[0.5 / 32768, -1.5 / 32768], [1.0, -1.0]])]).astype(np.float32)


def test_encode_wav_writes_tensorflows_bytes():
    ours = ga.audio.encode_wav(STEREO, 16000)
    theirs = tf.audio.encode_wav(STEREO, 16000).numpy()
    assert ours.numpy() == theirs
    with pytest.raises(errors.InvalidArgumentError, match="2-dimensional"):
        ga.audio.encode_wav(STEREO[:, 0], 16000)


@pytest.mark.parametrize("channels,samples", [(-1, -1), (1, -1), (3, -1), (-1, 4), (2, 14)])
def test_decode_wav_matches_tensorflow(channels, samples):
    contents = tf.audio.encode_wav(STEREO, 8000).numpy()
    audio, rate = ga.audio.decode_wav(contents, desired_channels=channels,
                                      desired_samples=samples)
    ref_audio, ref_rate = tf.audio.decode_wav(contents, desired_channels=channels,
                                              desired_samples=samples)
    assert audio.dtype == ga.float32 and rate.dtype == ga.int32
    np.testing.assert_array_equal(audio.numpy(), ref_audio.numpy())
    assert int(rate.numpy()) == int(ref_rate.numpy()) == 8000


def test_decode_wav_rejects_what_tensorflow_rejects():
    eight_bit = b"RIFF" + tf.audio.encode_wav(STEREO, 8000).numpy()[4:]
    eight_bit = eight_bit[:34] + b"\x08\x00" + eight_bit[36:]  # bits per sample: 8
    for contents, match in ((b"garbage", "Expected RIFF"), (eight_bit, "16-bit")):
        with pytest.raises(tf.errors.InvalidArgumentError):
            tf.audio.decode_wav(contents)
        with pytest.raises(errors.InvalidArgumentError, match=match):
            ga.audio.decode_wav(contents)


@pytest.fixture(scope="module")
def speech_folder(tmp_path_factory):
    """Two classes of short WAV clips of different lengths (one channel, 8 kHz)."""
    root = tmp_path_factory.mktemp("speech")
    for label, count in (("no", 4), ("yes", 5)):
        (root / label).mkdir()
        for i in range(count):
            clip = RNG.uniform(-1, 1, (20 + 3 * i, 1)).astype(np.float32)
            (root / label / f"{i}.wav").write_bytes(tf.audio.encode_wav(clip, 8000).numpy())
    (root / "yes" / "notes.txt").write_text("not audio")
    return str(root)


def _rows(dataset):
    """Every (audio, label) row of a batched dataset, sorted by the audio's bytes."""
    rows = []
    for audio, labels in dataset:
        audio, labels = np.asarray(audio), np.asarray(labels)
        rows += [(a.tobytes(), l.tobytes()) for a, l in zip(audio, labels)]
    return sorted(rows)


def test_audio_dataset_from_directory_matches_keras(speech_folder):
    kwargs = dict(batch_size=4, output_sequence_length=24, validation_split=0.34,
                  subset="both", seed=3, verbose=False)
    ours = keras.utils.audio_dataset_from_directory(speech_folder, **kwargs)
    theirs = tf_keras.utils.audio_dataset_from_directory(speech_folder, **kwargs)
    for mine, reference in zip(ours, theirs):
        assert mine.class_names == reference.class_names == ["no", "yes"]
        batches = [(a.numpy(), l.numpy()) for a, l in mine]
        assert all(a.shape[1:] == (24, 1) and a.dtype == np.float32 for a, _ in batches)
        assert all(l.dtype == np.int32 for _, l in batches)
        assert _rows(batches) == _rows(reference)  # same files in each subset, same labels


def test_audio_dataset_pads_each_batch_and_encodes_labels_as_keras(speech_folder):
    kwargs = dict(batch_size=3, label_mode="categorical", shuffle=False, verbose=False)
    ours = [(a.numpy(), l.numpy()) for a, l in
            keras.utils.audio_dataset_from_directory(speech_folder, **kwargs)]
    theirs = [(a.numpy(), l.numpy()) for a, l in
              tf_keras.utils.audio_dataset_from_directory(speech_folder, **kwargs)]
    assert len(ours) == len(theirs) == 3
    for (audio, labels), (ref_audio, ref_labels) in zip(ours, theirs):
        np.testing.assert_array_equal(audio, ref_audio)  # zero-padded to the batch's longest
        np.testing.assert_array_equal(labels, ref_labels)
    with pytest.raises(NotImplementedError, match="sampling_rate"):
        keras.utils.audio_dataset_from_directory(speech_folder, sampling_rate=16000)
    with pytest.raises(ValueError, match="exactly 2"):
        keras.utils.audio_dataset_from_directory(speech_folder, label_mode="binary",
                                                 class_names=["no"], verbose=False)
