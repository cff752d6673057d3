"""The device check's profile stage (.ci/device_check profile): the course CNN's `fit` on GPU:0
with gpuaccel's profiler on steps 20-30, read back by `gpuaccel.profiler.analyze`, so one device
call shows where a step's time goes (device compute, copies, host work, idle) and whether the
device timeline was recorded at all. Fails when the profile holds no device events (a CPU run or
a broken device timeline would otherwise print a plausible table).

    python .ci/device_profile_fit.py LOG_DIR
"""
import sys

import numpy as np

import gpuaccel as ga
from gpuaccel import keras


def main(log_dir):
    L = keras.layers
    rng = np.random.default_rng(0)
    x = rng.random((64 * 100, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, len(x)).astype(np.int64)
    with ga.device("/GPU:0"):
        model = keras.Sequential([
            keras.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(64, 3, activation="relu"), L.Flatten(), L.Dense(64, activation="relu"),
            L.Dense(10)])
        model.compile(optimizer="adam", metrics=["accuracy"],
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        model.fit(x, y, batch_size=64, epochs=2, verbose=2,
                  callbacks=[keras.callbacks.TensorBoard(log_dir, profile_batch=(20, 30))])
    report = ga.profiler.analyze(log_dir)
    if not report.gpu_run:
        print("FAIL: the profile holds no device kernel or copy (no device timeline)")
        return 1
    print(f"profile: {len(report.steps)} steps, device utilization {report.device_utilization}, "
          f"bottleneck {report.bottleneck}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
