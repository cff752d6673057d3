"""``keras.utils.audio_dataset_from_directory``: a folder of class subfolders of WAV files as a
dataset of (audio, labels) batches.

Why: the TensorFlow audio tutorial (simple_audio) starts from it. Keras 3 indexes the files as
for images (sorted class folders and files, shuffled once with NumPy's RandomState(seed), a
validation tail split off), so the indexing and the split are _image_dataset's, shared. The
pipeline is Keras's, on gpuaccel's Dataset: paths (host strings) and labels, shuffled with a
buffer of 8 batches, each file read and decoded by ``tf.audio.decode_wav`` (cut or zero-padded
to ``output_sequence_length``), batched (``padded_batch`` when the lengths may differ). The
shuffle draws from gpuaccel's generator, so batch order within an epoch is not TF's.
"""
import numpy as np

from .. import audio as _tf_audio
from .. import io as _tf_io
from ..data import AUTOTUNE, Dataset
from ._image_dataset import (check_label_arguments, check_validation_split, index_directory,
                             labels_for, subset_datasets)

ALLOWED_FORMATS = (".wav",)


def _check_arguments(labels, label_mode, class_names, sampling_rate, output_sequence_length,
                     ragged, validation_split, subset, shuffle, seed):
    labels, label_mode = check_label_arguments(labels, label_mode, class_names, "audio",
                                               "audio samples")
    if ragged and output_sequence_length is not None:
        raise ValueError("Cannot set both `ragged` and `output_sequence_length`")
    if ragged:
        raise NotImplementedError("ragged=True is not supported by gpuaccel (no RaggedTensor); "
                                  "use output_sequence_length, or the default padded batches")
    if sampling_rate is not None:
        if not isinstance(sampling_rate, int):
            raise ValueError("`sampling_rate` should have an integer value. "
                             f"Received: sampling_rate={sampling_rate}")
        if sampling_rate <= 0:
            raise ValueError("`sampling_rate` should be higher than 0. "
                             f"Received: sampling_rate={sampling_rate}")
        raise NotImplementedError("sampling_rate (resampling, which Keras does with "
                                  "tensorflow_io) is not supported by gpuaccel; resample the "
                                  "files beforehand and leave sampling_rate=None")
    check_validation_split(validation_split, subset, shuffle, seed)
    return labels, label_mode


def _decoder(output_sequence_length):
    desired = -1 if output_sequence_length is None else output_sequence_length

    def read_and_decode(path):
        return _tf_audio.decode_wav(_tf_io.read_file(path), desired_samples=desired).audio
    return read_and_decode


def _dataset(paths, labels, label_mode, class_names, batch_size, output_sequence_length,
             shuffle, buffer_size, seed):
    """Keras's paths_and_labels_to_dataset followed by its prepare_dataset."""
    decode = _decoder(output_sequence_length)
    if label_mode:
        dataset = Dataset.from_tensor_slices(
            (paths, labels_for(labels, label_mode, len(class_names) if class_names else 0)))
    else:
        dataset = Dataset.from_tensor_slices(paths)
    if shuffle:
        dataset = dataset.shuffle(buffer_size, seed=seed)
    if label_mode:
        dataset = dataset.map(lambda path, label: (decode(path), label))
    else:
        dataset = dataset.map(decode)
    dataset = dataset.prefetch(AUTOTUNE)
    if batch_size is not None:
        if output_sequence_length is None:
            dataset = dataset.padded_batch(batch_size)
        else:
            dataset = dataset.batch(batch_size)
    dataset.class_names = class_names
    return dataset


def audio_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, batch_size=32, sampling_rate=None,
                                 output_sequence_length=None, ragged=False, shuffle=True,
                                 seed=None, validation_split=None, subset=None,
                                 follow_links=False, verbose=True):
    """A Dataset of (audio, labels) batches from ``directory``'s class subfolders of 16-bit WAV
    files (see the module doc): float32 audio (batch, samples, channels), int32 / one-hot /
    (n, 1) float32 labels; ``class_names`` is an attribute of the dataset. With
    ``subset='both'``, a (training, validation) pair."""
    labels, label_mode = _check_arguments(labels, label_mode, class_names, sampling_rate,
                                          output_sequence_length, ragged, validation_split,
                                          subset, shuffle, seed)
    if seed is None:
        seed = np.random.randint(1e6)
    buffer_size = batch_size * 8 if batch_size is not None else 1024
    paths, labels, class_names = index_directory(directory, labels, class_names, shuffle, seed,
                                                 follow_links, verbose, ALLOWED_FORMATS)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    datasets = subset_datasets(
        paths, labels, validation_split, subset, shuffle,
        lambda kind: f"No {kind}audio files found in directory {directory}. Allowed format(s): "
                     f"{ALLOWED_FORMATS}",
        lambda part_paths, part_labels, part_shuffle: _dataset(
            part_paths, part_labels, label_mode, class_names, batch_size,
            output_sequence_length, part_shuffle, buffer_size, seed))
    return tuple(datasets) if subset == "both" else datasets  # Keras: a (train, val) tuple
