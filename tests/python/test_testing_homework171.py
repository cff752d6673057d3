"""gpuaccel.testing.homework171: a good submission passes every criterion, and each mistake a
student makes fails its own criterion with a message that says what to do (missing baseline, no
mixed precision, wrong bottleneck named, speedup 1.2x, ...). The bottleneck is checked against
gpuaccel.profiler.analyze of a real profile recorded here."""
import json
import time

import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras
from gpuaccel.testing import homework171
from gpuaccel.testing.homework171 import Report


def _model():
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                              keras.layers.Dense(3)])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


@pytest.fixture
def float32_model():
    return _model()


@pytest.fixture
def mixed_model():
    keras.mixed_precision.set_global_policy("mixed_bfloat16")
    try:
        model = _model()
    finally:
        keras.mixed_precision.set_global_policy("float32")
    return model


def _slow_batches():
    def slow(x, y):
        time.sleep(0.03)  # an input pipeline far slower than this tiny model's step
        return x, y
    x = np.random.default_rng(0).random((16 * 12, 4), dtype=np.float32)
    y = np.arange(len(x)) % 3
    return gpuaccel.data.Dataset.from_tensor_slices((x, y)).batch(16).map(slow)


@pytest.fixture(scope="module")
def input_bound_profile(tmp_path_factory):
    """A real profile (TensorBoard callback) whose bottleneck is the input pipeline."""
    log_dir = tmp_path_factory.mktemp("profile") / "logs"
    tb = keras.callbacks.TensorBoard(log_dir=str(log_dir), profile_batch=(3, 8))
    _model().fit(_slow_batches(), epochs=1, callbacks=[tb], verbose=0)
    assert gpuaccel.profiler.analyze(str(log_dir), print_table=False).bottleneck == "input"
    return str(log_dir)


def good_report(profile, float32_model, mixed_model):
    report = Report()
    report.add_run("baseline", 3.0, model=float32_model)
    report.add_run("mixed_precision", 2.4, model=mixed_model)
    report.add_profile(profile, bottleneck="entrada")
    report.add_run("fix", 1.5, model=mixed_model, description="prefetch + map en paralelo")
    return report


def test_a_good_submission_passes_every_criterion(input_bound_profile, float32_model,
                                                  mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    rubric = report.check(print_rubric=False)
    assert rubric.passed, str(rubric)
    assert [r.key for r in rubric.results] == list(homework171.CRITERIA)
    assert report.speedup == pytest.approx(2.0)
    assert "5/5" in str(rubric) and "speedup 3.000 s -> 1.500 s (fix) = 2.00x" in str(rubric)
    assert "no GPU: memory growth does not apply" in rubric["mixed_precision"].detail_en


def test_missing_baseline_fails_baseline_and_so_the_speedup(input_bound_profile, float32_model,
                                                             mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    del report.runs["baseline"]
    rubric = homework171.check(report)
    assert rubric.failed == ["baseline", "speedup"]
    assert "Falta la línea base" in rubric["baseline"].detail_es
    assert "report.measure('baseline', model, data)" in rubric["baseline"].detail_en
    assert "the baseline is missing" in rubric["speedup"].detail_en


def test_a_baseline_under_mixed_precision_fails(input_bound_profile, mixed_model):
    report = good_report(input_bound_profile, mixed_model, mixed_model)
    rubric = homework171.check(report)
    assert rubric.failed == ["baseline"]
    assert "must use the default float32 policy" in rubric["baseline"].detail_en


def test_no_mixed_precision_fails_alone(input_bound_profile, float32_model):
    report = good_report(input_bound_profile, float32_model, float32_model)
    rubric = homework171.check(report)
    assert rubric.failed == ["mixed_precision"]
    assert "used float32, not mixed precision" in rubric["mixed_precision"].detail_en
    assert "set_global_policy('mixed_float16')" in rubric["mixed_precision"].detail_es


def test_a_model_built_before_set_global_policy_is_caught(input_bound_profile, float32_model,
                                                          mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        report.add_run("mixed_precision", 2.4, model=float32_model)  # built under float32
    finally:
        keras.mixed_precision.set_global_policy("float32")
    rubric = homework171.check(report)
    assert rubric.failed == ["mixed_precision"]
    assert "the model was built before set_global_policy" in rubric["mixed_precision"].detail_en


def test_memory_growth_off_on_a_gpu_fails(input_bound_profile, float32_model, mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    report.runs["mixed_precision"].gpus = [{"name": "/physical_device:GPU:0",
                                            "memory_growth": False}]
    rubric = homework171.check(report)
    assert rubric.failed == ["mixed_precision"]
    assert "Memory growth is not on for /physical_device:GPU:0" in \
        rubric["mixed_precision"].detail_en


def test_a_fix_that_drops_mixed_precision_fails(input_bound_profile, float32_model, mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    report.add_run("fix", 1.5, model=float32_model, description="prefetch")
    rubric = homework171.check(report)
    assert rubric.failed == ["mixed_precision"]
    assert "'fix' run went back to float32" in rubric["mixed_precision"].detail_en


def test_the_wrong_bottleneck_named_fails_alone(input_bound_profile, float32_model, mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    report.add_profile(input_bound_profile, bottleneck="cómputo")
    rubric = homework171.check(report)
    assert rubric.failed == ["bottleneck"]
    assert "You named 'cómputo'" in rubric["bottleneck"].detail_en
    assert "finds 'input'" in rubric["bottleneck"].detail_en


def test_a_profile_that_cannot_be_read_fails_the_bottleneck(tmp_path, input_bound_profile,
                                                            float32_model, mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    empty = tmp_path / "empty_logs"
    empty.mkdir()
    report.add_profile(empty, bottleneck="input")
    rubric = homework171.check(report)
    assert rubric.failed == ["bottleneck"]
    assert "cannot be read" in rubric["bottleneck"].detail_en


def test_a_speedup_of_1_2x_fails_alone(input_bound_profile, float32_model, mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    report.add_run("fix", 2.5, model=mixed_model, description="prefetch")
    rubric = homework171.check(report)
    assert rubric.failed == ["speedup"]
    assert "3.000 s -> 2.500 s (fix) = 1.20x, below 1.5x" in rubric["speedup"].detail_en
    assert "2.000 s per epoch or less" in rubric["speedup"].detail_en
    assert "menor que 1.5x" in rubric["speedup"].detail_es


def test_a_missing_fix_fails_alone_and_the_speedup_uses_the_mixed_run(
        input_bound_profile, float32_model, mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    del report.runs["fix"]
    report.add_run("precision_mixta", 1.5, model=mixed_model)  # Spanish stage name
    rubric = homework171.check(report)
    assert rubric.failed == ["fix"]
    assert "(mixed_precision) = 2.00x" in rubric["speedup"].detail_en


def test_a_fix_without_description_fails(input_bound_profile, float32_model, mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    report.add_run("arreglo", 1.5, model=mixed_model)
    rubric = homework171.check(report)
    assert rubric.failed == ["fix"]
    assert "Describe the fix" in rubric["fix"].detail_en


def test_runs_on_different_devices_do_not_make_a_speedup(input_bound_profile, float32_model,
                                                         mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    report.runs["fix"].device = "GPU Tesla T4"
    rubric = homework171.check(report)
    assert rubric.failed == ["speedup"]
    assert "measure both on the same device" in rubric["speedup"].detail_en


def test_measure_times_real_epochs_and_records_the_settings(float32_model):
    report = Report()
    timing = report.measure("baseline", float32_model, _slow_batches(), epochs=2)
    run = report.runs["baseline"]
    assert len(timing.per_epoch) == 2
    assert run.seconds == timing.seconds > 12 * 0.03  # 12 batches each waiting 30 ms
    assert run.layer_policies == ["float32"] and run.device == "CPU"


def test_a_saved_report_grades_the_same(tmp_path, input_bound_profile, float32_model,
                                        mixed_model):
    report = good_report(input_bound_profile, float32_model, mixed_model)
    path = report.save(tmp_path / "informe.json")
    data = json.loads((tmp_path / "informe.json").read_text(encoding="utf-8"))
    assert data["format"] == "gpuaccel.homework171/1"
    assert homework171.check(path).passed
    assert Report.load(path).speedup == pytest.approx(2.0)
    with pytest.raises(ValueError, match="not a homework 171 report"):
        Report.from_dict({"runs": {}})
    with pytest.raises(ValueError, match="damaged homework 171 report"):
        Report.from_dict({"format": data["format"], "runs": {"baseline": {"secs": 1}}})


def test_bad_arguments_say_what_is_allowed(tmp_path):
    report = Report()
    with pytest.raises(ValueError, match="stage must be one of 'baseline'.*got 'final'"):
        report.add_run("final", 1.0)
    with pytest.raises(ValueError, match="seconds must be a positive number.*got -1"):
        report.add_run("baseline", -1)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        report.add_profile(tmp_path / "missing", "input")
    with pytest.raises(ValueError, match="bottleneck must be one of.*got 'gpu'"):
        report.add_profile(tmp_path, "gpu")
    with pytest.raises(TypeError, match="homework171.Report"):
        homework171.check(42)


@pytest.mark.parametrize("name, category", [("Entrada", "input"), ("input", "input"),
                                            ("cómputo", "compute"), ("host overhead",
                                                                     "host-overhead"),
                                            ("sincronización", "sync"), ("gpu", None)])
def test_bottleneck_names_in_spanish_and_english(name, category):
    assert homework171.normalize_bottleneck(name) == category
