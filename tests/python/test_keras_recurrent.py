"""Keras 3's recurrent layers in gpuaccel (python/gpuaccel/keras/_recurrent_layers.py) against
real Keras with the same weights and inputs: forward values of SimpleRNN/LSTM/GRU and their
options (return_sequences, return_state, go_backwards, initial_state, reset_after), RNN over
cells and stacked cells, Bidirectional's merge modes and TimeDistributed(Dense); gradients with
respect to the inputs and every weight (tf.GradientTape); the losses of a short `fit`; weights
moving both ways through .weights.h5 files; the weight layout and initial values; dropout;
argument and input errors. Each layer's call is traced once and replayed (python_calls == 1)."""
import warnings

import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers

from keras_layer_comparison import case_ids, normal, npy, same_random_weights  # noqa: E402


def as_list(value):
    """A layer's outputs as a flat list (stacked cells nest their states)."""
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in as_list(item)]
    return [value]


# (id, factory over a layers module, input shape); batch 2, 5 steps, 3 features.
SHAPE = (2, 5, 3)
CASES = [
    ("SimpleRNN", lambda m: m.SimpleRNN(4), SHAPE),
    ("SimpleRNN-relu-sequences", lambda m: m.SimpleRNN(3, activation="relu",
                                                       return_sequences=True), SHAPE),
    ("LSTM-sequences", lambda m: m.LSTM(4, return_sequences=True), SHAPE),
    ("LSTM-state-backwards", lambda m: m.LSTM(3, return_state=True, go_backwards=True), SHAPE),
    ("LSTM-no-bias", lambda m: m.LSTM(2, use_bias=False), SHAPE),
    ("GRU-backwards-sequences", lambda m: m.GRU(4, return_sequences=True, go_backwards=True),
     SHAPE),
    ("GRU-reset-before", lambda m: m.GRU(3, reset_after=False, return_state=True), SHAPE),
    ("RNN-LSTMCell", lambda m: m.RNN(m.LSTMCell(3), return_sequences=True), SHAPE),
    ("RNN-stacked-cells", lambda m: m.RNN([m.SimpleRNNCell(3), m.GRUCell(2), m.LSTMCell(2)],
                                          return_state=True), SHAPE),
    ("Bidirectional-concat", lambda m: m.Bidirectional(m.LSTM(3, return_sequences=True)), SHAPE),
    ("Bidirectional-sum", lambda m: m.Bidirectional(m.GRU(3), merge_mode="sum"), SHAPE),
    ("Bidirectional-mul", lambda m: m.Bidirectional(m.SimpleRNN(2, return_sequences=True),
                                                    merge_mode="mul"), SHAPE),
    ("Bidirectional-ave-state", lambda m: m.Bidirectional(m.LSTM(2, return_state=True),
                                                          merge_mode="ave"), SHAPE),
    ("Bidirectional-None", lambda m: m.Bidirectional(m.GRU(2, return_sequences=True),
                                                     merge_mode=None), SHAPE),
    ("TimeDistributed-Dense", lambda m: m.TimeDistributed(m.Dense(2, activation="tanh")), SHAPE),
]


def plain(value):
    """A nest of shapes with tuples and lists alike."""
    return [plain(v) for v in value] if isinstance(value, list) or (
        isinstance(value, tuple) and value and isinstance(value[0], (list, tuple))) else value


def gradients_ours(layer, x, upstreams, **call):
    tensor = ga.tensor(x)
    with ga.GradientTape() as tape:
        tape.watch(tensor)
        outputs = as_list(layer(tensor, **call))
        loss = sum(ga.reduce_sum(y * ga.tensor(u)) for y, u in zip(outputs, upstreams))
    grads = tape.gradient(loss, [tensor] + list(layer.trainable_weights))
    return [npy(y) for y in outputs], [npy(g) for g in grads]


def gradients_keras(layer, x, upstreams, **call):
    tensor = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(tensor)
        outputs = as_list(layer(tensor, **call))
        loss = sum(tf.reduce_sum(y * u) for y, u in zip(outputs, upstreams))
    grads = tape.gradient(loss, [tensor] + list(layer.trainable_weights))
    return [y.numpy() for y in outputs], [g.numpy() for g in grads]


@pytest.mark.parametrize("name,factory,shape", CASES, ids=case_ids(CASES))
def test_forward_and_gradients_match_keras(name, factory, shape):
    ours, theirs = factory(L), factory(K)
    build_shape = (None,) + shape[1:]
    ours.build(build_shape)
    theirs.build(build_shape)
    # Keras's layout: the same weights, in the same order, of the same shapes
    assert [tuple(w.shape) for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights]
    same_random_weights(ours, theirs)
    x = normal(shape, 0)
    expected = [np.asarray(y) for y in as_list(theirs(x))]
    upstreams = [normal(y.shape, 90 + i) for i, y in enumerate(expected)]
    outputs, grads = gradients_ours(ours, x, upstreams)
    outputs_ref, grads_ref = gradients_keras(theirs, x, upstreams)
    assert [y.shape for y in outputs] == [y.shape for y in outputs_ref]
    for y, y_ref in zip(outputs, outputs_ref):
        np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-6)
    assert len(grads) == len(grads_ref)
    for g, g_ref in zip(grads, grads_ref):
        np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-5)
    # traced once, replayed since: the same values
    again = as_list(ours(ga.tensor(x)))
    for y, y_ref in zip(again, outputs_ref):
        np.testing.assert_allclose(npy(y), y_ref, rtol=1e-5, atol=1e-6)
    assert ours._cpp.python_calls == 1 and ours._cpp.eager_reason == ""
    assert plain(ours.compute_output_shape(build_shape)) == \
        plain(theirs.compute_output_shape(build_shape))
    symbolic = ours(gk.Input(shape[1:]))
    assert [t.shape for t in as_list(symbolic)] == \
        [tuple(t.shape) for t in as_list(theirs(keras.Input(shape[1:])))]


def test_initial_state_is_used_as_keras_does():
    ours, theirs = L.LSTM(3, return_sequences=True), K.LSTM(3, return_sequences=True)
    ours.build((None, 4, 2))
    theirs.build((None, 4, 2))
    same_random_weights(ours, theirs)
    x, h, c = normal((2, 4, 2), 1), normal((2, 3), 2), normal((2, 3), 3)
    upstream = normal((2, 4, 3), 4)
    y, grads = gradients_ours(ours, x, [upstream], initial_state=[ga.tensor(h), ga.tensor(c)])
    y_ref, grads_ref = gradients_keras(theirs, x, [upstream], initial_state=[h, c])
    np.testing.assert_allclose(y[0], y_ref[0], rtol=1e-5, atol=1e-6)
    for g, g_ref in zip(grads, grads_ref):
        np.testing.assert_allclose(g, g_ref, rtol=1e-4, atol=1e-5)
    assert not np.allclose(y[0], npy(ours(x)))  # the states changed the result
    with pytest.raises(ValueError, match="expects 2 state"):
        ours(x, initial_state=[h])


def test_cells_called_directly_return_output_and_states():
    pairs = [(L.LSTMCell(3), K.LSTMCell(3)), (L.GRUCell(3), K.GRUCell(3)),
             (L.SimpleRNNCell(3), K.SimpleRNNCell(3)),
             (L.StackedRNNCells([L.SimpleRNNCell(3), L.LSTMCell(3)]),
              K.StackedRNNCells([K.SimpleRNNCell(3), K.LSTMCell(3)]))]
    for ours, theirs in pairs:
        ours.build((None, 2))
        theirs.build((None, 2))
        same_random_weights(ours, theirs)
        x = normal((4, 2), 5)
        sizes = theirs.state_size if isinstance(theirs.state_size, list) else [3]
        states = [[normal((4, n), 6 + i) for n in size] if isinstance(size, list)
                  else normal((4, size), 6 + i) for i, size in enumerate(sizes)]
        assert as_list(ours.state_size) == as_list(theirs.state_size)
        y, new_states = ours(x, states)
        y_ref, new_states_ref = theirs(x, states)
        np.testing.assert_allclose(npy(y), y_ref, rtol=1e-5, atol=1e-6)
        assert len(as_list(new_states)) == len(as_list(new_states_ref))
        for s, s_ref in zip(as_list(new_states), as_list(new_states_ref)):
            np.testing.assert_allclose(npy(s), s_ref, rtol=1e-5, atol=1e-6)


def test_initial_weights_follow_keras_defaults():
    ga.random.set_seed(0)
    lstm, gru = L.LSTM(4), L.GRU(3)
    lstm.build((None, 5, 2))
    gru.build((None, 5, 2))
    kernel, recurrent, bias = lstm.get_weights()
    # orthogonal recurrent kernel: (4, 16) rows orthonormal
    np.testing.assert_allclose(recurrent @ recurrent.T, np.eye(4), atol=1e-5)
    # unit_forget_bias: zeros, ones for the forget gate, zeros
    np.testing.assert_array_equal(bias, np.r_[np.zeros(4), np.ones(4), np.zeros(8)])
    limit = np.sqrt(6 / (2 + 16))  # glorot_uniform
    assert np.abs(kernel).max() <= limit and np.abs(kernel).std() > limit / 4
    assert [w.shape for w in gru.get_weights()] == [(2, 9), (3, 9), (2, 9)]
    assert [w.name for w in lstm.weights] == ["kernel", "recurrent_kernel", "bias"]
    assert [w.path for w in lstm.weights] == [f"{lstm.name}/lstm_cell/{n}" for n in
                                              ("kernel", "recurrent_kernel", "bias")]
    assert L.GRU(3).get_config()["reset_after"] is True
    no_forget = L.LSTM(2, unit_forget_bias=False, bias_initializer="ones")
    no_forget.build((None, 3, 1))
    np.testing.assert_array_equal(no_forget.get_weights()[2], np.ones(8))


def test_config_matches_keras_and_round_trips():
    for make in (lambda m: m.LSTM(3, return_sequences=True, dropout=0.25),
                 lambda m: m.GRU(2, reset_after=False, go_backwards=True),
                 lambda m: m.SimpleRNN(2, activation="relu")):
        ours, theirs = make(L), make(K)
        config, keras_config = ours.get_config(), theirs.get_config()
        assert set(config) == set(keras_config)
        for key in config:
            if key not in ("name", "dtype") and not key.endswith("_initializer"):
                assert config[key] == keras_config[key], key
        rebuilt = type(ours).from_config(config)
        assert rebuilt.get_config() == config


def test_dropout_draws_one_fresh_mask_per_training_call():
    layer = L.SimpleRNN(8, dropout=0.5, recurrent_dropout=0.5, return_sequences=True)
    plain = L.SimpleRNN(8, return_sequences=True)
    x = np.abs(normal((4, 6, 3), 7)) + 0.5
    layer.build((None, 6, 3))
    plain.build((None, 6, 3))
    plain.set_weights(layer.get_weights())
    np.testing.assert_allclose(npy(layer(x)), npy(plain(x)), rtol=1e-6)  # inference: no dropout
    first, second = npy(layer(x, training=True)), npy(layer(x, training=True))
    assert not np.allclose(first, second)  # a fresh mask on each replay
    assert not np.allclose(first, npy(plain(x)))
    assert layer._cpp.eager_reason == "" and layer._cpp.python_calls == 2  # one per signature


def keras_predict(model, x):
    return np.asarray(model(x))  # a plain call: Keras's predict compiles a function first


@pytest.mark.parametrize("make", [
    lambda m: m.LSTM(3, return_sequences=True, dtype="mixed_float16"),
    lambda m: m.Bidirectional(m.GRU(2), merge_mode="sum", dtype="mixed_bfloat16"),
    lambda m: m.RNN([m.SimpleRNNCell(2), m.LSTMCell(2)], dtype="mixed_float16"),
], ids=["LSTM-float16", "Bidirectional-bfloat16", "stacked-float16"])
def test_mixed_precision_policies_give_keras_dtypes_and_values(make):
    ours, theirs = make(L), make(K)
    ours.build((None, 4, 3))
    theirs.build((None, 4, 3))
    same_random_weights(ours, theirs)
    x = normal((2, 4, 3), 9)
    got, expected = ours(x), theirs(x)
    assert got._dtype_name == expected.dtype.name  # float32 masters, outputs in the policy's
    assert {w._dtype_name for w in ours.weights} == {"float32"}
    np.testing.assert_allclose(npy(got).astype(np.float32), np.asarray(expected, np.float32),
                               rtol=1e-2, atol=1e-2)
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    np.testing.assert_allclose(npy(ours(x, mask=mask)).astype(np.float32),
                               np.asarray(theirs(x, mask=mask), np.float32), rtol=1e-2, atol=1e-2)


def fit_losses(lib, model, x, y, loss):
    model.compile(optimizer=lib.optimizers.SGD(0.1), loss=loss)
    return model.fit(x, y, epochs=2, batch_size=8, shuffle=False, verbose=0).history["loss"]


def encoder_model(lib, layers):
    """Functional, with return_state outputs feeding a merge and a TimeDistributed head."""
    inputs = lib.Input((5, 3))
    sequence, h, c = layers.LSTM(4, return_sequences=True, return_state=True)(inputs)
    decoded = layers.SimpleRNN(4, return_sequences=True)(sequence, initial_state=[h])
    joined = layers.Concatenate()([layers.TimeDistributed(layers.Dense(2))(decoded),
                                   layers.RepeatVector(5)(c)])
    return lib.Model(inputs, layers.Flatten()(joined))


def test_functional_return_state_model_fits_and_saves_like_keras(tmp_path):
    x, y = normal((16, 5, 3), 1), normal((16, 30), 2)
    ours, theirs = encoder_model(gk, L), encoder_model(keras, K)
    assert [type(layer).__name__ for layer in ours.layers] == \
        [type(layer).__name__ for layer in theirs.layers]  # the InputLayer first, as Keras
    weights = [normal(w.shape, 30 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    np.testing.assert_allclose(ours.predict(x, verbose=0), keras_predict(theirs, x),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fit_losses(gk, ours, x, y, "mse"),
                               fit_losses(keras, theirs, x, y, "mse"), rtol=2e-4)
    # .weights.h5 both ways: Keras's groups (lstm/cell/vars, time_distributed/layer/vars)
    ours.save_weights(tmp_path / "ours.weights.h5")
    fresh = encoder_model(keras, K)
    fresh.load_weights(tmp_path / "ours.weights.h5")
    np.testing.assert_allclose(keras_predict(fresh, x), ours.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    # .keras archives both ways
    ours.save(tmp_path / "ours.keras")
    loaded = keras.models.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(keras_predict(loaded, x), ours.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


def stacked_states_model(lib, layers):
    """Functional, with the nested states of stacked cells (one entry per cell) as outputs."""
    inputs = lib.Input((5, 3))
    output, *states = layers.RNN([layers.SimpleRNNCell(3), layers.LSTMCell(2)],
                                 return_state=True)(inputs)
    return lib.Model(inputs, layers.Concatenate()([output] + as_list(states))), states


def structure(value):
    """The nesting of a layer's outputs, each output as its shape after the batch."""
    if isinstance(value, (list, tuple)):
        return [structure(item) for item in value]
    return tuple(value.shape[1:])


def test_nested_states_of_stacked_cells_in_a_functional_model_match_keras(tmp_path):
    (ours, our_states), (theirs, their_states) = (stacked_states_model(gk, L),
                                                  stacked_states_model(keras, K))
    assert structure(our_states) == structure(their_states)  # nested per cell, as Keras's
    assert [type(layer).__name__ for layer in ours.layers] == \
        [type(layer).__name__ for layer in theirs.layers]  # the unpacking nodes are hidden
    weights = [normal(w.shape, 60 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    x = normal((4, 5, 3), 9)
    np.testing.assert_allclose(ours.predict(x, verbose=0), keras_predict(theirs, x),
                               rtol=1e-5, atol=1e-6)
    ours.save(tmp_path / "ours.keras")  # each state named by its flat output index
    loaded = keras.models.load_model(tmp_path / "ours.keras")
    np.testing.assert_allclose(keras_predict(loaded, x), ours.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    # eagerly, the same nesting
    eager = L.RNN([L.SimpleRNNCell(3), L.LSTMCell(2)], return_state=True)(x)
    assert structure(eager[1:]) == structure(their_states)


def test_time_distributed_is_a_wrapper_and_bidirectional_is_not_as_in_keras():
    for layers in (L, K):
        assert isinstance(layers.TimeDistributed(layers.Dense(2)), layers.Wrapper)
        assert not isinstance(layers.Bidirectional(layers.LSTM(2)), layers.Wrapper)
    wrapped, theirs = (layers.TimeDistributed(layers.Dense(2, name="inner"), name="td")
                       for layers in (L, K))
    for layer in (wrapped, theirs):
        layer.build((None, 5, 3))
    assert [(w.name, w.path) for w in wrapped.weights] == \
        [(w.name, w.path) for w in theirs.weights]  # the Wrapper's adopted weights
    again = L.TimeDistributed.from_config(wrapped.get_config())
    assert type(again.layer) is L.Dense and again.layer.units == 2


def test_keras_weight_files_of_wrappers_and_stacked_cells_load():
    def model(lib, layers):
        return lib.Sequential([lib.Input((5, 3)),
                               layers.Bidirectional(layers.GRU(2, return_sequences=True,
                                                               reset_after=False)),
                               layers.TimeDistributed(layers.Dense(2)),
                               layers.RNN([layers.LSTMCell(2), layers.SimpleRNNCell(3),
                                           layers.LSTMCell(2)])])

    theirs, ours = model(keras, K), model(gk, L)
    theirs.set_weights([normal(w.shape, 50 + i) * 0.3 for i, w in enumerate(theirs.get_weights())])
    x = normal((4, 5, 3), 8)
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        theirs.save_weights(f"{folder}/k.weights.h5")
        ours.load_weights(f"{folder}/k.weights.h5")
        np.testing.assert_allclose(ours.predict(x, verbose=0), keras_predict(theirs, x),
                                   rtol=1e-5, atol=1e-6)
        theirs.save(f"{folder}/k.keras")
        loaded = gk.models.load_model(f"{folder}/k.keras")
    np.testing.assert_allclose(loaded.predict(x, verbose=0), keras_predict(theirs, x),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call,error,message", [
    (lambda: L.LSTM(3)(np.zeros((2, 3), np.float32)), ValueError,
     r"incompatible with the layer: expected ndim=3, found ndim=2. Full shape received: \(2, 3\)"),
    (lambda: L.GRU(3)(gk.Input((4,))), ValueError, r"expected ndim=3, found ndim=2"),
    (lambda: L.TimeDistributed(L.Dense(2))(np.zeros((2, 3), np.float32)), ValueError,
     r"`TimeDistributed` Layer should be passed an `input_shape` with at least 3 dimensions"),
    (lambda: L.Bidirectional(L.Dense(2)), ValueError, r"keras.layers.RNN"),
    (lambda: L.Bidirectional(L.LSTM(2), merge_mode="x"), ValueError, r"Invalid merge mode"),
    (lambda: L.LSTM(0), ValueError, r"invalid value for argument `units`"),
    (lambda: L.SimpleRNN(2, stateful=True), NotImplementedError, r"stateful=True"),
    (lambda: L.LSTM(2)(np.zeros((2, 3, 4), np.float32), mask=np.ones((2, 3, 4), bool)),
     ValueError, r"`mask` must be a \(batch, timesteps\) boolean tensor"),
    (lambda: L.LSTM(2, kernel_regularizer="l2"), NotImplementedError, r"kernel_regularizer"),
    (lambda: L.RNN(object()), ValueError, r"should have a `call` method"),
])
def test_bad_arguments_and_inputs_raise_keras_errors(call, error, message):
    with pytest.raises(error, match=message):
        call()


# ---- timestep masks (Embedding(mask_zero=True), Masking) ----

def padded_ids(seed=0):
    """Token ids with trailing padding of varied length and one row with leading padding."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, 30, (16, 7))
    for row in range(16):
        ids[row, rng.integers(2, 7):] = 0
    ids[3, :2] = 0
    return ids


def masked_sequential(lib, layers):
    return lib.Sequential([lib.Input((7,), dtype="int32"),
                           layers.Embedding(30, 6, mask_zero=True), layers.Dropout(0.0),
                           layers.Bidirectional(layers.GRU(4, return_sequences=True)),
                           layers.LSTM(3, go_backwards=True),
                           layers.Dense(1, activation="sigmoid")])


def masked_functional(lib, layers):
    """The mask reaches a return_state RNN, passes with its sequence output, and is not used
    where initial_state is given (Keras fills `mask` only for a single tensor argument)."""
    ids = lib.Input((7,), dtype="int32")
    sequence, h = layers.SimpleRNN(4, return_sequences=True, return_state=True)(
        layers.Embedding(30, 6, mask_zero=True)(ids))
    masked = layers.GRU(4, return_sequences=True)(sequence)
    unmasked = layers.GRU(4)(masked, initial_state=[h])
    return lib.Model(ids, layers.Dense(1, activation="sigmoid")(unmasked))


@pytest.mark.parametrize("make", [masked_sequential, masked_functional],
                         ids=["Sequential", "functional"])
def test_masked_models_predict_and_fit_like_keras(make, tmp_path):
    """Text classifiers (Embedding -> recurrent layers -> Dense): the same predictions, fit
    losses and weights as Keras, every layer's step traced (no per-step Python fallback)."""
    ids = padded_ids()
    labels = (ids.sum(1) % 2).astype(np.float32).reshape(-1, 1)
    ours, theirs = make(gk, L), make(keras, K)
    weights = [normal(w.shape, 60 + i) * 0.3 for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    np.testing.assert_allclose(ours.predict(ids, verbose=0), keras_predict(theirs, ids),
                               rtol=1e-5, atol=1e-6)
    unmasked = ids.copy()
    unmasked[unmasked == 0] = 1  # the same weights without padding give other values
    assert not np.allclose(ours.predict(ids, verbose=0), ours.predict(unmasked, verbose=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # the Python-fallback warning
        history = fit_losses(gk, ours, ids, labels, "binary_crossentropy")
    np.testing.assert_allclose(history, fit_losses(keras, theirs, ids, labels,
                                                   "binary_crossentropy"), rtol=2e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)
    for layer in ours.layers:
        if not isinstance(layer, gk.layers.InputLayer) and layer._is_python_layer():
            assert layer._cpp.eager_reason == "" and layer._cpp.python_calls <= 3
    assert [type(layer).__name__ for layer in ours.layers] == \
        [type(layer).__name__ for layer in theirs.layers]  # the functional one's InputLayer too
    if make is masked_functional:  # .keras both ways: each side rebuilds its masks
        ours.save(tmp_path / "masked.keras")
        loaded = keras.models.load_model(tmp_path / "masked.keras")
        np.testing.assert_allclose(keras_predict(loaded, ids), ours.predict(ids, verbose=0),
                                   rtol=1e-5, atol=1e-6)
        theirs.save(tmp_path / "keras_masked.keras")  # holds Keras's NotEqual mask op
        loaded = gk.models.load_model(tmp_path / "keras_masked.keras")
        np.testing.assert_allclose(loaded.predict(ids, verbose=0), keras_predict(theirs, ids),
                                   rtol=1e-5, atol=1e-6)


def test_eager_masks_and_the_masking_layer_match_keras():
    embedding, lstm = L.Embedding(30, 6, mask_zero=True), L.LSTM(3, return_sequences=True)
    keras_embedding, keras_lstm = K.Embedding(30, 6, mask_zero=True), \
        K.LSTM(3, return_sequences=True)
    for ours, theirs, shape in ((embedding, keras_embedding, (None, 7)),
                                (lstm, keras_lstm, (None, 7, 6))):
        ours.build(shape)
        theirs.build(shape)
        same_random_weights(ours, theirs)
    ids = padded_ids(1)
    np.testing.assert_allclose(npy(lstm(embedding(ids))), keras_lstm(keras_embedding(ids)),
                               rtol=1e-5, atol=1e-6)
    # the mask passes through Dropout (inference: identity) as in Keras's eager calls
    np.testing.assert_allclose(npy(lstm(L.Dropout(0.5)(embedding(ids)))),
                               keras_lstm(K.Dropout(0.5)(keras_embedding(ids))),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(npy(embedding.compute_mask(ids)),
                                  keras_embedding.compute_mask(ids))
    mask = ids != 0  # an explicit mask= as Keras takes it
    np.testing.assert_allclose(npy(lstm(npy(embedding(ids)), mask=mask)),
                               keras_lstm(keras_embedding(ids).numpy(), mask=mask),
                               rtol=1e-5, atol=1e-6)
    x = np.repeat(normal((4, 7, 3), 2), 2, axis=-1)
    x[0, 4:] = 0
    x[2, :3] = 0
    np.testing.assert_allclose(npy(lstm(L.Masking()(x))), keras_lstm(K.Masking()(x)),
                               rtol=1e-5, atol=1e-6)


def test_masks_that_would_be_dropped_are_refused():
    with pytest.raises(NotImplementedError, match="GlobalAveragePooling1D.*receives a timestep"):
        gk.Sequential([gk.Input((7,), dtype="int32"), L.Embedding(30, 6, mask_zero=True),
                       L.GlobalAveragePooling1D()])
    model = gk.Sequential([gk.Input((7,), dtype="int32"), L.Embedding(30, 6, mask_zero=True),
                           L.LSTM(2, return_sequences=True)])
    assert model.predict(padded_ids(), verbose=0).shape == (16, 7, 2)  # predict needs no loss
    model.compile(loss="mse")
    with pytest.raises(NotImplementedError, match="Keras would mask the loss"):
        model.fit(padded_ids(), np.zeros((16, 7, 2), np.float32), verbose=0)


def test_layers_without_masking_in_keras_drop_the_mask_with_keras_warning():
    def model(lib, layers):
        return lib.Sequential([lib.Input((7,), dtype="int32"),
                               layers.Embedding(30, 6, mask_zero=True, name="embedding"),
                               layers.Flatten(name="flatten"), layers.Dense(2)])

    for lib, layers in ((keras, K), (gk, L)):
        with pytest.warns(UserWarning, match="Layer 'flatten' .* does not support masking"):
            built = model(lib, layers)
            built(padded_ids()[:2])
        built.compile(loss="mse")  # no mask reaches the output: the loss is not refused
        built.fit(padded_ids(), np.zeros((16, 2), np.float32), epochs=1, verbose=0)
