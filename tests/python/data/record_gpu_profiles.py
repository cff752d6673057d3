"""Re-records the GPU profiles next to this file (run on a machine with an NVIDIA GPU).

    python tests/python/data/record_gpu_profiles.py [OUT_DIR]

The course CNN (batch 64, Adam, 12 batches of random inputs) is trained on the GPU under
``keras.callbacks.TensorBoard(profile_batch=(3, 8))`` twice: from NumPy arrays
(``h100_course_cnn_arrays.xplane.pb``) and from a Dataset whose ``map`` sleeps 10 ms per batch
(``h100_course_cnn_slow_input.xplane.pb``). test_profiler_recorded_gpu.py reads them on
machines without a GPU. The checked-in files were recorded on an NVIDIA H100 on 2026-11-23.
"""
import glob
import os
import shutil
import sys
import tempfile
import time

import numpy as np

import gpuaccel
from gpuaccel import keras
from gpuaccel.demo import course_cnn


def slow(images, labels):
    time.sleep(0.01)  # a slow input pipeline: 10 ms per batch
    return images, labels


def main(out_dir):
    if not gpuaccel.config.list_physical_devices("GPU"):
        raise SystemExit("no GPU: these profiles must be recorded on a GPU machine")
    model_name = gpuaccel.cuda.get_device_name(0).split()[1].lower()  # e.g. "h100"
    rng = np.random.default_rng(0)
    x = rng.random((64 * 12, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, 64 * 12)
    inputs = {"arrays": None,
              "slow_input": gpuaccel.data.Dataset.from_tensor_slices((x, y)).batch(64).map(slow)}
    for name, dataset in inputs.items():
        model = course_cnn()
        model.compile(optimizer="adam", metrics=["accuracy"],
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        log_dir = tempfile.mkdtemp(prefix=f"profile_{name}_")
        tb = keras.callbacks.TensorBoard(log_dir, profile_batch=(3, 8))
        if dataset is None:
            model.fit(x, y, batch_size=64, epochs=1, verbose=0, callbacks=[tb])
        else:
            model.fit(dataset, epochs=1, verbose=0, callbacks=[tb])
        (xplane,) = glob.glob(os.path.join(log_dir, "train", "plugins", "profile", "*",
                                           "*.xplane.pb"))
        target = os.path.join(out_dir, f"{model_name}_course_cnn_{name}.xplane.pb")
        shutil.copy(xplane, target)
        print(f"{target}: bottleneck {tb.report.bottleneck}, device utilization "
              f"{tb.report.device_utilization:.0%}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
