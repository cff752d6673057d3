"""``tf.saved_model`` and Keras 3's ``model.export`` / ``TFSMLayer`` for gpuaccel models: what
gpuaccel writes loads in TensorFlow with the signatures TensorFlow writes for the same Keras
model, and loads back into gpuaccel with the same numbers; SavedModels TensorFlow wrote alone
are refused with a typed error; the options, constants and errors."""
import os
import sys

import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

RTOL, ATOL = 1e-5, 1e-6


def two_layer_mlp(lib):
    return lib.Sequential([lib.Input((4,)), lib.layers.Dense(3, activation="relu"),
                           lib.layers.Dense(2)])


def two_input_two_output(lib):
    """Outputs of different widths, so a swapped input or output order shows."""
    features, extra = lib.Input((4,), name="features"), lib.Input((2,), name="extra")
    hidden = lib.layers.Dense(3, activation="tanh")(features)
    joined = lib.layers.Concatenate()([hidden, extra])
    return lib.Model([features, extra], [lib.layers.Dense(2)(joined), lib.layers.Dense(1)(joined)])


def with_seeded_weights(ours, theirs, seed):
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=w.shape).astype(np.float32) for w in ours.get_weights()]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    return ours, theirs


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    """Our MLP, its Keras twin, data, and both saves of it (ours, TensorFlow's of the twin)."""
    ours, theirs = with_seeded_weights(two_layer_mlp(gk), two_layer_mlp(keras), seed=0)
    folder = tmp_path_factory.mktemp("mlp")
    ours_dir, theirs_dir = str(folder / "ours"), str(folder / "theirs")
    gt.saved_model.save(ours, ours_dir)
    tf.saved_model.save(theirs, theirs_dir)
    x = np.random.default_rng(1).normal(size=(5, 4)).astype(np.float32)
    return ours, theirs, x, ours_dir, theirs_dir


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Our functional MLP exported with model.export, and Keras's export of its twin."""
    def functional(lib):
        inputs = lib.Input((4,), name="pixels")
        return lib.Model(inputs, lib.layers.Dense(2)(lib.layers.Dense(3)(inputs)))

    ours, theirs = with_seeded_weights(functional(gk), functional(keras), seed=2)
    folder = tmp_path_factory.mktemp("exported")
    ours_dir, theirs_dir = str(folder / "ours"), str(folder / "theirs")
    ours.export(ours_dir, verbose=False)
    theirs.export(theirs_dir, verbose=False)
    x = np.random.default_rng(3).normal(size=(6, 4)).astype(np.float32)
    return ours, x, ours_dir, theirs_dir


def signature_names(signature):
    """(input names and shapes, output names and shapes) of a TF or gpuaccel signature."""
    _, inputs = signature.structured_input_signature
    return ({name: tuple(spec.shape) for name, spec in inputs.items()},
            {name: tuple(spec.shape) for name, spec in signature.structured_outputs.items()})


def test_our_save_loads_in_tensorflow_with_the_twins_signatures(mlp):
    ours, _, x, ours_dir, theirs_dir = mlp
    in_tf, twin_in_tf = tf.saved_model.load(ours_dir), tf.saved_model.load(theirs_dir)
    assert list(in_tf.signatures) == list(twin_in_tf.signatures) == [
        tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    serving = in_tf.signatures["serving_default"]
    assert signature_names(serving) == signature_names(twin_in_tf.signatures["serving_default"])
    (name,) = signature_names(serving)[0]
    (output,) = signature_names(serving)[1]
    np.testing.assert_allclose(serving(**{name: tf.constant(x)})[output].numpy(),
                               ours.predict(x, verbose=0), rtol=RTOL, atol=ATOL)


def test_our_save_round_trips_on_gpuaccel_with_tensorflows_names(mlp):
    ours, _, x, ours_dir, _ = mlp
    loaded = gt.saved_model.load(ours_dir)
    serving = loaded.signatures[gt.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY]
    assert signature_names(serving) == signature_names(
        tf.saved_model.load(ours_dir).signatures["serving_default"])
    expected = ours.predict(x, verbose=0)
    result = serving(inputs=x)
    assert list(result) == ["output_0"] and isinstance(result["output_0"], gt.Tensor)
    np.testing.assert_allclose(result["output_0"].numpy(), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(serving(x)["output_0"].numpy(), expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(loaded(x).numpy(), expected, rtol=1e-6, atol=1e-7)
    assert [v.shape for v in loaded.trainable_variables] == [w.shape for w in ours.get_weights()]
    for variable, weight in zip(loaded.variables, ours.get_weights()):
        np.testing.assert_array_equal(variable.numpy(), weight)
    assert loaded.non_trainable_variables == []


def test_loaded_model_differentiates_as_tensorflows(mlp):
    _, _, x, ours_dir, _ = mlp
    loaded, in_tf = gt.saved_model.load(ours_dir), tf.saved_model.load(ours_dir)
    inputs = gt.constant(x)
    with gt.GradientTape() as tape:
        tape.watch(inputs)
        total = gt.reduce_sum(loaded.signatures["serving_default"](inputs=inputs)["output_0"] ** 2)
    reference = tf.constant(x)
    with tf.GradientTape() as tf_tape:
        tf_tape.watch(reference)
        tf_total = tf.reduce_sum(
            in_tf.signatures["serving_default"](inputs=reference)["output_0"] ** 2)
    np.testing.assert_allclose(tape.gradient(total, inputs).numpy(),
                               tf_tape.gradient(tf_total, reference).numpy(), rtol=RTOL, atol=ATOL)


def test_several_inputs_and_outputs_keep_tensorflows_order(tmp_path):
    ours, theirs = with_seeded_weights(two_input_two_output(gk), two_input_two_output(keras), 4)
    gt.saved_model.save(ours, str(tmp_path / "ours"))
    tf.saved_model.save(theirs, str(tmp_path / "theirs"))
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(3, 2)).astype(np.float32)
    in_tf = tf.saved_model.load(str(tmp_path / "ours")).signatures["serving_default"]
    twin = tf.saved_model.load(str(tmp_path / "theirs")).signatures["serving_default"]
    assert signature_names(in_tf) == signature_names(twin)
    loaded = gt.saved_model.load(str(tmp_path / "ours")).signatures["serving_default"]
    assert signature_names(loaded) == signature_names(twin)
    expected = twin(inputs=tf.constant(a), inputs_1=tf.constant(b))
    got = loaded(inputs=a, inputs_1=b)
    assert sorted(got) == sorted(expected.keys()) == ["output_0", "output_1"]
    for key in expected:
        np.testing.assert_allclose(got[key].numpy(), expected[key].numpy(), rtol=RTOL, atol=ATOL)


def test_tensorflow_written_saved_model_is_refused_with_what_to_do(mlp):
    _, _, _, _, theirs_dir = mlp
    assert gt.saved_model.contains_saved_model(theirs_dir)
    assert tf.saved_model.contains_saved_model(theirs_dir)
    with pytest.raises(gt.saved_model.ForeignSavedModelError, match="tf.saved_model.load"):
        gt.saved_model.load(theirs_dir)


def test_export_serve_endpoint_matches_keras_export(exported):
    ours, x, ours_dir, theirs_dir = exported
    loaded, twin = tf.saved_model.load(ours_dir), tf.saved_model.load(theirs_dir)
    assert sorted(loaded.signatures) == sorted(twin.signatures) == ["serve", "serving_default"]
    for key in twin.signatures:
        assert signature_names(loaded.signatures[key]) == signature_names(twin.signatures[key])
    expected = ours.predict(x, verbose=0)
    np.testing.assert_allclose(loaded.serve(tf.constant(x)).numpy(), expected, rtol=RTOL,
                               atol=ATOL)
    back = gt.saved_model.load(ours_dir)
    np.testing.assert_allclose(back.serve(x).numpy(), expected, rtol=1e-6, atol=1e-7)
    assert signature_names(back.signatures["serving_default"]) == signature_names(
        twin.signatures["serving_default"])


def test_tfsm_layer_both_ways(exported):
    ours, x, ours_dir, theirs_dir = exported
    expected = ours.predict(x, verbose=0)
    in_keras = keras.layers.TFSMLayer(ours_dir, call_endpoint="serve")
    np.testing.assert_allclose(np.asarray(in_keras(x)), expected, rtol=RTOL, atol=ATOL)
    layer = gk.layers.TFSMLayer(ours_dir, call_endpoint="serve")
    np.testing.assert_allclose(layer(x).numpy(), expected, rtol=1e-6, atol=1e-7)
    assert len(layer.trainable_weights) == 4  # the inner Dense layers' kernels and biases
    head = gk.layers.Dense(1, kernel_initializer="ones")
    predicted = gk.Sequential([gk.Input((4,)), layer, head]).predict(x, verbose=0)
    np.testing.assert_allclose(predicted, expected.sum(axis=1, keepdims=True), rtol=RTOL,
                               atol=ATOL)
    with pytest.raises(gt.saved_model.ForeignSavedModelError, match="TensorFlow wrote"):
        gk.layers.TFSMLayer(theirs_dir)
    with pytest.raises(ValueError, match="Available endpoints"):
        gk.layers.TFSMLayer(ours_dir, call_endpoint="predict")
    with pytest.raises(NotImplementedError, match="call_endpoint='serve'"):
        gk.layers.TFSMLayer(ours_dir, call_endpoint="serving_default")


def by_shape(weights):
    return sorted((np.asarray(w) for w in weights), key=lambda w: w.shape)


def test_tfsm_layer_fine_tunes_as_keras(exported):
    """One SGD step through a TFSMLayer changes its weights as Keras's TFSMLayer does."""
    ours, x, ours_dir, _ = exported
    y = np.random.default_rng(7).normal(size=(x.shape[0], 1)).astype(np.float32)
    trained = {}
    for lib in (gk, keras):
        layer = lib.layers.TFSMLayer(ours_dir, call_endpoint="serve")
        model = lib.Sequential([lib.Input((4,)), layer,
                                lib.layers.Dense(1, kernel_initializer="ones")])
        model.compile(optimizer=lib.optimizers.SGD(0.1), loss="mse")
        model.fit(x, y, batch_size=len(x), epochs=1, shuffle=False, verbose=0)
        trained[lib] = by_shape(layer.get_weights())
    for theirs, mine, before in zip(trained[keras], trained[gk], by_shape(ours.get_weights())):
        assert np.abs(mine - before).max() > 1e-4  # the step moved them
        np.testing.assert_allclose(mine, theirs, rtol=RTOL, atol=ATOL)


def test_tfsm_layer_over_a_nested_model_runs_for_inference(tmp_path):
    inner = gk.Sequential([gk.Input((4,)), gk.layers.Dense(3)])
    model = gk.Sequential([gk.Input((4,)), inner, gk.layers.Dense(2)])
    model.export(str(tmp_path / "nested"), verbose=False)
    layer = gk.layers.TFSMLayer(str(tmp_path / "nested"))
    assert len(layer.weights) == 4 and layer.trainable_weights == []
    x = np.random.default_rng(8).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_allclose(layer(x).numpy(), model.predict(x, verbose=0), rtol=1e-6,
                               atol=1e-7)


def test_save_replaces_an_old_directory_and_a_failed_save_keeps_it(mlp, tmp_path, monkeypatch):
    ours, _, x, _, _ = mlp
    target = str(tmp_path / "model")
    gt.saved_model.save(two_layer_mlp(gk), target)
    gt.saved_model.save(ours, target)  # replaces the first model
    np.testing.assert_allclose(gt.saved_model.load(target)(x).numpy(),
                               ours.predict(x, verbose=0), rtol=1e-6, atol=1e-7)

    def failing_save(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(tf.saved_model, "save", failing_save)
    with pytest.raises(RuntimeError, match="disk full"):
        gt.saved_model.save(two_layer_mlp(gk), target)
    assert os.listdir(tmp_path) == ["model"]  # no staging directory left behind
    np.testing.assert_allclose(gt.saved_model.load(target)(x).numpy(),
                               ours.predict(x, verbose=0), rtol=1e-6, atol=1e-7)


def test_missing_tensorflow_says_how_to_install_it_or_save_keras(mlp, tmp_path, monkeypatch):
    ours = mlp[0]
    monkeypatch.setitem(sys.modules, "tensorflow", None)  # `import tensorflow` fails
    with pytest.raises(ImportError, match=r"pip install tensorflow.*model\.save\('x\.keras'\)"):
        gt.saved_model.save(ours, str(tmp_path / "m"))
    with pytest.raises(ImportError, match="pip install tensorflow"):
        ours.export(str(tmp_path / "m"))
    assert not os.path.exists(tmp_path / "m")


def test_bad_arguments_get_typed_errors(mlp, tmp_path):
    ours, _, _, ours_dir, _ = mlp
    a_file = tmp_path / "model.txt"
    a_file.write_text("not a model")
    with pytest.raises(NotADirectoryError, match="is a file"):
        gt.saved_model.load(str(a_file))
    with pytest.raises(FileNotFoundError, match="SavedModel file does not exist"):
        gt.saved_model.load(str(tmp_path / "absent"))
    with pytest.raises(FileNotFoundError, match="SavedModel file does not exist"):
        gt.saved_model.load(str(tmp_path))  # a directory without saved_model.pb
    with pytest.raises(FileExistsError, match="is a file"):
        gt.saved_model.save(ours, str(a_file))
    with pytest.raises(TypeError, match="gpuaccel Keras models"):
        gt.saved_model.save({"weights": 1}, str(tmp_path / "dict"))
    with pytest.raises(NotImplementedError, match="signatures"):
        gt.saved_model.save(ours, str(tmp_path / "sig"), signatures=lambda x: x)
    with pytest.raises(ValueError, match="no MetaGraph with tags"):
        gt.saved_model.load(ours_dir, tags=[gt.saved_model.TRAINING])
    with pytest.raises(ValueError, match="experimental_skip_checkpoint"):
        gt.saved_model.LoadOptions(experimental_skip_checkpoint=True)
    with pytest.raises(ValueError, match="function_aliases"):
        gt.saved_model.SaveOptions(function_aliases={"f": ours})
    with pytest.raises(ValueError, match="supports tf_saved_model"):
        ours.export(str(tmp_path / "e"), format="zip")
    with pytest.raises(NotImplementedError, match="format='onnx'"):
        ours.export(str(tmp_path / "e"), format="onnx")
    serving = gt.saved_model.load(ours_dir).signatures["serving_default"]
    with pytest.raises(TypeError, match="keyword inputs inputs; got x"):
        serving(x=np.zeros((1, 4), np.float32))
    with pytest.raises(ValueError, match=r"shape \(None, 4\)"):
        serving(inputs=np.zeros((1, 5), np.float32))
    assert not os.path.exists(tmp_path / "dict") and not os.path.exists(tmp_path / "sig")
    for library in (keras, gk):  # Keras 3's load_model points to TFSMLayer, as ours does
        with pytest.raises(ValueError, match="legacy SavedModel format.*TFSMLayer"):
            library.models.load_model(ours_dir)


def test_subclassed_model_is_refused_with_what_to_do(tmp_path):
    class Doubler(gk.Model):
        def __init__(self):
            super().__init__()
            self.dense = gk.layers.Dense(2)

        def call(self, inputs):
            return self.dense(inputs) * 2.0

    model = Doubler()
    model(np.zeros((1, 3), np.float32))
    with pytest.raises(NotImplementedError, match="Sequential or functional"):
        gt.saved_model.save(model, str(tmp_path / "sub"))


def test_options_and_constants_are_tensorflows(mlp, tmp_path):
    ours, _, x, _, _ = mlp
    target = str(tmp_path / "with_options")
    gt.saved_model.save(ours, target, options=gt.saved_model.SaveOptions(save_debug_info=True))
    assert os.path.isfile(os.path.join(target, "debug", "saved_model_debug_info.pb"))
    loaded = gt.saved_model.load(target, tags=[gt.saved_model.SERVING],
                                 options=gt.saved_model.LoadOptions(
                                     experimental_io_device="/job:localhost"))
    np.testing.assert_allclose(loaded(x).numpy(), ours.predict(x, verbose=0), rtol=1e-6,
                               atol=1e-7)
    for name in ("DEFAULT_SERVING_SIGNATURE_DEF_KEY", "SERVING", "TRAINING", "GPU", "TPU",
                 "ASSETS_DIRECTORY", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME",
                 "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT",
                 "SAVED_MODEL_SCHEMA_VERSION", "PREDICT_METHOD_NAME", "PREDICT_INPUTS",
                 "PREDICT_OUTPUTS"):
        assert getattr(gt.saved_model, name) == getattr(tf.saved_model, name), name
    assert not gt.saved_model.contains_saved_model(str(tmp_path / "nothing"))
