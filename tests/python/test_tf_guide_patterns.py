"""Patterns from TensorFlow's basic guides that gpuaccel's TF face must accept as TF does:
gradients into a dict of variables (the structure of ``sources`` comes back), a Keras layer's
``trainable_variables`` fed to the tape, ``tf.constant``'s ``shape``/``name`` arguments, a
``tf.function`` whose Python branch returns a plain number, and ``tf.keras.losses.Reduction``.
Each is checked against TensorFlow itself on the same values."""
import numpy as np
import pytest

import gpuaccel as ga

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(7)
W0 = RNG.normal(size=(3, 2)).astype(np.float32)
B0 = RNG.normal(size=(2,)).astype(np.float32)
X0 = RNG.normal(size=(4, 3)).astype(np.float32)


def _loss_and_grads(api, sources_of):
    w, b = api.Variable(W0), api.Variable(B0)
    with api.GradientTape() as tape:
        y = api.matmul(api.constant(X0), w) + b
        loss = api.reduce_mean(y * y)
    return tape.gradient(loss, sources_of(w, b))


def test_gradient_returns_the_structure_of_its_sources():
    ours = _loss_and_grads(ga, lambda w, b: {"weights": w, "bias": b})
    theirs = _loss_and_grads(tf, lambda w, b: {"weights": w, "bias": b})
    assert isinstance(ours, dict) and sorted(ours) == ["bias", "weights"]
    for key in theirs:
        np.testing.assert_allclose(ours[key].numpy(), theirs[key].numpy(), rtol=1e-5, atol=1e-6)
    nested = _loss_and_grads(ga, lambda w, b: (w, [b]))
    assert isinstance(nested, tuple) and isinstance(nested[1], list)
    np.testing.assert_allclose(nested[1][0].numpy(), theirs["bias"].numpy(), rtol=1e-5, atol=1e-6)
    single = _loss_and_grads(ga, lambda w, b: w)
    np.testing.assert_allclose(single.numpy(), theirs["weights"].numpy(), rtol=1e-5, atol=1e-6)


def test_gradient_names_a_source_that_is_not_a_tensor():
    w = ga.Variable(W0)
    with ga.GradientTape() as tape:
        loss = ga.reduce_sum(w * w)
    with pytest.raises(TypeError, match="sources must be tensors.*str 'w'"):
        tape.gradient(loss, {"w": "w"})


def test_layer_trainable_variables_feed_the_tape():
    ours_layer, theirs_layer = ga.keras.layers.Dense(2), tf.keras.layers.Dense(2)
    ours_layer.build((None, 3))
    theirs_layer.build((None, 3))
    ours_layer.set_weights([W0, B0])
    theirs_layer.set_weights([W0, B0])
    grads = []
    for api, layer in ((ga, ours_layer), (tf, theirs_layer)):
        with api.GradientTape() as tape:
            loss = api.reduce_mean(layer(api.constant(X0)) ** 2)
        grads.append(tape.gradient(loss, layer.trainable_variables))
        assert layer.non_trainable_variables == []
    assert len(grads[0]) == len(grads[1]) == 2
    for mine, want in zip(*grads):
        np.testing.assert_allclose(mine.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    ours_layer.trainable = False
    assert ours_layer.trainable_variables == []
    assert len(ours_layer.non_trainable_variables) == 2


@pytest.mark.parametrize("value, shape", [(3.0, (2, 3)), ([1.0, 2.0, 3.0, 4.0], [2, 2]),
                                          ([[5.0]], (1,))])
def test_constant_fills_or_reshapes_to_shape(value, shape):
    ours, theirs = ga.constant(value, shape=shape, name="c"), tf.constant(value, shape=shape,
                                                                          name="c")
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_constant_positional_dtype_and_bad_shape():
    np.testing.assert_array_equal(ga.constant([1, 2], ga.float32).numpy(),
                                  tf.constant([1, 2], tf.float32).numpy())
    for api in (ga, tf):
        with pytest.raises(TypeError, match="has 3 elements, but got `shape` \\(2, 2\\)"):
            api.constant([1.0, 2.0, 3.0], shape=(2, 2))


def test_function_turns_a_returned_number_into_a_tensor():
    def relu_or_zero(x):
        if x.numpy() > 0:
            return x
        return 0

    ours = ga.function(relu_or_zero)
    assert isinstance(ours(ga.constant(-2.0)), ga.Tensor)
    assert ours(ga.constant(-2.0)).numpy() == 0
    assert ours(ga.constant(2.0)).numpy() == 2.0
    pair = ga.function(lambda: {"n": 1.5, "none": None})()
    assert isinstance(pair["n"], ga.Tensor) and pair["none"] is None


def test_legacy_loss_reduction_names():
    for name in ("AUTO", "NONE", "SUM", "SUM_OVER_BATCH_SIZE"):
        assert getattr(ga.keras.losses.Reduction, name) == getattr(tf.keras.losses.Reduction, name)
    assert ga.keras.losses.Reduction.all() == tf.keras.losses.Reduction.all()
    with pytest.raises(ValueError, match="Invalid Reduction Key: bad"):
        ga.keras.losses.Reduction.validate("bad")
    labels, logits = np.array([0, 2]), RNG.normal(size=(2, 3)).astype(np.float32)
    ours = ga.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=ga.keras.losses.Reduction.NONE)(labels, logits)
    theirs = tf.keras.losses.SparseCategoricalCrossentropy(
        from_logits=True, reduction=tf.keras.losses.Reduction.NONE)(labels, logits)
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_version_constant():
    assert ga.version.VERSION == ga.__version__


def _counting(stop):
    yield from range(stop)


def _growing_rows():
    for i in range(3):
        yield i, np.arange(i + 1, dtype=np.float32)


@pytest.mark.parametrize("make", [
    lambda api: api.data.Dataset.from_generator(_counting, args=[4], output_types=api.int32,
                                                output_shapes=()),
    lambda api: api.data.Dataset.from_generator(_growing_rows,
                                                output_types=(api.int32, api.float32),
                                                output_shapes=((), (None,))),
])
def test_generator_shapes_nest_only_down_to_the_types(make):
    ours, theirs = make(ga), make(tf)
    flat, want = ga.nest.flatten(ours.element_spec), tf.nest.flatten(theirs.element_spec)
    assert [tuple(s.shape) for s in flat] == [tuple(s.shape) for s in want]
    assert [s.dtype.name for s in flat] == [s.dtype.name for s in want]
    for mine, wanted in zip(ours.padded_batch(3), theirs.padded_batch(3)):
        mine, wanted = ga.nest.flatten(mine), tf.nest.flatten(wanted)
        assert len(mine) == len(wanted)
        for part, want in zip(mine, wanted):
            np.testing.assert_array_equal(part.numpy(), want.numpy())


def test_generator_shapes_that_do_not_match_the_types():
    with pytest.raises(ValueError, match="does not match the structure of `output_types`"):
        ga.data.Dataset.from_generator(_growing_rows, output_types=(ga.int32, ga.float32),
                                       output_shapes=((),)).element_spec


def test_integer_scalar_tensors_stand_for_python_ints():
    class_names = ["cat", "dog", "owl"]
    labels_ours, labels_tf = ga.constant(np.array([2, 0], np.int32)), tf.constant([2, 0])
    assert class_names[labels_ours[0]] == class_names[labels_tf[0]] == "owl"
    assert list(range(ga.constant(3))) == list(range(tf.constant(3)))
    logits = RNG.normal(size=(2, 3)).astype(np.float32)
    ours, theirs = ga.constant(logits), tf.constant(logits)
    for pick in (ga.argmax(ours[1]).numpy(), np.int64(1), labels_ours[1]):
        want = theirs[1, int(pick)].numpy()
        np.testing.assert_array_equal(ours[1, pick].numpy(), want)
    with pytest.raises(TypeError, match="only integer tensors of a single element.*float32"):
        class_names[ga.constant(1.0)]
    with pytest.raises(TypeError, match="only integer tensors of a single element.*\\(2,\\)"):
        class_names[labels_ours]


def test_numpy_reductions_of_a_tensor():
    values = RNG.normal(size=(3, 4)).astype(np.float32)
    ours, theirs = ga.constant(values), tf.constant(values)
    assert float(np.min(ours)) == float(np.min(theirs)) == values.min()
    assert float(np.max(ours)) == float(np.max(theirs)) == values.max()
    with pytest.raises(TypeError, match="out="):
        ours.min(out=np.empty(()))


def test_keras2_shape_spellings_in_sequential_lists():
    theirs = tf.keras.Sequential([tf.keras.layers.InputLayer(input_shape=(6, 6, 1)),
                                  tf.keras.layers.Conv2D(2, 3), tf.keras.layers.Flatten()])
    ours = ga.keras.Sequential([ga.keras.layers.InputLayer(input_shape=(6, 6, 1)),
                                ga.keras.layers.Conv2D(2, 3), ga.keras.layers.Flatten()])
    assert ours.output_shape == theirs.output_shape == (None, 32)
    listed = ga.keras.Sequential([ga.keras.layers.Conv2D(2, 3, input_shape=[6, 6, 1])])
    assert listed.output_shape == (None, 4, 4, 2)
    batch = ga.keras.layers.InputLayer(batch_input_shape=(5, 3))
    assert tuple(batch.shape) == tuple(tf.keras.layers.InputLayer(batch_input_shape=(5, 3))
                                        .batch_shape)


def _reduced_tape_loss(api):
    strategy = api.distribute.MirroredStrategy()
    w = api.Variable(W0)

    def step(x):
        with api.GradientTape() as tape:
            loss = api.reduce_sum(api.matmul(x, w) ** 2)
        tape.gradient(loss, w)
        return loss  # still recorded by the tape: reduce must read it anyway

    per_replica = strategy.run(step, args=(api.constant(X0),))
    return strategy.reduce(api.distribute.ReduceOp.SUM, per_replica, axis=None)


def test_strategy_reduces_a_loss_the_tape_recorded():
    ours = _reduced_tape_loss(ga)
    assert not ours.requires_grad
    np.testing.assert_allclose(ours.numpy(), _reduced_tape_loss(tf).numpy(), rtol=1e-5)


def _unbuilt_classifier(api):
    return api.keras.Sequential([api.keras.layers.Rescaling(1.0 / 255),
                                 api.keras.layers.Flatten(), api.keras.layers.Dense(3)])


def test_unbuilt_sequential_builds_from_a_dataset_it_fits():
    images = RNG.integers(0, 255, (12, 4, 4, 3)).astype(np.float32)
    labels = np.arange(12) % 3
    models = {}
    for api in (ga, tf):
        model = _unbuilt_classifier(api)
        model.compile(optimizer=api.keras.optimizers.SGD(0.0),
                      loss=api.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(api.data.Dataset.from_tensor_slices((images, labels)).batch(5), epochs=1,
                  verbose=0)
        models[api] = model
    assert models[ga].output_shape == models[tf].output_shape == (None, 3)
    models[tf].set_weights(models[ga].get_weights())
    np.testing.assert_allclose(models[ga].predict(images, verbose=0),
                               models[tf].predict(images, verbose=0), rtol=1e-5, atol=1e-6)


def _module_classes(api):
    class Scale(api.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.gain = api.Variable(1.5, name="gain")
            self.count = api.Variable(0, name="count")  # int: trainable for TF, no gradient
            self.frozen = api.Variable(0.25, trainable=False)

    class Quadratic(api.Module):
        def __init__(self):
            super().__init__()
            self.w = api.Variable(np.array([0.5, -1.0], np.float32), name="w")
            self.parts = [Scale(), {"extra": api.Module(name="extra")}]
            self.parts[1]["extra"].offset = api.Variable(0.1, name="offset")

        @api.function
        def __call__(self, x):
            scale = self.parts[0]
            return (self.w[0] * x ** 2 + self.w[1] * x) * scale.gain + self.parts[1]["extra"].offset

    return Quadratic


def _trained_module(api):
    model = _module_classes(api)()
    x = api.constant(np.linspace(-1, 1, 8).astype(np.float32))
    target = api.constant((np.linspace(-1, 1, 8) ** 2).astype(np.float32))
    for _ in range(3):
        with api.GradientTape() as tape:
            loss = api.reduce_mean((model(x) - target) ** 2)
        floats = [v for v in model.trainable_variables if v.dtype == api.float32]
        for variable, grad in zip(floats, tape.gradient(loss, floats)):
            variable.assign_sub(0.1 * grad)
    return model


def test_module_collects_variables_and_submodules_as_tf():
    ours, theirs = _trained_module(ga), _trained_module(tf)
    for attribute in ("variables", "trainable_variables", "non_trainable_variables"):
        assert ([v.name for v in getattr(ours, attribute)]
                == [v.name for v in getattr(theirs, attribute)])
        for mine, want in zip(getattr(ours, attribute), getattr(theirs, attribute)):
            np.testing.assert_allclose(mine.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    assert [m.name for m in ours.submodules] == [m.name for m in theirs.submodules]
    assert ours.name == theirs.name == "quadratic"
    with ours.name_scope as scope:
        assert scope == "quadratic/"
    for api in (ga, tf):
        with pytest.raises(ValueError, match="'bad name' is not a valid module name"):
            api.Module(name="bad name")


def test_integer_matmul_is_exact_in_its_dtype():
    left = RNG.integers(-50, 50, (2, 3, 4)).astype(np.int32)
    right = RNG.integers(-50, 50, (4, 5)).astype(np.int32)
    theirs = tf.matmul(tf.constant(left), tf.constant(np.broadcast_to(right, (2, 4, 5))))
    ours = ga.matmul(ga.constant(left), ga.constant(right))
    assert ours.dtype == ga.int32 and theirs.dtype == tf.int32
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal((ga.constant(left) @ ga.constant(right)).numpy(), theirs.numpy())
    big = np.array([[3_000_000_000]], np.int64)  # exact where float32 would round
    np.testing.assert_array_equal(ga.matmul(ga.constant(big), ga.constant(np.array([[3]]))).numpy(),
                                  big @ np.array([[3]]))
    vector = right[:, 0].copy()
    np.testing.assert_array_equal((ga.constant(left[0]) @ ga.constant(vector)).numpy(),
                                  left[0] @ vector)
    with pytest.raises(ga.errors.InvalidArgumentError, match="one dtype, got int32 and float32"):
        ga.matmul(ga.constant(left), ga.constant(right.astype(np.float32)))


def _rotation_pair(images):
    """Keras's rotation of ``images`` at angles it draws, and the same angles for ours."""
    options = dict(fill_mode="constant", interpolation="bilinear", seed=11)
    theirs = tf.keras.layers.RandomRotation(0.3, **options)
    drawn = theirs.get_random_transformation(tf.constant(images), training=True)
    ours = ga.keras.layers.RandomRotation(0.3, **options)
    return (lambda x: ours.transform_images(x, {"angle": drawn["angle"].numpy()}, training=True),
            lambda x: theirs.transform_images(x, drawn, training=True))


def test_rotation_of_a_full_image_batch_reads_pixels_by_gather():
    # 16 images of 256x256: a one-hot pixel lookup would need (16*256*256)^2 entries
    images = RNG.random((16, 256, 256, 1)).astype(np.float32)
    ours, theirs = _rotation_pair(images)
    np.testing.assert_allclose(ours(images).numpy(), theirs(tf.constant(images)).numpy(),
                               rtol=1e-4, atol=2e-3)


def test_rotation_still_passes_gradients_to_images_that_need_them():
    # rotation is linear in the pixels, so the gradient g of <rotate(x), w> is rotate's
    # adjoint applied to w, and <rotate(x), w> == <x, g> for every x
    images = RNG.random((2, 6, 6, 1)).astype(np.float32)
    weights = RNG.normal(size=(2, 6, 6, 1)).astype(np.float32)
    rotate = _rotation_pair(images)[0]
    source = ga.Variable(images)
    with ga.GradientTape() as tape:
        product = ga.reduce_sum(rotate(source) * ga.constant(weights))
    grad = tape.gradient(product, source).numpy()
    assert np.abs(grad).sum() > 0
    np.testing.assert_allclose(float(product.detach().numpy()), float((images * grad).sum()),
                               rtol=1e-5)


def test_a_recorded_loss_reads_with_numpy_inside_and_after_the_tape():
    """Every custom training loop prints ``loss.numpy()``: TF answers with the values whether the
    tape is still open or not (PyTorch would ask for .detach(); the faces share the tensor)."""
    answers = []
    for lib in (tf, ga):
        w = lib.Variable([[0.5, -1.0], [2.0, 0.25]])
        x = lib.constant([[1.0, 2.0]])
        with lib.GradientTape() as tape:
            y = lib.matmul(x, w)
            inside = y.numpy()
            loss = lib.reduce_sum(y * y)
        grad = tape.gradient(loss, w)
        answers.append((inside, loss.numpy(), float(loss), grad.numpy()))
    for want, got in zip(*answers):
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert isinstance(answers[1][1], np.ndarray) and answers[1][1].shape == ()


def test_optimizer_iterations_read_with_numpy_as_keras():
    """TF's custom training walkthrough logs ``optimizer.iterations.numpy()``."""
    import keras
    counts = []
    for lib, opt in ((tf, keras.optimizers.SGD(0.1)), (ga, ga.keras.optimizers.SGD(0.1))):
        w = lib.Variable([1.0, 2.0])
        for _ in range(3):
            with lib.GradientTape() as tape:
                loss = lib.reduce_sum(w * w)
            opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        counts.append((opt.iterations.numpy(), int(opt.iterations)))
    (want_numpy, want_int), (got_numpy, got_int) = counts
    assert got_numpy == want_numpy == 3 and got_int == want_int == 3
    assert type(got_numpy) is type(want_numpy) is np.int64
