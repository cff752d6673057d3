"""``python -m gpuaccel.demo``: the first thing to run after installing.

Prints the device report (versions, CPU features, GPUs or why there are none) and runs a small
float32 matmul on every logical device, checked against a float64 reference. With
``--train-cnn [EPOCHS]`` it then trains the course's CNN on Fashion-MNIST on the best available
device and prints the time per epoch and the test accuracy (the end of set-up command 1).
Exits non-zero when a result is wrong, so set-up scripts can rely on it.
"""
import argparse
import sys
import time

from . import _C, config, info
from ._placement import device


def run_matmul_on_every_device(n=256):
    """Returns one result dict per logical device (see ``_C.matmul_self_check``)."""
    results = []
    for logical in config.list_logical_devices():
        with device(logical.name):
            _C.matmul_self_check(n)  # warm-up: the first call pays library set-up (JIT, handles)
            results.append(_C.matmul_self_check(n))
    return results


def course_cnn(keras=None):
    """The course's Fashion-MNIST CNN (93,322 parameters), built with ``keras`` (gpuaccel.keras
    by default; tests pass the real Keras to build its twin)."""
    if keras is None:
        from . import keras
    L = keras.layers
    return keras.Sequential([
        L.Conv2D(32, (3, 3), activation="relu", input_shape=(28, 28, 1)),
        L.MaxPooling2D((2, 2)),
        L.Conv2D(64, (3, 3), activation="relu"),
        L.MaxPooling2D((2, 2)),
        L.Conv2D(64, (3, 3), activation="relu"),
        L.Flatten(),
        L.Dense(64, activation="relu"),
        L.Dense(10),
    ])


def train_seed_cnn(epochs=5, batch_size=64):
    """The course's program: Conv2D/MaxPooling CNN, Adam, 5 epochs, batch 64, validation on
    the test set. Returns (seconds per epoch list, test accuracy)."""
    from . import keras

    class EpochTimer(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            self.start = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            self.seconds.append(time.perf_counter() - self.start)

    (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
    x_train, x_test = x_train[..., None] / 255.0, x_test[..., None] / 255.0
    model = course_cnn(keras)
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    timer = EpochTimer()
    timer.seconds = []
    model.fit(x_train, y_train, epochs=epochs, batch_size=batch_size, verbose=2,
              validation_data=(x_test, y_test), callbacks=[timer])
    _, accuracy = model.evaluate(x_test, y_test, verbose=0)
    return timer.seconds, accuracy


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gpuaccel.demo")
    parser.add_argument("--train-cnn", nargs="?", type=int, const=5, default=0, metavar="EPOCHS",
                        help="also train the course CNN on Fashion-MNIST (default 5 epochs)")
    args = parser.parse_args(argv)
    print(info.report())
    print()
    print("Matmul self-check (float32, 256 x 256, against a float64 reference):")
    failed = False
    for r in run_matmul_on_every_device():
        ok = r["max_abs_error"] <= r["tolerance"]
        failed |= not ok
        print(f"  {r['device']:<46} {r['gflops']:8.2f} GFLOP/s   max |error| "
              f"{r['max_abs_error']:.2e}   {'OK' if ok else 'WRONG'}")
    if failed:
        return 1
    if args.train_cnn:
        # Ops run on GPU:0 when there is one, else on the CPU (TensorFlow's placement rule).
        device_name = (config.list_logical_devices("GPU") or config.list_logical_devices("CPU"))[0].name
        print()
        print(f"Training the course CNN on Fashion-MNIST ({args.train_cnn} epochs, batch 64, "
              f"Adam) on {device_name}:")
        seconds, accuracy = train_seed_cnn(args.train_cnn)
        print(f"Time per epoch: {', '.join(f'{s:.1f} s' for s in seconds)} "
              f"(mean {sum(seconds) / len(seconds):.1f} s)")
        print(f"Test accuracy: {accuracy:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
