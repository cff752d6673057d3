"""What the CPU benchmarks print beside their times so a number is never read without its
context: the CPU's instruction sets, the load average, and the raw oneDNN convolution floor of
the step being timed (the same convolutions run by oneDNN directly, weights kept in its blocked
layout: `onednn_ops_bench --cnn-floor`, built with the tests), measured in the same invocation.

Also runs a benchmark's workload in a fresh Python process (`run_workload`) and holds the
source of what every course-CNN workload defines (`COURSE_WORKLOAD`: the Fashion-MNIST loader and
the course CNN, compiled as the course compiles it). Shared by the CPU benchmarks; not a
benchmark itself."""
import json
import os
import re
import subprocess
import textwrap
from pathlib import Path

# Source text pasted at the top of a workload script (it runs in a fresh interpreter, so it
# cannot import this module's functions): needs `gzip`, `os` and `numpy as np` imported.
COURSE_WORKLOAD = textwrap.dedent("""
    def fashion_mnist():
        roots = [os.environ.get("GPUACCEL_DATA", ""), "/usr/share/datasets/fashion-mnist",
                 os.path.expanduser("~/.keras/datasets/fashion-mnist")]
        def read(name, offset):
            for root in roots:
                for folder, _, files in os.walk(root) if root and os.path.isdir(root) else []:
                    if name in files:
                        with gzip.open(os.path.join(folder, name)) as f:
                            return np.frombuffer(f.read(), np.uint8, offset=offset)
            raise FileNotFoundError(name + " (apt install dataset-fashion-mnist)")
        x = read("train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28, 1) / 255.0
        y = read("train-labels-idx1-ubyte.gz", 8)
        return x.astype(np.float32), y.astype(np.int64)
    def course_cnn(keras):
        # The course CNN, compiled as the course compiles it; `keras` is gpuaccel's or Keras's.
        L = keras.layers
        model = keras.Sequential([keras.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"),
            L.MaxPooling2D(2), L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
            L.Conv2D(64, 3, activation="relu"), L.Flatten(), L.Dense(64, activation="relu"),
            L.Dense(10)])
        model.compile(optimizer="adam", metrics=["accuracy"],
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model
""")

_ISA_FLAGS = ("avx2", "avx512f", "avx512_bf16", "amx_tile", "amx_bf16")


def cpu_line():
    """'AMD EPYC ...: avx2, avx512f, avx512_bf16 (no amx_tile, amx_bf16)' from gpuaccel's cpuid."""
    import gpuaccel
    info = gpuaccel._C.cpu_info()
    flags = dict(info["flags"])
    have = [f for f in _ISA_FLAGS if flags.get(f)]
    lack = [f for f in _ISA_FLAGS if not flags.get(f)]
    model = info.get("model_name") or "unknown CPU"
    return f"{model}: {', '.join(have) or 'no AVX2'}" + (f" (no {', '.join(lack)})" if lack else "")


def load_line():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} CPUs"


def floor_binary(explicit=None):
    """The onednn_ops_bench binary: `explicit`, $ONEDNN_OPS_BENCH, or the one beside the build
    whose gpuaccel is imported (build/<dir>/stage -> build/<dir>/benchmarks); None if absent."""
    candidates = [explicit, os.environ.get("ONEDNN_OPS_BENCH")]
    try:
        import gpuaccel
        candidates.append(Path(gpuaccel.__file__).resolve().parents[2] / "benchmarks" /
                          "onednn_ops_bench")
    except ImportError:
        pass
    for c in candidates:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


def conv_floor_ms(binary, batch, dtype, filters=1, rounds=10, threads="2"):
    """Raw oneDNN ms for one step's convolutions of the (filters-times) course CNN; None with a
    reason string when it cannot be measured."""
    if binary is None:
        return None, ("onednn_ops_bench not found (build the tests, or pass --floor-bin / set "
                      "ONEDNN_OPS_BENCH)")
    env = dict(os.environ, OMP_NUM_THREADS=threads)
    proc = subprocess.run([binary, "--cnn-floor", str(batch), dtype, str(filters), str(rounds)],
                          capture_output=True, text=True, env=env)
    match = re.search(r"CNN_FLOOR_MS raw=([0-9.]+)", proc.stdout)
    if proc.returncode != 0 or match is None:
        return None, f"onednn_ops_bench exit {proc.returncode}: {(proc.stdout + proc.stderr)[-300:]}"
    return float(match.group(1)), None


def run_workload(command, env, cwd="/tmp"):
    """Runs `command` (a fresh Python process: thread counts and device settings are fixed at
    start-up) and returns the JSON object it printed on its 'RESULT ' line, or
    {'error': 'exit N: <the output's tail>'} when it printed none. Relative PYTHONPATH entries
    are made absolute first: the child runs in `cwd`, where `build/dev/stage` would not resolve
    and an installed gpuaccel would be measured instead."""
    env = dict(env)
    if env.get("PYTHONPATH"):
        env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) if p else p
                                            for p in env["PYTHONPATH"].split(os.pathsep))
    proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    tail = (proc.stdout + proc.stderr)[-1500:]
    return {"error": f"exit {proc.returncode}: {tail}"}
