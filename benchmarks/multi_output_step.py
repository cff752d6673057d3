"""Microseconds per fit step of a model with two outputs (keras/_multi_output.py, which steps
in Python around the C++ graph), with the loss trackers' sums kept on the device until the logs
are read (as shipped: DeviceMeans) against the same step reading them on the host every batch
(as before: each tracker's sum read per step, emulated by flushing on every add).

    PYTHONPATH=build/<dir>/stage python benchmarks/multi_output_step.py [--steps 300] [--repeats 5]

One process, one model: the two variants alternate --repeats times over the same data (fit
with verbose=0 and no callbacks, so nothing else reads the logs per batch) and the fastest of
each is kept. On the CPU a host read is a copy with no device to wait for, so the difference is
the reads' own cost; on a GPU each read also waits for the step's kernels. Prints the CPU's
instruction sets and the load average, since a shared machine moves these numbers."""
import argparse
import time

import numpy as np

from _bench_context import cpu_line, load_line


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from gpuaccel import keras
    from gpuaccel.keras._multi_output import DeviceMeans

    class ReadEachStep(DeviceMeans):
        def add(self, tracker, value, rows):
            super().add(tracker, value, rows)
            self.flush()

    print(cpu_line())
    print(f"before: {load_line()}")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64 * args.steps, 32)).astype(np.float32)
    ya = rng.integers(0, 4, len(x))
    yb = rng.normal(size=(len(x), 1)).astype(np.float32)
    inputs = keras.Input((32,))
    hidden = keras.layers.Dense(32, activation="relu")(inputs)
    model = keras.Model(inputs, [keras.layers.Dense(4, activation="softmax", name="a")(hidden),
                                 keras.layers.Dense(1, name="b")(hidden)])
    model.compile(keras.optimizers.SGD(0.01), loss=["sparse_categorical_crossentropy", "mse"])
    model.fit(x[:640], [ya[:640], yb[:640]], batch_size=64, verbose=0)  # warm up
    trainer = model._trainer_for("fit")
    times = {"device sums (as shipped)": [], "host read per step (before)": []}
    for _ in range(args.repeats):
        for name, means in (("device sums (as shipped)", DeviceMeans()),
                            ("host read per step (before)", ReadEachStep())):
            trainer.means = means
            start = time.perf_counter()
            model.fit(x, [ya, yb], batch_size=64, epochs=1, shuffle=False, verbose=0)
            times[name].append((time.perf_counter() - start) / args.steps)
    print(f"Two outputs (Dense 32 -> 32 -> [4 softmax, 1]), batch 64, SGD, best of "
          f"{args.repeats} x {args.steps} steps:")
    for name, values in times.items():
        print(f"  {name:28s} {1e6 * min(values):8.1f} us/step")
    print(f"after: {load_line()}")


if __name__ == "__main__":
    main()
