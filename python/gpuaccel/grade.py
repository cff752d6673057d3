"""``python -m gpuaccel.grade notebook.ipynb``: run a student's homework notebook and print the
rubric, one pass/fail line per criterion (Spanish and English).

The notebook runs in a fresh Jupyter kernel, top to bottom, as "Restart and run all" would; the
homework it grades is class 171's (:mod:`gpuaccel.testing.homework171`). A saved report
(``.json``, from ``Report.save``) is graded without running anything. Exit status: 0 when every
criterion passed, 1 when one failed, 2 when the file cannot be graded at all.
"""
import argparse
import os
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m gpuaccel.grade",
        description="Grade a class 171 homework: a notebook (executed) or a saved report (.json).")
    parser.add_argument("submission", help="the student's notebook (.ipynb) or report (.json)")
    parser.add_argument("--workdir", default=None,
                        help="folder the notebook runs in (default: the notebook's folder)")
    parser.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                        help="wall-clock limit for the whole notebook (default: the notebook's "
                             "metadata.gpuaccel.time_budget_seconds, else 300)")
    args = parser.parse_args(argv)

    from .testing import homework171
    if not os.path.isfile(args.submission):
        print(f"gpuaccel.grade: {args.submission!r} does not exist", file=sys.stderr)
        return 2
    if args.timeout is not None and args.timeout <= 0:
        print(f"gpuaccel.grade: --timeout must be positive, got {args.timeout}", file=sys.stderr)
        return 2
    try:
        if args.submission.endswith(".ipynb"):
            rubric = homework171.grade_notebook(args.submission, workdir=args.workdir,
                                                budget_seconds=args.timeout)
        else:
            rubric = homework171.check(args.submission)
    except (ImportError, ValueError, OSError) as e:
        print(f"gpuaccel.grade: cannot grade {args.submission!r}: {e}", file=sys.stderr)
        return 2
    print(rubric)
    return 0 if rubric.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
