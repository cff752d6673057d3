"""``keras.utils.image_dataset_from_directory``: a folder of class subfolders of images as a
dataset of (images, labels) batches.

Why: keras-io's image classification examples start from it (7 example files). Keras indexes
the files (sorted class folders, sorted files, shuffled once with NumPy's RandomState(seed),
split off a validation tail) and builds a tf.data pipeline that decodes and resizes each image.
Here the indexing is Keras's, so the same seed gives the same files in the same order and the
same split; the images are decoded with PIL (imported when called, as keras.utils.load_img;
``pip install pillow``) and resized with ``keras.ops.image.resize``, all at once, into a
``gpuaccel.data.Dataset`` (whose per-epoch ``shuffle`` draws from gpuaccel's generator, so
batch order within an epoch is not TF's). Converting colour to grayscale uses PIL's weights
(TF's PNG decoder has its own).
"""
import os

import numpy as np

from .. import image as _tf_image
from ..data import Dataset
from ._layer_base import standardize_data_format
from ._ops_image import resize
from ._pil_images import load_img
from ._io_utils import print_msg

ALLOWLIST_FORMATS = (".bmp", ".gif", ".jpeg", ".jpg", ".png")
_INTERPOLATIONS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
                   "mitchellcubic")
_CHANNELS = {"rgb": 3, "rgba": 4, "grayscale": 1}


def check_label_arguments(labels, label_mode, class_names, what="image", samples="images"):
    """Keras's checks of ``labels``/``label_mode``/``class_names`` (shared by the image and
    audio loaders); returns (labels, label_mode), both None when either is None."""
    if labels not in ("inferred", None):
        if not isinstance(labels, (list, tuple)):
            raise ValueError(
                "`labels` argument should be a list/tuple of integer labels, of the same size "
                f"as the number of {what} files in the target directory. If you wish to infer "
                "the labels from the subdirectory names in the target directory, pass "
                f'`labels="inferred"`. If you wish to get a dataset that only contains {samples} '
                f"(no labels), pass `labels=None`. Received: labels={labels}")
        if class_names:
            raise ValueError('You can only pass `class_names` if `labels="inferred"`. '
                             f"Received: labels={labels}, and class_names={class_names}")
    if label_mode not in {"int", "categorical", "binary", None}:
        raise ValueError('`label_mode` argument must be one of "int", "categorical", "binary", '
                         f"or None. Received: label_mode={label_mode}")
    if labels is None or label_mode is None:
        return None, None
    return labels, label_mode


def check_validation_split(validation_split, subset, shuffle, seed):
    """Keras's dataset_utils.check_validation_split_arg."""
    if validation_split and not 0 < validation_split < 1:
        raise ValueError(f"`validation_split` must be between 0 and 1, received: "
                         f"{validation_split}")
    if (validation_split or subset) and not (validation_split and subset):
        raise ValueError("If `subset` is set, `validation_split` must be set, and inversely.")
    if subset not in ("training", "validation", "both", None):
        raise ValueError('`subset` must be either "training", "validation" or "both", '
                         f"received: {subset}")
    if validation_split and shuffle and seed is None:
        raise ValueError("If using `validation_split` and shuffling the data, you must provide "
                         "a `seed` argument, to make sure that there is no overlap between the "
                         "training and validation subset.")


def _check_arguments(labels, label_mode, class_names, color_mode, image_size, interpolation,
                     validation_split, subset, shuffle, seed):
    """Keras's argument checks, in its order; returns (labels, label_mode, image_size)."""
    labels, label_mode = check_label_arguments(labels, label_mode, class_names)
    if color_mode not in _CHANNELS:
        raise ValueError('`color_mode` must be one of {"rgb", "rgba", "grayscale"}. '
                         f"Received: color_mode={color_mode}")
    if isinstance(image_size, int):
        image_size = (image_size, image_size)
    elif not isinstance(image_size, (list, tuple)) or len(image_size) != 2:
        raise ValueError("Invalid `image_size` value. Expected a tuple of 2 integers. "
                         f"Received: image_size={image_size}")
    if interpolation.lower() not in _INTERPOLATIONS:
        raise ValueError(f"Argument `interpolation` should be one of {_INTERPOLATIONS}. "
                         f"Received: interpolation={interpolation}")
    check_validation_split(validation_split, subset, shuffle, seed)
    return labels, label_mode, tuple(image_size)


def _files_under(folder, follow_links, formats):
    """Files under ``folder`` ending in ``formats``, relative to its parent, in Keras's (sorted
    walk) order."""
    walk = sorted(os.walk(folder, followlinks=follow_links), key=lambda entry: entry[0])
    base = os.path.basename(folder)
    return [os.path.join(base, os.path.relpath(os.path.join(root, name), folder))
            for root, _, names in walk for name in sorted(names)
            if name.lower().endswith(formats)]


def index_directory(directory, labels, class_names, shuffle, seed, follow_links, verbose,
                    formats=ALLOWLIST_FORMATS):
    """(file paths, labels, class names) as Keras's dataset_utils.index_directory."""
    if labels == "inferred":
        folders = [name for name in sorted(os.listdir(directory))
                   if os.path.isdir(os.path.join(directory, name)) and not name.startswith(".")]
        if class_names is not None:
            if not set(class_names).issubset(set(folders)):
                raise ValueError("The `class_names` passed did not match the names of the "
                                 "subdirectories of the target directory. Expected: "
                                 f"{folders} (or a subset of it), but received: "
                                 f"class_names={class_names}")
            folders = list(class_names)
    else:
        folders = [""]
        if class_names is not None:
            raise ValueError("When `labels=None` (no labels), argument `class_names` cannot be "
                             "specified." if labels is None else
                             "When argument `labels` is specified, argument `class_names` "
                             "cannot be specified (the `class_names` will be the sorted list "
                             "of labels).")
    names, inferred = [], []
    for index, folder in enumerate(folders):
        found = _files_under(os.path.join(directory, folder), follow_links, formats)
        names += found
        inferred += [index] * len(found)
    if labels == "inferred":
        labels, class_names = np.array(inferred, np.int32), folders
    elif labels is None:
        class_names = None
    else:
        if len(labels) != len(names):
            raise ValueError("Expected the lengths of `labels` to match the number of files in "
                             f"the target directory. len(labels) is {len(labels)} while we "
                             f"found {len(names)} files in directory {directory}.")
        class_names = [str(label) for label in sorted(set(labels))]
    if verbose and labels is None:
        print_msg(f"Found {len(names)} files.")
    elif verbose:
        print_msg(f"Found {len(names)} files belonging to {len(class_names)} classes.")
    paths = [os.path.join(directory, name) for name in names]
    if shuffle:
        np.random.RandomState(seed).shuffle(paths)
        if labels is not None:
            labels = np.array(labels)  # Keras shuffles the list given in place; a copy here
            np.random.RandomState(seed).shuffle(labels)
    return paths, labels, class_names


def _split(paths, labels, validation_split, subset):
    """The training (head) or validation (tail) part, as Keras's
    get_training_or_validation_split."""
    if not validation_split:
        return paths, labels
    validation = int(validation_split * len(paths))
    if subset == "training":
        print_msg(f"Using {len(paths) - validation} files for training.")
        return paths[:-validation], None if labels is None else labels[:-validation]
    print_msg(f"Using {validation} files for validation.")
    return paths[-validation:], None if labels is None else labels[-validation:]


def _load_images(paths, color_mode, image_size, interpolation, crop_to_aspect_ratio,
                 pad_to_aspect_ratio, data_format):
    """The images at ``paths`` as one NumPy array, each resized as Keras's loader does:
    ``tf.image.resize`` (float32, except 'nearest', which keeps uint8), after a centred crop
    to the target aspect ratio (smart_resize), or ``tf.image.resize_with_pad``."""
    images = []
    for path in paths:
        pixels = np.asarray(load_img(path, color_mode=color_mode), np.uint8)
        pixels = pixels[..., None] if pixels.ndim == 2 else pixels
        if interpolation != "nearest":
            pixels = pixels.astype(np.float32)
        if pad_to_aspect_ratio:
            resized = _tf_image.resize_with_pad(pixels, image_size[0], image_size[1],
                                                method=interpolation)
        else:
            resized = resize(pixels, image_size, interpolation=interpolation,
                             crop_to_aspect_ratio=crop_to_aspect_ratio)
        images.append(resized.numpy())
    stacked = np.stack(images)
    return stacked.transpose(0, 3, 1, 2) if data_format == "channels_first" else stacked


def labels_for(labels, label_mode, num_classes):
    """The labels as Keras's labels_to_dataset makes them: int32, (n, 1) float32 for binary,
    one-hot float32 for categorical."""
    if label_mode == "binary":
        return np.asarray(labels, np.float32)[:, None]
    if label_mode == "categorical":
        return np.eye(num_classes, dtype=np.float32)[np.asarray(labels, np.int64)]
    return np.asarray(labels, np.int32)


def _dataset(paths, labels, label_mode, class_names, batch_size, shuffle, seed, loading):
    images = _load_images(paths, *loading)
    if label_mode:
        dataset = Dataset.from_tensor_slices(
            (images, labels_for(labels, label_mode, len(class_names))))
    else:
        dataset = Dataset.from_tensor_slices(images)
    if shuffle:
        dataset = dataset.shuffle(batch_size * 8 if batch_size is not None else 1024, seed=seed)
    if batch_size is not None:
        dataset = dataset.batch(batch_size)
    dataset.class_names = class_names
    dataset.file_paths = paths
    return dataset


def image_dataset_from_directory(directory, labels="inferred", label_mode="int",
                                 class_names=None, color_mode="rgb", batch_size=32,
                                 image_size=(256, 256), shuffle=True, seed=None,
                                 validation_split=None, subset=None, interpolation="bilinear",
                                 follow_links=False, crop_to_aspect_ratio=False,
                                 pad_to_aspect_ratio=False, data_format=None, format="tf",
                                 verbose=True):
    """A Dataset of (images, labels) batches from ``directory``'s class subfolders (see the
    module doc): float32 images of ``image_size``, int32 / one-hot / (n, 1) float32 labels;
    ``class_names`` and ``file_paths`` are attributes of the dataset. With
    ``subset='both'``, a (training, validation) pair."""
    labels, label_mode, image_size = _check_arguments(
        labels, label_mode, class_names, color_mode, image_size, interpolation,
        validation_split, subset, shuffle, seed)
    interpolation = interpolation.lower()
    if format != "tf":
        raise ValueError(f'`format` should be "tf" (gpuaccel has no grain datasets). Received: '
                         f"format={format}")
    if seed is None:
        seed = np.random.randint(1e6)
    paths, labels, class_names = index_directory(directory, labels, class_names, shuffle, seed,
                                                 follow_links, verbose)
    if label_mode == "binary" and len(class_names) != 2:
        raise ValueError('When passing `label_mode="binary"`, there must be exactly 2 '
                         f"class_names. Received: class_names={class_names}")
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio`, `crop_to_aspect_ratio` can be set "
                         "to `True`.")
    if interpolation in ("gaussian", "mitchellcubic"):
        raise NotImplementedError(f"interpolation={interpolation!r} is not supported by "
                                  "gpuaccel yet; use bilinear, bicubic, area or lanczos")
    loading = (color_mode, image_size, interpolation, crop_to_aspect_ratio, pad_to_aspect_ratio,
               standardize_data_format(data_format))
    return subset_datasets(
        paths, labels, validation_split, subset, shuffle,
        lambda kind: f"No {kind}images found in directory {directory}. Allowed formats: "
                     f"{ALLOWLIST_FORMATS}",
        lambda part_paths, part_labels, part_shuffle: _dataset(
            part_paths, part_labels, label_mode, class_names, batch_size, part_shuffle, seed,
            loading))


def subset_datasets(paths, labels, validation_split, subset, shuffle, no_files, make):
    """Keras's subsets: the dataset ``make(paths, labels, shuffle)`` of the files of ``subset``
    (the training head or the validation tail; a [training, validation] list for 'both', whose
    validation part is not shuffled). ``no_files(kind)`` is the message for an empty part."""
    datasets = []
    for part in ["training", "validation"] if subset == "both" else [subset]:
        part_paths, part_labels = _split(paths, labels, validation_split, part)
        if not part_paths:
            raise ValueError(no_files(f"{part} " if subset == "both" else ""))
        part_shuffle = shuffle and not (subset == "both" and part == "validation")
        datasets.append(make(part_paths, part_labels, part_shuffle))
    return datasets if subset == "both" else datasets[0]
