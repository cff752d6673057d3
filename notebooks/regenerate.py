"""Re-executes the course notebooks on this machine and writes their outputs into the files.

    python notebooks/regenerate.py                 # every notebook in this folder
    python notebooks/regenerate.py 02_tensores.ipynb
    python notebooks/regenerate.py docs/grading/ejemplo_tarea171.ipynb   # any other notebook

Each notebook runs top to bottom in a fresh Jupyter kernel (gpuaccel.testing.notebook), in a
temporary folder so the logs and checkpoints it writes stay out of the repository; cells tagged
``skip-execution`` (the Colab install cell, ``%tensorboard``) are left as they are. A notebook
that raises or runs past its time budget is left untouched and the script exits non-zero;
the others are replaced atomically. gpuaccel must be importable (installed, or
``PYTHONPATH=build/dev/stage``) with the optional packages ``pip install gpuaccel[notebooks]``.
Commit the result: the repository shows what a CPU run prints.
"""
import argparse
import pathlib
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*",
                        help="notebook file names in this folder, or paths (default: all here)")
    args = parser.parse_args(argv)

    from gpuaccel.testing.notebook import execute_notebook, time_budget_seconds, write_notebook

    paths = [HERE / n if (HERE / n).is_file() else pathlib.Path(n) for n in args.names] \
        or sorted(HERE.glob("*.ipynb"))
    failed = []
    for path in paths:
        if not path.is_file():
            print(f"{path}: no such notebook", file=sys.stderr)
            failed.append(path.name)
            continue
        with tempfile.TemporaryDirectory(prefix="gpuaccel-notebook-") as workdir:
            try:
                result = execute_notebook(path, workdir)
            except Exception as e:  # noqa: BLE001 -- reported per notebook, the rest go on
                print(f"{path.name}: FAILED, file left as it was\n{e}", file=sys.stderr)
                failed.append(path.name)
                continue
        write_notebook(result.notebook, path)
        budget = time_budget_seconds(result.notebook)
        print(f"{path.name}: {result.seconds:.1f} s (budget {budget:.0f} s)")
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
