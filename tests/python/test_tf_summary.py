"""``tf.summary`` against TensorFlow 2.21: the same calls write two log directories, one through
TF and one through gpuaccel, and TensorBoard's own reader compares them (tags, steps, values,
plugin names and metadata, histogram edges and counts, decoded image pixels). Every test that
changes the default writer, step or record_if condition does it inside a context that restores
them, so the tests run in any order."""
import glob
import io
import os

import numpy as np
import pytest

import gpuaccel
from gpuaccel import profiler

tf = pytest.importorskip("tensorflow")
from tensorboard.backend.event_processing import event_file_loader  # noqa: E402
from tensorboard.backend.event_processing import plugin_event_accumulator  # noqa: E402
from tensorboard.util import tensor_util  # noqa: E402

FACES = {"tf": tf, "gpuaccel": gpuaccel}
RNG_IMAGES = np.random.default_rng(0).random((3, 4, 5, 3)).astype(np.float32)
RNG_NORMAL = np.random.default_rng(1).standard_normal((50, 4)).astype(np.float32)


def write_every_kind(face, logdir):
    """The same summaries through ``face`` (tensorflow or gpuaccel); their return values."""
    writer = face.summary.create_file_writer(str(logdir))
    returned = [face.summary.scalar("before_writer", 1.0, step=0)]
    with writer.as_default(step=3):
        returned += [
            face.summary.scalar("loss", 0.5),
            face.summary.scalar("loss", np.float64(0.25), step=4, description="the loss"),
            face.summary.scalar("count", 7, step=5),
            face.summary.histogram("normal", RNG_NORMAL, step=1),
            face.summary.histogram("ramp", np.arange(10, dtype=np.float32), step=1, buckets=4),
            face.summary.histogram("single", np.full(5, 2.5, np.float32), step=1, buckets=3),
            face.summary.histogram("empty", np.zeros(0, np.float32), step=1, buckets=2),
            face.summary.histogram("negative_buckets", RNG_NORMAL, step=1, buckets=-2),
            face.summary.image("float_images", RNG_IMAGES, step=2, max_outputs=2),
            face.summary.image("uint8_gray", (RNG_IMAGES[:1, :, :, :1] * 255).astype(np.uint8),
                               step=2),
            face.summary.text("note", "hello *markdown*", step=2),
            face.summary.text("notes", ["a", "b"], step=2),
        ]
        with face.name_scope("block"):
            returned.append(face.summary.scalar("inner value", 2.0, step=6))
        with face.summary.record_if(False):
            returned.append(face.summary.scalar("not_recorded", 1.0, step=7))
        with face.summary.record_if(lambda: True):
            returned.append(face.summary.scalar("recorded_if", 3.0, step=8))
    writer.close()
    return [bool(r) for r in returned]


def read_log(logdir):
    """{tag: [(step, array, plugin name, serialized metadata)]} of the event file as written
    (TensorBoard's LegacyEventFileLoader: its other readers fill in data_class on reading, which
    would hide a difference there), after checking that the EventAccumulator sees the same
    tensor tags."""
    path, = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    out = {}
    for event in event_file_loader.LegacyEventFileLoader(path).Load():
        for value in event.summary.value:
            out.setdefault(value.tag, []).append(
                (event.step, tensor_util.make_ndarray(value.tensor),
                 value.metadata.plugin_data.plugin_name, value.metadata.SerializeToString()))
    accumulator = plugin_event_accumulator.EventAccumulator(str(logdir))
    accumulator.Reload()
    assert sorted(accumulator.Tags()["tensors"]) == sorted(out)
    return out


@pytest.fixture(scope="module")
def both_logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("summaries")
    returned = {name: write_every_kind(face, root / name) for name, face in FACES.items()}
    return returned, {name: read_log(root / name) for name in FACES}


def test_return_values_match_tensorflow(both_logs):
    returned, _ = both_logs
    assert returned["gpuaccel"] == returned["tf"]
    assert returned["tf"][0] is False and returned["tf"][-2] is False  # no writer; record_if


def test_tags_steps_plugins_and_metadata_match_tensorflow(both_logs):
    _, logs = both_logs
    ours, theirs = logs["gpuaccel"], logs["tf"]
    assert sorted(ours) == sorted(theirs)
    assert "block/inner value" in ours and "not_recorded" not in ours
    for tag in theirs:
        assert [(s, p, m) for s, _, p, m in ours[tag]] == \
            [(s, p, m) for s, _, p, m in theirs[tag]], tag


def test_scalar_and_text_values_match_tensorflow(both_logs):
    _, logs = both_logs
    for tag in ("loss", "count", "block/inner value", "recorded_if", "note", "notes"):
        for (_, ours, _, _), (_, theirs, _, _) in zip(logs["gpuaccel"][tag], logs["tf"][tag]):
            assert ours.dtype == theirs.dtype and ours.shape == theirs.shape, tag
            np.testing.assert_array_equal(ours, theirs)


def test_histogram_edges_and_counts_match_tensorflow(both_logs):
    _, logs = both_logs
    for tag in ("normal", "ramp", "single", "empty", "negative_buckets"):
        (_, ours, _, _), = logs["gpuaccel"][tag]
        (_, theirs, _, _), = logs["tf"][tag]
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, tag
        np.testing.assert_allclose(ours[:, :2], theirs[:, :2], rtol=1e-12, atol=0)
        np.testing.assert_array_equal(ours[:, 2], theirs[:, 2])
    (_, ramp, _, _), = logs["tf"]["ramp"]
    assert ramp[:, 2].tolist() == [3, 2, 2, 3]  # the last bucket is closed: 9 counts there
    assert logs["tf"]["negative_buckets"][0][1].shape == (0, 3)  # TF counts them as zero


def test_images_decode_to_the_same_pixels(both_logs):
    from PIL import Image
    _, logs = both_logs
    for tag, count in (("float_images", 2), ("uint8_gray", 1)):
        (_, ours, _, _), = logs["gpuaccel"][tag]
        (_, theirs, _, _), = logs["tf"][tag]
        assert ours.shape == theirs.shape == (2 + count,)
        assert list(ours[:2]) == list(theirs[:2]) == [b"5", b"4"]  # width, height
        for our_png, their_png in zip(ours[2:], theirs[2:]):
            ours_px = np.asarray(Image.open(io.BytesIO(our_png)))
            theirs_px = np.asarray(Image.open(io.BytesIO(their_png)))
            assert ours_px.dtype == np.uint8
            np.testing.assert_array_equal(ours_px, theirs_px)


def events_on_disk(logdir):
    """How many events TensorBoard can read from the one event file in ``logdir`` now."""
    path, = glob.glob(os.path.join(str(logdir), "events.out.tfevents.*"))
    return sum(1 for _ in event_file_loader.EventFileLoader(path).Load())


@pytest.mark.parametrize("face_name", ["tf", "gpuaccel"])
def test_max_queue_flushes_when_more_summaries_wait(face_name, tmp_path):
    face = FACES[face_name]
    writer = face.summary.create_file_writer(str(tmp_path), max_queue=1, flush_millis=10**8,
                                             filename_suffix=".mine")
    seen = [events_on_disk(tmp_path)]  # the header is there from the start
    with writer.as_default(step=0):
        for _ in range(3):
            face.summary.scalar("a", 1.0)
            seen.append(events_on_disk(tmp_path))
    seen.append(events_on_disk(tmp_path))  # leaving as_default flushed
    assert seen == [1, 1, 3, 3, 4]
    assert glob.glob(str(tmp_path / "*"))[0].endswith(".mine")
    writer.close()


@pytest.mark.parametrize("face_name", ["tf", "gpuaccel"])
def test_default_writer_and_step_stack_like_tensorflow(face_name, tmp_path):
    face = FACES[face_name]
    get_step = face.summary.experimental.get_step
    first = face.summary.create_file_writer(str(tmp_path / "a"))
    second = face.summary.create_file_writer(str(tmp_path / "b"))
    assert get_step() is None and not bool(face.summary.should_record_summaries())
    with first.as_default(step=10):
        assert get_step() == 10 and bool(face.summary.should_record_summaries())
        with second.as_default():  # no step: the step stays
            assert get_step() == 10
        with second.as_default(step=20):
            assert get_step() == 20
        assert get_step() == 10
        with first.as_default(step=0):  # restores step 10 and this writer on exit
            second.set_as_default(step=5)
            assert get_step() == 5
            face.summary.experimental.set_step(6)
            assert get_step() == 6
        assert get_step() == 10
        face.summary.experimental.set_step(None)
        with pytest.raises(ValueError, match="No step set"):
            face.summary.scalar("x", 1.0)
        face.summary.experimental.set_step(10)
    assert get_step() is None and not bool(face.summary.should_record_summaries())
    with face.summary.create_noop_writer().as_default():
        assert not bool(face.summary.scalar("x", 1.0, step=0))
    first.close()
    first.close()  # a second close does nothing
    with pytest.raises(RuntimeError, match="already closed"):
        first.as_default()
    second.close()


def test_bad_input_raises_typed_errors(tmp_path):
    writer = gpuaccel.summary.create_file_writer(str(tmp_path))
    with writer.as_default(step=0):
        with pytest.raises(ValueError, match="scalar"):
            gpuaccel.summary.scalar("x", np.ones(2))
        with pytest.raises(ValueError, match="must be a scalar"):
            gpuaccel.summary.scalar("x", 1.0, step=[1, 2])
        with pytest.raises(ValueError, match=r"\[k, height, width, channels\]"):
            gpuaccel.summary.image("x", np.zeros((4, 4, 3), np.float32))
        with pytest.raises(TypeError, match="strings"):
            gpuaccel.summary.text("x", 3)
    with pytest.raises(ValueError, match="logdir"):
        gpuaccel.summary.create_file_writer(None)
    with pytest.raises(AttributeError, match="plot_model"):
        gpuaccel.summary.graph  # noqa: B018
    writer.close()


def test_trace_records_a_gpuaccel_profile(tmp_path):
    assert not profiler.is_active()
    with pytest.raises(NotImplementedError, match="profiler=True"):
        gpuaccel.summary.trace_on(graph=True)
    with pytest.raises(ValueError, match="trace_on"):
        gpuaccel.summary.trace_export("nothing", step=0)
    try:
        gpuaccel.summary.trace_on(graph=True, profiler=True, profiler_outdir=str(tmp_path))
        assert profiler.is_active()
        gpuaccel.matmul(gpuaccel.ones((8, 8)), gpuaccel.ones((8, 8)))
        gpuaccel.summary.trace_export("step", step=0)
    finally:
        gpuaccel.summary.trace_off()
    assert not profiler.is_active()
    assert glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.xplane.pb"))
