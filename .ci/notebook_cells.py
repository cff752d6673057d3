"""Runs a notebook's code cells in order in this interpreter, without Jupyter (the device machine
has none): each cell's source is executed in one shared namespace, cells tagged
``skip-execution`` (the install cell) are left out, and a cell that raises stops the run with
its traceback and a non-zero exit. Prints a header before each cell so the log reads like the
notebook.

    python .ci/notebook_cells.py [--leave-out-containing TEXT] [--require-true NAME] NOTEBOOK

--leave-out-containing TEXT  also leave out the code cells whose source contains TEXT (the
    device check runs `pytest -m gpu` as its own stage, so the notebook's test cell need not run
    it again); it is an error when no cell contains TEXT, so a renamed cell cannot slip through.
--require-true NAME  after the last cell, fail unless the namespace's NAME is true (the Colab
    notebook's HAY_GPU: its cells take a no-GPU branch and pass when gpuaccel sees no GPU).
"""
import argparse
import json
import sys
import traceback


def main(argv):
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("notebook")
    parser.add_argument("--leave-out-containing", action="append", default=[], metavar="TEXT")
    parser.add_argument("--require-true", action="append", default=[], metavar="NAME")
    args = parser.parse_args(argv)
    with open(args.notebook, encoding="utf-8") as f:
        notebook = json.load(f)
    unmatched = set(args.leave_out_containing)
    namespace = {"__name__": "__main__"}
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] != "code" or "skip-execution" in cell.get("metadata", {}).get("tags", []):
            continue
        source = "".join(cell["source"])
        left_out_by = [text for text in args.leave_out_containing if text in source]
        if left_out_by:
            unmatched -= set(left_out_by)
            print(f"---- cell {index}: left out (contains {left_out_by[0]!r})", flush=True)
            continue
        print(f"---- cell {index}", flush=True)
        try:
            exec(compile(source, f"{args.notebook}#cell{index}", "exec"), namespace)
        except Exception:  # noqa: BLE001 -- reported with its traceback, then the run stops
            traceback.print_exc()
            print(f"FAILED at cell {index}", file=sys.stderr)
            return 1
    if unmatched:
        print(f"FAILED: no code cell contains {sorted(unmatched)} (--leave-out-containing)",
              file=sys.stderr)
        return 1
    for name in args.require_true:
        if not namespace.get(name):
            print(f"FAILED: after the last cell {name} is {namespace.get(name)!r}, not true",
                  file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
