"""Property-based fuzzing of the files gpuaccel reads back: weights (``.weights.h5``, ``.keras``,
gpuaccel's ``.npz``) truncated, with flipped bytes or loaded into another architecture;
profiles (``.xplane.pb``) damaged at the byte level or with odd values inside a valid XSpace;
the homework grader's saved reports with fields of every type, and notebooks that are not
notebooks.

The contract: a damaged or foreign file raises a typed error that names it (``OSError`` --
gpuaccel's ``DataLossError`` is one --, ``ValueError`` or ``NotImplementedError``); a file that
loads gives exactly what was saved; the grader answers with its exit status (0 passed, 1 failed,
2 cannot grade), never a traceback. Every example runs in an isolated worker
(crash_isolation.py) with a fixed seed, after the stored failures in hypothesis-db.
"""
import json
import math
import os
import pathlib
import tempfile

import numpy as np
from hypothesis import example, given, seed, settings, strategies as st

from crash_isolation import isolated  # noqa: F401 -- the module-scoped worker fixture

FILE_ERRORS = ("OSError", "ValueError", "NotImplementedError")
FUZZ = settings()  # the profile's budget (conftest.py): 100 examples in CI, 1500 with --hypothesis-profile=long
FUZZ_SEED = 20261124
PROFILE = pathlib.Path(__file__).parent / "data" / "h100_course_cnn_arrays.xplane.pb"


def _assert_file_error(error, path=None):
    names = [c.__name__ for c in type(error).__mro__]
    assert any(n in names for n in FILE_ERRORS), f"untyped {type(error).__name__}: {error}"
    if path is not None and isinstance(error, OSError) and "DataLossError" in names:
        assert os.path.basename(path) in str(error), f"the error does not name the file: {error}"


# ---- weights files ----

def _model(units):
    from gpuaccel import keras
    from gpuaccel import random as ga_random
    ga_random.set_seed(len(units))
    return keras.Sequential([keras.Input((3,))] + [keras.layers.Dense(u) for u in units])


def _mutated(data, mutation):
    kind, where, value = mutation
    position = int(where * len(data)) if data else 0
    if kind == "truncate":
        return data[:position]
    if kind == "flip" and data:
        position = min(position, len(data) - 1)
        return data[:position] + bytes([data[position] ^ (value or 1)]) + data[position + 1:]
    if kind == "append":
        return data + bytes([value]) * (1 + position % 64)
    if kind == "empty":
        return b""
    return data  # "none"


def _load(path, units):
    from gpuaccel import keras
    if path.endswith(".keras") and units is None:
        return keras.models.load_model(path)
    model = _model(units)
    model.load_weights(path)
    return model


def check_weights_file(suffix, saved_units, loaded_units, mutation, load_model):
    source = _model(saved_units)
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "model" + suffix)
    source.save(path) if suffix == ".keras" else source.save_weights(path)
    data = pathlib.Path(path).read_bytes()
    pathlib.Path(path).write_bytes(_mutated(data, mutation))
    units = None if (load_model and suffix == ".keras") else loaded_units
    try:
        loaded = _load(path, units)
    except Exception as error:  # noqa: BLE001
        _assert_file_error(error, path)
        return "rejected"
    # What loads is what was saved: the target's layers take the source's weights in order.
    saved = source.get_weights()
    got = loaded.get_weights()
    assert len(got) <= len(saved), f"{len(got)} weights loaded from a file of {len(saved)}"
    for g, s in zip(got, saved):
        assert g.shape == s.shape
        np.testing.assert_array_equal(g, s)
    return "ok"


UNITS = st.lists(st.integers(1, 3), min_size=1, max_size=3)
MUTATIONS = st.tuples(st.sampled_from(["none", "truncate", "flip", "append", "empty"]),
                      st.floats(0, 1), st.integers(0, 255))


@FUZZ
@seed(FUZZ_SEED)
@given(st.sampled_from([".weights.h5", ".keras", ".npz"]), UNITS, UNITS, MUTATIONS,
       st.booleans())
# Regressions: a truncated .keras raised zipfile's BadZipFile ("File is not a zip file")
# without naming the file.
@example(".keras", [2], [2], ("truncate", 0.5, 0), True)
@example(".keras", [2], [2], ("append", 0.0, 7), False)
def test_weights_files_load_exactly_or_fail_typed(isolated, suffix, saved_units, loaded_units,
                                                  mutation, load_model):
    isolated.call("test_fuzz_files", "check_weights_file", suffix, saved_units, loaded_units,
                  mutation, load_model)


def check_foreign_archive(members):
    """A zip named .keras holding other things than Keras wrote."""
    import zipfile
    from gpuaccel import keras
    path = os.path.join(tempfile.mkdtemp(), "foreign.keras")
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            archive.writestr(name, text)
    for load in (lambda: keras.models.load_model(path), lambda: _load(path, [2])):
        try:
            load()
        except Exception as error:  # noqa: BLE001
            _assert_file_error(error, path)
        else:
            raise AssertionError(f"a foreign archive {members} loaded")
    return "ok"


JSON_TEXT = st.one_of(
    st.sampled_from(["", "not json", "[1, 2]", "{}", '{"class_name": "Sequential"}',
                     '{"class_name": "Sequential", "config": {"layers": "x"}}',
                     '{"class_name": "Sequential", "config": {"layers": [5]}}',
                     '{"class_name": "Functional", "config": {"layers": []}}',
                     '{"class_name": "Sequential", "config": {"layers": [{"class_name": '
                     '"Dense", "config": {"units": -4}}]}}']),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                 lambda inner: st.lists(inner, max_size=3) |
                 st.dictionaries(st.sampled_from(["class_name", "config", "layers", "name"]),
                                 inner, max_size=3), max_leaves=8).map(json.dumps))


@FUZZ
@seed(FUZZ_SEED)
@given(st.dictionaries(st.sampled_from(["config.json", "model.weights.h5", "metadata.json",
                                        "other.txt"]), JSON_TEXT, max_size=3))
# Regressions: these raised KeyError, JSONDecodeError and AttributeError from the reader.
@example({"metadata.json": "{}"})
@example({"config.json": "not json", "model.weights.h5": "x"})
@example({"config.json": "[1, 2]", "model.weights.h5": "x"})
def test_foreign_keras_archives_fail_typed(isolated, members):
    isolated.call("test_fuzz_files", "check_foreign_archive", members)


def check_foreign_weights_h5(entries):
    """A .weights.h5 written by something else: odd names, dtypes and groups."""
    import h5py
    path = os.path.join(tempfile.mkdtemp(), "foreign.weights.h5")
    data = {"f8": np.ones((3, 2)), "f4-bias": np.ones(2),
            "bytes": np.array([b"ab"] * 6).reshape(3, 2),
            "complex": np.ones((3, 2), np.complex64), "scalar": 5.0,
            "int": np.ones((3, 2), np.int64)}
    with h5py.File(path, "w") as f:
        for name, kind in entries.items():
            try:
                f.require_group(name) if kind == "group" else f.create_dataset(name,
                                                                               data=data[kind])
            except (ValueError, TypeError):  # a name taken by an earlier entry of another kind
                pass
    try:
        model = _load(path, [2])
    except Exception as error:  # noqa: BLE001
        _assert_file_error(error)
        assert not isinstance(error, KeyError), error
        return "rejected"
    kernel, bias = model.get_weights()
    assert np.all(kernel == 1) and np.all(bias == 1), "weights loaded from the wrong entries"
    return "ok"


H5_NAMES = st.sampled_from(["layers/dense/vars/0", "layers/dense/vars/1", "layers/dense/vars/a",
                            "layers/dense/vars", "layers/dense", "layers", "x",
                            "layers/dense/vars/2"])
H5_KINDS = st.sampled_from(["f8", "f4-bias", "bytes", "complex", "scalar", "int", "group"])


@FUZZ
@seed(FUZZ_SEED)
@given(st.dictionaries(H5_NAMES, H5_KINDS, max_size=4))
# Regressions: bytes and complex variables raised h5py's OSError "no appropriate function for
# conversion path"; variables named other than 0, 1 raised a KeyError.
@example({"layers/dense/vars/0": "bytes", "layers/dense/vars/1": "f4-bias"})
@example({"layers/dense/vars/0": "complex", "layers/dense/vars/1": "f4-bias"})
@example({"layers/dense/vars/a": "f8", "layers/dense/vars/1": "f4-bias"})
def test_foreign_weights_h5_fail_typed(isolated, entries):
    isolated.call("test_fuzz_files", "check_foreign_weights_h5", entries)


def test_set_weights_refuses_values_that_are_not_real_numbers(isolated):
    # NumPy's cast dropped the imaginary part and parsed strings as numbers.
    for value in ("np.full((3, 2), 1 + 2j)", "np.full((3, 2), '1.5')"):
        outcome = isolated.run(
            "import numpy as np\nfrom gpuaccel import keras\n"
            "model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])\n"
            f"model.set_weights([{value}, np.zeros(2)])")
        assert outcome.error_type == "TypeError" and "real numbers" in outcome.message, outcome


# ---- profiles ----

def check_damaged_profile(source, mutations):
    import gpuaccel
    from gpuaccel.profiler import _xspace_schema as pb
    space = pb.XSpace()
    space.ParseFromString(pathlib.Path(source).read_bytes())
    for plane_pick, target, pick, value in mutations:
        plane = space.planes[plane_pick % len(space.planes)]
        if target == "plane_stat" and len(plane.stats):
            _set_stat(plane.stats[pick % len(plane.stats)], value)
        elif target == "event" and len(plane.lines):
            line = plane.lines[pick % len(plane.lines)]
            if len(line.events):
                event = line.events[pick % len(line.events)]
                event.duration_ps, event.offset_ps = value if isinstance(value, tuple) else (
                    event.duration_ps, event.offset_ps)
                if len(event.stats) and not isinstance(value, tuple):
                    _set_stat(event.stats[pick % len(event.stats)], value)
        elif target == "metadata" and plane.event_metadata:
            keys = sorted(plane.event_metadata)
            metadata = plane.event_metadata[keys[pick % len(keys)]]
            if len(metadata.stats):
                _set_stat(metadata.stats[pick % len(metadata.stats)], value)
        elif target == "line" and len(plane.lines):
            line = plane.lines[pick % len(plane.lines)]
            line.id = pick - 3
            if isinstance(value, int) and -2**63 <= value < 2**63:  # the field is an int64
                line.timestamp_ns = value
        elif target == "plane_name":
            plane.name = "/device:GPU:" + str(value)
    path = os.path.join(tempfile.mkdtemp(), "damaged.xplane.pb")
    pathlib.Path(path).write_bytes(space.SerializeToString())
    return _analyze(gpuaccel, path)


def _set_stat(stat, value):
    if isinstance(value, tuple):
        return
    if isinstance(value, str):
        stat.str_value = value
    elif isinstance(value, float):
        stat.double_value = value
    elif value >= 2**63:
        stat.uint64_value = value
    else:
        stat.int64_value = value


def _analyze(gpuaccel, path):
    try:
        report = gpuaccel.profiler.analyze(path, print_table=False)
    except Exception as error:  # noqa: BLE001
        names = [c.__name__ for c in type(error).__mro__]
        assert "ValueError" in names or "OSError" in names, \
            f"untyped {type(error).__name__}: {error}"
        assert isinstance(error, OSError) or os.path.basename(path) in str(error) or \
            "STEP" in str(error), f"the error does not name the file: {error}"
        return "rejected"
    assert report.bottleneck in ("input", "compute", "transfer", "sync", "host-overhead")
    return "ok"


def check_damaged_profile_bytes(source, mutation):
    import gpuaccel
    path = os.path.join(tempfile.mkdtemp(), "damaged.xplane.pb")
    pathlib.Path(path).write_bytes(_mutated(pathlib.Path(source).read_bytes(), mutation))
    return _analyze(gpuaccel, path)


STAT_VALUES = st.one_of(
    st.sampled_from([-1, 0, 99, 2**62, -2**63, 2**64 - 1, "", "{", "[1]", "null", "{}",
                     '[{"index": "a"}]', float("nan"), -1.0, 1e308]),
    st.tuples(st.sampled_from([-10**15, 0, 2**62]), st.sampled_from([-10**15, 0, 2**62])))
PROFILE_MUTATIONS = st.lists(st.tuples(
    st.integers(0, 7), st.sampled_from(["plane_stat", "event", "metadata", "line", "plane_name"]),
    st.integers(0, 500), STAT_VALUES), min_size=1, max_size=4)


@FUZZ
@seed(FUZZ_SEED)
@given(PROFILE_MUTATIONS)
# Regressions: a host-info stat holding an int raised TypeError from json; an event kind out of
# range raised the enum's ValueError; a timestamp beyond int64 raised OverflowError -- none
# naming the file.
@example([(0, "plane_stat", 0, 5)])
@example([(0, "metadata", 3, 2**62)])
@example([(1, "line", 10, 2**62)])
def test_damaged_profiles_fail_typed(isolated, mutations):
    isolated.call("test_fuzz_files", "check_damaged_profile", str(PROFILE), mutations)


@FUZZ
@seed(FUZZ_SEED)
@given(MUTATIONS)
def test_damaged_profile_bytes_fail_typed(isolated, mutation):
    isolated.call("test_fuzz_files", "check_damaged_profile_bytes", str(PROFILE), mutation)


# ---- the grader's reports and notebooks ----

ANY_JSON_VALUE = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 100), st.sampled_from([0, 0.0, -1.5, 2.5, 1e-300]),
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.sampled_from(["", "float32", "mixed_float16", "x", "CPU", "input"]),
    st.lists(st.sampled_from(["mixed_float16", 1, None, {"name": "g", "memory_growth": True},
                              {"name": 1}]), max_size=2),
    st.dictionaries(st.sampled_from(["name", "memory_growth"]), st.booleans(), max_size=2))
RUN_FIELDS = ["stage", "seconds", "global_policy", "layer_policies", "gpus", "device",
              "description"]


@st.composite
def reports(draw):
    from_fields = {}
    for stage in draw(st.lists(st.sampled_from(["baseline", "mixed_precision", "fix",
                                                "linea_base", "zzz"]), max_size=3,
                               unique=True)):
        run = {"stage": stage, "seconds": 2.0, "global_policy": "float32"}
        for name in draw(st.lists(st.sampled_from(RUN_FIELDS + ["extra"]), max_size=3)):
            run[name] = draw(ANY_JSON_VALUE)
        from_fields[stage] = draw(st.one_of(st.just(run), ANY_JSON_VALUE)) \
            if draw(st.integers(0, 9)) == 0 else run
    profile = draw(st.one_of(st.none(), ANY_JSON_VALUE,
                             st.fixed_dictionaries({"log_dir": ANY_JSON_VALUE,
                                                    "bottleneck": ANY_JSON_VALUE})))
    report = {"format": draw(st.sampled_from(["gpuaccel.homework171/1", "other"])),
              "runs": from_fields if draw(st.integers(0, 9)) else draw(ANY_JSON_VALUE),
              "profile": profile}
    return json.dumps(report)  # NaN and Infinity as JSON's common extension, as Python writes


def _valid_seconds(run):
    seconds = run.get("seconds") if isinstance(run, dict) else None
    return (isinstance(seconds, (int, float)) and not isinstance(seconds, bool) and
            math.isfinite(seconds) and seconds > 0)


def check_report(text):
    import contextlib
    import io
    from gpuaccel import grade
    path = os.path.join(tempfile.mkdtemp(), "report.json")
    pathlib.Path(path).write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = grade.main([path])
    assert status in (0, 1, 2), status
    if status == 2:
        assert "cannot grade" in err.getvalue(), err.getvalue()
        return "cannot grade"
    report = json.loads(text)
    # Graded: so every run was a well-formed record with a real time.
    assert all(_valid_seconds(run) for run in report["runs"].values()), text
    return "graded"


@FUZZ
@seed(FUZZ_SEED)
@given(reports())
# Regressions: seconds 0 raised ZeroDivisionError, None a TypeError, a policy that is no string
# an AttributeError, gpus without memory_growth a KeyError (tracebacks, exit status 1); negative
# and NaN seconds were graded as a speedup.
@example(json.dumps({"format": "gpuaccel.homework171/1", "runs": {
    "baseline": {"stage": "baseline", "seconds": 10.0, "global_policy": "float32"},
    "mixed_precision": {"stage": "mixed_precision", "seconds": 0, "global_policy": "x"}}}))
@example(json.dumps({"format": "gpuaccel.homework171/1", "runs": {
    "baseline": {"stage": "baseline", "seconds": -3.0, "global_policy": "float32"},
    "mixed_precision": {"stage": "mixed_precision", "seconds": -1.0,
                        "global_policy": "mixed_float16"}}}))
def test_grader_answers_every_report_with_an_exit_status(isolated, text):
    isolated.call("test_fuzz_files", "check_report", text)


def check_notebook_file(text):
    import contextlib
    import io
    from gpuaccel import grade
    path = os.path.join(tempfile.mkdtemp(), "homework.ipynb")
    pathlib.Path(path).write_text(text, encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        status = grade.main([path])
    return status, err.getvalue()


def test_grader_refuses_files_that_are_not_notebooks(isolated):
    # Each is refused before a kernel starts; the last three raised jsonschema's
    # ValidationError, TypeError and AttributeError as tracebacks (exit status 1).
    notebook = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": []}
    for text in ["{ not json", "[]", "{}", json.dumps(dict(notebook, cells=[5])),
                 json.dumps(dict(notebook, metadata={"gpuaccel": "fast"}))]:
        status, err = isolated.call("test_fuzz_files", "check_notebook_file", text)
        assert status == 2 and "cannot grade" in err, (text, status, err)
