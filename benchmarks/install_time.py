"""How long a student waits for gpuaccel: `pip install` of the release wheel into a fresh virtual
environment against `pip install` of the source tree into another (what the notebooks' install
cell did before WHEEL_SOURCE, and still does without it), on this machine. Prints both, their
ratio and the wheel's size (docs/colab.md records a run).

    python benchmarks/install_time.py --wheel build/release-wheels/gpuaccel-*-cp311-*.whl
    python benchmarks/install_time.py --wheel ... --source .   # also time the source build

The source build is what notebooks/install_colab.sh runs on a T4: pip's isolated build (its
build requirements from PyPI), the CUDA backend for one architecture (--cuda-archs, default 75)
when nvcc is present, in a new build folder and with ccache disabled (Colab has none), so nothing
is reused. Both installs take their dependencies from PyPI through pip's cache, as a second
Colab session would not: the network time on Colab adds to both alike. Wall-clock seconds: on a
shared machine, say its load next to the numbers (printed here).
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time


def run_timed(command, env=None):
    start = time.monotonic()
    subprocess.run(command, check=True, env=env)
    return time.monotonic() - start


def fresh_venv(folder, python):
    subprocess.run([python, "-m", "venv", str(folder)], check=True)
    return str(folder / "bin" / "python")


def self_check(venv_python):
    """The installed package imports and runs a matmul from outside any source tree."""
    subprocess.run([venv_python, "-c", "import gpuaccel as g; "
                    "a = g.ones([64, 64]); assert float((a @ a).numpy()[0, 0]) == 64.0"],
                   check=True, cwd=tempfile.gettempdir())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wheel", required=True, help="the release wheel to install")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter of the wheel's tag (default: this one)")
    parser.add_argument("--source", help="a source tree to time `pip install` of as well")
    parser.add_argument("--cuda-archs", default="75", help="the source build's CUDA architectures")
    args = parser.parse_args()
    wheel = pathlib.Path(args.wheel).resolve()
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} "
          f"(1 min) at the start")
    with tempfile.TemporaryDirectory(prefix="gpuaccel-install-") as tmp:
        tmp = pathlib.Path(tmp)
        venv_python = fresh_venv(tmp / "wheel-venv", args.python)
        wheel_seconds = run_timed([venv_python, "-m", "pip", "install", "-q",
                                   "--disable-pip-version-check", "--only-binary=:all:", str(wheel)])
        self_check(venv_python)
        print(f"wheel:  {wheel_seconds:7.1f} s  pip install {wheel.name} "
              f"({wheel.stat().st_size / 2**20:.1f} MiB), fresh venv, no compiler used")
        if args.source:
            venv_python = fresh_venv(tmp / "source-venv", args.python)
            env = dict(os.environ, CCACHE_DISABLE="1")
            for launcher in ("C", "CXX", "CUDA"):
                env.pop(f"CMAKE_{launcher}_COMPILER_LAUNCHER", None)
            source_seconds = run_timed(
                [venv_python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                 str(pathlib.Path(args.source).resolve()),
                 "-C", f"build-dir={tmp / 'build'}",
                 "-C", f"cmake.define.GPUACCEL_CUDA_ARCHITECTURES={args.cuda_archs}"], env=env)
            self_check(venv_python)
            print(f"source: {source_seconds:7.1f} s  pip install {args.source} (compiles the core"
                  f"{' and the CUDA backend for sm_' + args.cuda_archs if shutil.which('nvcc') or os.path.exists('/usr/local/cuda/bin/nvcc') else ''}), fresh venv")
            print(f"the wheel installs {source_seconds / wheel_seconds:.0f}x faster")
        print(f"load average {os.getloadavg()[0]:.1f} (1 min) at the end")


if __name__ == "__main__":
    main()
