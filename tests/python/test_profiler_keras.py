"""The profiler end to end: ``keras.callbacks.TensorBoard`` against Keras's rules and files,
real training runs judged by the tools students open (xprof's converters behind TensorBoard's
Profile tab, TensorBoard's own event reader), and ``analyze`` on three staged bottlenecks."""
import glob
import gzip
import json
import logging
import os
import time

import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras, profiler
from gpuaccel.profiler._events import EventKind
from gpuaccel.profiler._xspace import read_xspace

# -- helpers ---------------------------------------------------------------------------------


def tiny_model(units=16):
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(units, activation="relu"),
                              keras.layers.Dense(3)])
    model.compile(optimizer=keras.optimizers.SGD(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def tiny_data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 8)).astype("float32"), rng.integers(0, 3, n)


def run_dirs(log_dir):
    return sorted(glob.glob(os.path.join(log_dir, "train", "plugins", "profile", "*")))


def step_numbers(run_dir):
    table = read_xspace(glob.glob(os.path.join(run_dir, "*.xplane.pb"))[0])
    steps = [int(table.value[i]) for i in range(len(table))
             if table.kind_of(i) == EventKind.STEP]
    return sorted(steps)


def tensorboard_tags(directory):
    """{tag: [(step, value), ...]} as TensorBoard's own reader sees the event files."""
    from tensorboard.backend.event_processing import plugin_event_accumulator
    from tensorboard.util import tensor_util
    acc = plugin_event_accumulator.EventAccumulator(directory)
    acc.Reload()
    def value(event):
        array = tensor_util.make_ndarray(event.tensor_proto)
        return float(array) if array.dtype.kind in "fiu" and array.size == 1 else None
    return {tag: [(e.step, value(e)) for e in acc.Tensors(tag)] for tag in acc.Tags()["tensors"]}


def xprof_tool(xplane_path, tool):
    from xprof.convert import raw_to_tool_data
    data, _ = raw_to_tool_data.xspace_to_tool_data([xplane_path], tool,
                                                   {"use_saved_result": False})
    return json.loads(data if isinstance(data, str) else data.decode())


def xprof_steps(overview):
    """(step name, input ms) rows of the overview page's step-time graph."""
    for table in overview:
        cols = [c["id"] for c in table.get("cols", [])]
        if "stepnum" in cols and "infeedTimeMs" in cols:
            i_name, i_input = cols.index("stepnum"), cols.index("infeedTimeMs")
            return [(row["c"][i_name]["v"], row["c"][i_input]["v"]) for row in table["rows"]]
    raise AssertionError("the overview page has no step-time table")


def sleepy_batches(x, y, batch_size, sleep_s):
    """A Dataset whose batches each take ``sleep_s`` to produce (a slow input pipeline)."""
    def slow(xb, yb):
        time.sleep(sleep_s)
        return xb, yb
    return gpuaccel.data.Dataset.from_tensor_slices((x, y)).batch(batch_size).map(slow)


# -- profile_batch and step counting ---------------------------------------------------------

VALID_PROFILE_BATCH = [0, 3, (2, 5), [2, 5], "2,5", (0, 0), (3, 3)]
INVALID_PROFILE_BATCH = [-1, (5, 2), (1, 2, 3), 1.5, None, (-1, 2), "7,3", "4"]


@pytest.mark.parametrize("value", VALID_PROFILE_BATCH, ids=repr)
def test_profile_batch_forms_parse_like_keras(value, tmp_path):
    real = pytest.importorskip("keras")
    from gpuaccel.keras._tensorboard_callback import parse_profile_batch
    reference = real.callbacks.TensorBoard(str(tmp_path), profile_batch=value)
    assert parse_profile_batch(value) == (reference._start_batch, reference._stop_batch)


@pytest.mark.parametrize("value", INVALID_PROFILE_BATCH, ids=repr)
def test_invalid_profile_batch_raises_keras_value_error(value, tmp_path):
    import keras as real
    with pytest.raises(ValueError) as theirs:
        real.callbacks.TensorBoard(str(tmp_path), profile_batch=value)
    with pytest.raises(ValueError) as ours:
        keras.callbacks.TensorBoard(str(tmp_path), profile_batch=value)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("profile_batch, expected", [
    ((3, 6), [3, 4, 5, 6]),        # crosses the epoch boundary after batch 4
    (2, [2]),
    ("5,5", [5]),
    ((10, 20), [10, 11, 12]),      # stops when training ends
    ((1, 2), [1, 2]),              # starts before the first batch is fetched
])
def test_profile_batch_counts_batches_from_one_across_epochs(profile_batch, expected, tmp_path):
    x, y = tiny_data(40)
    model = tiny_model()
    tb = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=profile_batch)
    model.fit(x, y, batch_size=10, epochs=3, verbose=0, shuffle=False, callbacks=[tb])
    runs = run_dirs(str(tmp_path))
    assert len(runs) == 1, runs
    assert step_numbers(runs[0]) == expected
    assert glob.glob(os.path.join(runs[0], "*.trace.json.gz"))
    assert not profiler.is_active()


def test_profile_batch_zero_writes_no_profile(tmp_path):
    x, y = tiny_data(20)
    tiny_model().fit(x, y, batch_size=10, epochs=1, verbose=0,
                     callbacks=[keras.callbacks.TensorBoard(str(tmp_path))])
    assert run_dirs(str(tmp_path)) == []
    assert os.listdir(os.path.join(tmp_path, "train"))  # the scalars are still written


def test_profiler_failure_is_logged_not_raised(tmp_path, caplog):
    x, y = tiny_data(20)
    profiler.start(str(tmp_path / "mine"))  # someone else's session holds the profiler
    try:
        with caplog.at_level(logging.ERROR, logger="gpuaccel"):
            history = tiny_model().fit(
                x, y, batch_size=10, epochs=1, verbose=0,
                callbacks=[keras.callbacks.TensorBoard(str(tmp_path / "tb"), profile_batch=1)])
        assert len(history.history["loss"]) == 1
        assert "Failed to start profiler" in caplog.text
        assert profiler.is_active()  # the callback did not stop a session it did not start
    finally:
        profiler.stop(save=False)


# -- scalars ---------------------------------------------------------------------------------

def test_scalars_are_read_by_tensorboard_with_keras_tags(tmp_path):
    import keras as real
    x, y = tiny_data(40)
    xv, yv = tiny_data(20, seed=1)

    def fit(k, log_dir):
        model = k.Sequential([k.Input((8,)), k.layers.Dense(16, activation="relu"),
                              k.layers.Dense(3)])
        model.compile(optimizer=k.optimizers.SGD(0.05),
                      loss=k.losses.SparseCategoricalCrossentropy(from_logits=True),
                      metrics=["accuracy"])
        history = model.fit(x, y, batch_size=10, epochs=2, verbose=0, shuffle=False,
                            validation_data=(xv, yv),
                            callbacks=[k.callbacks.TensorBoard(log_dir, update_freq="batch")])
        return history.history

    fit(real, str(tmp_path / "keras"))
    history = fit(keras, str(tmp_path / "ours"))
    for split in ("train", "validation"):
        theirs = tensorboard_tags(str(tmp_path / "keras" / split))
        ours = tensorboard_tags(str(tmp_path / "ours" / split))
        theirs.pop("keras", None)  # the model-config summary of write_graph: not written
        extra = {"epoch_time_seconds", "epoch_memory_peak_bytes"} if split == "train" else set()
        assert set(ours) == set(theirs) | extra
        for tag, series in theirs.items():
            assert [s for s, _ in ours[tag]] == [s for s, _ in series], tag
    train = tensorboard_tags(str(tmp_path / "ours" / "train"))
    val = tensorboard_tags(str(tmp_path / "ours" / "validation"))
    np.testing.assert_allclose([v for _, v in train["epoch_loss"]], history["loss"], rtol=1e-6)
    np.testing.assert_allclose([v for _, v in val["epoch_loss"]], history["val_loss"],
                               rtol=1e-6)
    np.testing.assert_allclose([v for _, v in train["epoch_learning_rate"]], [0.05, 0.05],
                               rtol=1e-6)
    assert all(v > 0 for _, v in train["epoch_time_seconds"])
    assert all(v > 0 for _, v in train["epoch_memory_peak_bytes"])


def test_update_freq_n_writes_batch_scalars_every_n_global_batches(tmp_path):
    x, y = tiny_data(40)
    tiny_model().fit(x, y, batch_size=10, epochs=2, verbose=0,
                     callbacks=[keras.callbacks.TensorBoard(str(tmp_path), update_freq=3)])
    tags = tensorboard_tags(str(tmp_path / "train"))
    # Keras 3 writes the same batch series (steps 3 and 6 of 8 batches); it also loses its
    # epoch scalars with an int update_freq (they fall under the batch recording condition),
    # which we do not reproduce.
    assert [s for s, _ in tags["batch_loss"]] == [3, 6]
    assert [s for s, _ in tags["epoch_loss"]] == [0, 1]
    with pytest.raises(ValueError, match="update_freq"):
        keras.callbacks.TensorBoard(str(tmp_path), update_freq="sometimes")


def test_histograms_are_written_every_histogram_freq_epochs(tmp_path):
    from tensorboard.backend.event_processing import plugin_event_accumulator
    x, y = tiny_data(20)
    model = tiny_model()
    model.fit(x, y, batch_size=10, epochs=3, verbose=0,
              callbacks=[keras.callbacks.TensorBoard(str(tmp_path), histogram_freq=2)])
    acc = plugin_event_accumulator.EventAccumulator(str(tmp_path / "train"))
    acc.Reload()
    tags = [t for t in acc.Tags()["tensors"] if t.endswith("/histogram")]
    first_dense = model.layers[0].name
    assert f"{first_dense}/kernel/histogram" in tags and len(tags) == 4
    assert [e.step for e in acc.Tensors(tags[0])] == [0, 2]


# -- the seed CNN, judged by xprof -----------------------------------------------------------

def test_seed_cnn_profile_is_read_by_xprof_with_steps_and_input_time(tmp_path):
    from gpuaccel.demo import course_cnn
    (x, y), _ = keras.datasets.fashion_mnist.load_data()
    x = (x[:768, :, :, None] / 255.0).astype("float32")
    y = y[:768].astype("int64")
    model = course_cnn()
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    # An input pipeline that takes 20 ms per batch: input time we injected.
    data = sleepy_batches(x, y, 64, 0.02)
    tb = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=(5, 10))
    model.fit(data, epochs=1, verbose=0, callbacks=[tb])
    (run,) = run_dirs(str(tmp_path))
    (xplane,) = glob.glob(os.path.join(run, "*.xplane.pb"))

    steps = xprof_steps(xprof_tool(xplane, "overview_page"))
    # xprof drops the first and the last step of a profile with more than five (its
    # incomplete-step rule): batches 5..10 show as 6..9.
    assert [name for name, _ in steps] == ["train 6", "train 7", "train 8", "train 9"]
    assert all(input_ms >= 15.0 for _, input_ms in steps), steps

    pipeline = xprof_tool(xplane, "input_pipeline_analyzer")
    assert any("input" in json.dumps(table.get("p", {})).lower() for table in pipeline)
    assert "input-bound" in json.dumps(pipeline)

    trace = xprof_tool(xplane, "trace_viewer")
    events = trace["traceEvents"]
    names = {e.get("name") for e in events}
    assert "conv2d" in " ".join(str(n) for n in names)  # the layers are on the timeline
    thread_names = {e["args"]["name"] for e in events
                    if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert any("prefetch" in n or "Main" in n or "python" in n.lower() for n in thread_names), \
        thread_names

    # The callback's own verdict saw the same steps and the injected wait. (Whether 20 ms is
    # the bottleneck depends on how fast this machine runs the CNN; the staged tests below
    # check the verdicts.)
    assert tb.report is not None
    assert [s.step for s in tb.report.steps] == [5, 6, 7, 8, 9, 10]
    assert tb.report.average_ms["input_ms"] >= 15.0


def test_chrome_trace_of_a_real_run_nests_per_thread(tmp_path):
    x, y = tiny_data(40)
    with profiler.Profile(str(tmp_path)) as session:
        tiny_model().fit(x, y, batch_size=10, epochs=1, verbose=0)
    (trace_file,) = glob.glob(os.path.join(session.run_dir, "*.trace.json.gz"))
    with gzip.open(trace_file, "rt") as f:
        trace = json.load(f)
    complete = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert {"train", "matmul"} <= {e["name"] for e in complete} | {
        e.get("args", {}).get("name") for e in complete}
    by_thread = {}
    for e in complete:
        by_thread.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
    for spans in by_thread.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ends = []
        for start, end in spans:
            while open_ends and open_ends[-1] <= start + 1e-3:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 1e-3, "partial overlap"
            open_ends.append(end)


# -- the API ---------------------------------------------------------------------------------

def test_start_stop_errors_and_trace_scopes(tmp_path):
    with profiler.Trace("outside a session", step_num=1, _r=1):
        pass  # a no-op
    with pytest.raises(RuntimeError, match="no profiling session"):
        profiler.stop()
    profiler.start(str(tmp_path))
    try:
        with pytest.raises(RuntimeError, match="already active"):
            profiler.start(str(tmp_path))
        with profiler.Trace("my_region", answer=42):
            gpuaccel.constant(np.ones((4, 4), "float32")) * 2.0
    finally:
        run_dir = profiler.stop()
    table = read_xspace(glob.glob(os.path.join(run_dir, "*.xplane.pb"))[0])
    users = [i for i in range(len(table)) if table.kind_of(i) == EventKind.USER]
    assert [table.name_of(i) for i in users] == ["my_region"]
    assert table.stats_of(users[0])["answer"] == 42
    assert not profiler.is_active()
    assert profiler.experimental.start is profiler.start
    with pytest.raises(ValueError, match="reserved"):
        profiler.Trace("region", correlation_id=3)


# -- analyze on staged runs ------------------------------------------------------------------

def profile_fit(log_dir, model, data, **fit_kwargs):
    with profiler.Profile(log_dir):
        model.fit(data, verbose=0, **fit_kwargs) if not isinstance(data, tuple) else \
            model.fit(*data, verbose=0, **fit_kwargs)
    return profiler.analyze(log_dir, print_table=False)


def test_analyze_names_an_input_bound_run_and_prefetch_fixes_it(tmp_path):
    x, y = tiny_data(16 * 8)
    slow = profile_fit(str(tmp_path / "slow"), tiny_model(), sleepy_batches(x, y, 16, 0.01),
                       epochs=1)
    assert slow.bottleneck == "input", str(slow)
    assert "prefetch" in slow.suggestion

    # The course's fix: overlap producing the next batch with the step. With a step that
    # computes longer than a batch takes to produce, only the first batch's wait is left; over
    # 16 batches that is a sixteenth of the unprefetched wait (with 6 batches a loaded machine's
    # slower first batch brought the ratio to 0.44, near the 0.5 bound: a flaky test).
    batches = 16
    rng = np.random.default_rng(0)
    xb = rng.standard_normal((64 * batches, 256)).astype("float32")
    yb = rng.integers(0, 3, 64 * batches)
    model = keras.Sequential([keras.Input((256,)),
                              keras.layers.Dense(2048, activation="relu"),
                              keras.layers.Dense(2048, activation="relu"), keras.layers.Dense(3)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    base = profile_fit(str(tmp_path / "base"), model, sleepy_batches(xb, yb, 64, 0.01), epochs=1)
    fixed = profile_fit(str(tmp_path / "fixed"), model,
                        sleepy_batches(xb, yb, 64, 0.01).prefetch(2), epochs=1)
    assert base.average_ms["input_ms"] >= 8.0, str(base)
    assert fixed.average_ms["input_ms"] < 0.5 * base.average_ms["input_ms"], (str(base),
                                                                               str(fixed))


def test_analyze_names_a_compute_bound_run(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 32, 32, 16)).astype("float32")
    y = rng.integers(0, 10, 64)
    model = keras.Sequential([keras.Input((32, 32, 16)),
                              keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
                              keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
                              keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    report = profile_fit(str(tmp_path), model, (x, y), batch_size=32, epochs=2)
    assert report.bottleneck == "compute", str(report)
    assert "mixed" in report.suggestion


def test_analyze_names_a_host_overhead_bound_run(tmp_path):
    x, y = tiny_data(200)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    report = profile_fit(str(tmp_path), model, (x, y.astype("float32")), batch_size=1,
                         epochs=1)
    assert report.bottleneck == "host-overhead", str(report)
    assert "batch" in report.suggestion


def test_callback_prints_the_verdict_when_it_profiled(tmp_path, capsys):
    x, y = tiny_data(40)
    tb = keras.callbacks.TensorBoard(str(tmp_path), profile_batch=(2, 3))
    tiny_model().fit(x, y, batch_size=10, epochs=1, verbose=0, callbacks=[tb])
    out = capsys.readouterr().out
    assert tb.report is not None and tb.report.bottleneck in out
    assert tb.report.memory["peak_in_use_bytes"] > 0
