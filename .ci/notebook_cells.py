"""Runs a notebook's code cells in order in this interpreter, without Jupyter (the device machine
has none): each cell's source is executed in one shared namespace, cells tagged
``skip-execution`` (the install cell) are left out, and a cell that raises stops the run with
its traceback and a non-zero exit. Prints a header before each cell so the log reads like the
notebook.

    python .ci/notebook_cells.py notebooks/00_colab_gpu.ipynb
"""
import json
import sys
import traceback


def main(argv):
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        notebook = json.load(f)
    namespace = {"__name__": "__main__"}
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code" or "skip-execution" in cell.get("metadata", {}).get("tags", []):
            continue
        source = "".join(cell["source"])
        print(f"---- cell {index}", flush=True)
        try:
            exec(compile(source, f"{argv[0]}#cell{index}", "exec"), namespace)
        except Exception:  # noqa: BLE001 -- reported with its traceback, then the run stops
            traceback.print_exc()
            print(f"FAILED at cell {index}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
