"""The summary kinds of ``tf.summary``: ``write`` and its typed forms ``scalar``, ``histogram``,
``image`` and ``text``, laid out as TF 2.21 (through TensorBoard's plugins) lays them out.

Why TensorBoard's builders: the layout is the plugins' contract (tensor summaries: a float32
scalar for "scalars", a float64 [buckets, 3] array of (left, right, count) for "histograms", a
string vector [width, height, PNG...] for "images", a string tensor for "text"), and TensorBoard
is already gpuaccel's dependency for the event files. The bucketing of ``histogram`` is
``histogram_pb``'s, which computes TF's ``_buckets`` in NumPy (equal-width buckets from min to
max, the last one closed, a single value counted in the last bucket); tests compare both.

Each function returns True when it recorded and False when there is no default writer or
``record_if`` says no (a Python bool where TF returns a bool tensor).
"""
import contextlib
import io
import re

import numpy as np

from .._tf_control_flow import get_current_name_scope, name_scope
from . import _writers

__all__ = ["write", "write_raw_pb", "scalar", "histogram", "image", "text", "summary_scope"]

# Characters TF removes from a name before using it as a name scope (the tag keeps them).
_INVALID_SCOPE_CHARACTERS = re.compile(r"[^-_/.A-Za-z0-9]")


@contextlib.contextmanager
def summary_scope(name, default_name="summary", values=None):
    """``tf.summary.experimental.summary_scope``: yields ``(tag, scope)``; the tag is ``name``
    under the enclosing name scopes, unchanged, the scope the same without the characters a
    scope name may not hold."""
    name = name or default_name
    current = get_current_name_scope()
    tag = f"{current}/{name}" if current else name
    with name_scope(_INVALID_SCOPE_CHARACTERS.sub("", name) or default_name) as scope:
        yield tag, scope


def _tensorboard():
    from tensorboard.compat.proto import summary_pb2
    from tensorboard.util import tensor_util
    return summary_pb2, tensor_util


def _numpy(data):
    return data.numpy() if hasattr(data, "numpy") else np.asarray(data)


def _record(make_summary, step):
    """Writes ``make_summary()`` (a Summary proto, built only when recording) to the default
    writer at ``step`` (or the default step); False when nothing is recorded."""
    if step is not None:
        _writers.step_value(step)  # TF checks an explicit step even when nothing is recorded
    if not _writers.should_record_summaries():
        return False
    step = _writers.get_step() if step is None else step
    if step is None:
        raise ValueError("No step set. Please specify one either through the `step` argument "
                         "or through tf.summary.experimental.set_step()")
    writer = _writers.default_writer()
    writer.add_summary(make_summary(), _writers.step_value(step))
    return True


def write(tag, tensor, step=None, metadata=None, name=None):
    """``tf.summary.write``: records ``tensor`` (an array, a tensor, or a callable giving one,
    called only when recording) under ``tag`` with ``metadata`` (a SummaryMetadata proto or its
    serialized bytes)."""
    summary_pb2, tensor_util = _tensorboard()

    def make_summary():
        value = tensor() if callable(tensor) else tensor
        if isinstance(metadata, (bytes, bytearray)):
            meta = summary_pb2.SummaryMetadata.FromString(bytes(metadata))
        else:
            meta = metadata if metadata is not None else summary_pb2.SummaryMetadata()
        summary = summary_pb2.Summary()
        summary.value.add(tag=tag, metadata=meta,
                          tensor=tensor_util.make_tensor_proto(_numpy(value)))
        return summary

    return _record(make_summary, step)


def write_raw_pb(tensor, step=None, name=None):
    """``tf.summary.experimental.write_raw_pb``: records serialized ``Summary`` protos (bytes, or
    a list of them) as they are."""
    summary_pb2, _ = _tensorboard()

    def make_summary():
        merged = summary_pb2.Summary()
        items = [tensor] if isinstance(tensor, (bytes, bytearray)) else list(tensor)
        for item in items:
            merged.MergeFromString(bytes(item))
        return merged

    return _record(make_summary, step)


def scalar(name, data, step=None, description=None):
    """``tf.summary.scalar``: ``data`` (a one-element number) as float32 under the "scalars"
    plugin."""
    from tensorboard.plugins.scalar import summary_v2
    value = _numpy(data)
    if value.shape != ():
        raise ValueError(f"tf.summary.scalar needs a scalar (shape ()), got shape "
                         f"{list(value.shape)} for {name!r}")
    if value.dtype.kind not in "biuf":
        raise TypeError(f"tf.summary.scalar needs a number, got dtype {value.dtype} for {name!r}")
    with summary_scope(name, "scalar_summary") as (tag, _):
        return _record(lambda: summary_v2.scalar_pb(tag, value, description=description), step)


def histogram(name, data, step=None, buckets=None, description=None):
    """``tf.summary.histogram``: the values of ``data`` (any shape) in ``buckets`` (30)
    equal-width buckets from their min to their max, under the "histograms" plugin."""
    from tensorboard.plugins.histogram import summary_v2
    if buckets is not None and (isinstance(buckets, bool) or not isinstance(buckets, int)):
        raise TypeError(f"tf.summary.histogram's buckets must be an int, got {buckets!r}")

    def make_summary():
        values = _numpy(data).astype(np.float64).ravel()
        count = summary_v2.DEFAULT_BUCKET_COUNT if buckets is None else max(0, buckets)
        return summary_v2.histogram_pb(tag, values, buckets=count, description=description)

    with summary_scope(name, "histogram_summary") as (tag, _):
        return _record(make_summary, step)


def _png(pixels):
    """PNG bytes of one [height, width, channels] uint8 image (PIL, an optional dependency)."""
    from ..keras._pil_images import _pil_image
    pil = _pil_image("tf.summary.image")
    modes = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}
    picture = pil.fromarray(pixels[:, :, 0] if pixels.shape[2] == 1 else pixels,
                            mode=modes[pixels.shape[2]])
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG")
    return buffer.getvalue()


def image(name, data, step=None, max_outputs=3, description=None):
    """``tf.summary.image``: the first ``max_outputs`` images of ``data`` ([k, height, width,
    channels], channels 1 to 4; uint8, or float in [0, 1] converted as
    ``tf.image.convert_image_dtype(..., uint8, saturate=True)`` does) as PNG under the "images"
    plugin. Encoding needs PIL (``pip install pillow``)."""
    from tensorboard.plugins.image import metadata as image_metadata
    from .._image_adjust import convert_image_dtype
    summary_pb2, tensor_util = _tensorboard()

    def make_summary():
        if isinstance(max_outputs, bool) or not isinstance(max_outputs, int) or max_outputs < 0:
            raise ValueError(f"tf.summary.image's max_outputs must be a non-negative int, got "
                             f"{max_outputs!r}")
        images = _numpy(convert_image_dtype(data, "uint8", saturate=True))
        if images.ndim != 4 or images.shape[3] not in (1, 2, 3, 4):
            raise ValueError(f"tf.summary.image needs images of shape [k, height, width, "
                             f"channels] with 1 to 4 channels, got shape {list(images.shape)}")
        height, width = images.shape[1], images.shape[2]
        strings = [str(width).encode(), str(height).encode()]
        strings += [_png(np.ascontiguousarray(one)) for one in images[:max_outputs]]
        summary = summary_pb2.Summary()
        summary.value.add(
            tag=tag, tensor=tensor_util.make_tensor_proto(np.array(strings, dtype=object)),
            metadata=image_metadata.create_summary_metadata(display_name=None,
                                                            description=description))
        return summary

    with summary_scope(name, "image_summary") as (tag, _):
        return _record(make_summary, step)


def _is_text(value):
    if isinstance(value, (str, bytes)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "SU" or (value.dtype == object and
                                            all(_is_text(v) for v in value.ravel()))
    if isinstance(value, (list, tuple)):
        return all(_is_text(v) for v in value)
    return False


def text(name, data, step=None, description=None):
    """``tf.summary.text``: Python strings (a str, or nested lists / a NumPy array of them; TF's
    string tensor) under the "text" plugin. TensorBoard renders them as Markdown."""
    from tensorboard.plugins.text import summary_v2
    if not _is_text(data):
        raise TypeError(f"tf.summary.text needs strings (a str, or lists or a NumPy array of "
                        f"them: gpuaccel has no string tensors), got {type(data).__name__}")
    with summary_scope(name, "text_summary") as (tag, _):
        return _record(lambda: summary_v2.text_pb(tag, data, description=description), step)
