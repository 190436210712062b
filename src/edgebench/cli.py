"""The `edgebench` command: studies compared across machines and commits, and their history."""

from __future__ import annotations

import argparse
import sys

from edgebench.crossstudy.load import NotAStudy


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="edgebench", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    compare = sub.add_parser("compare", help="put two or more results folders side by side")
    compare.add_argument("studies", nargs="+", help="results folders; the first is the reference")
    compare.add_argument("--out", default="results/compare", help="folder for the table, page and chart")
    history = sub.add_parser("history", help="change points per arm and metric in a history store")
    history.add_argument("--store", required=True, help="the history store (a folder of parquet files)")
    history.add_argument("--machine", default=None, help="machine digest (default: this host's own)")
    history.add_argument("--out", default="results/history", help="folder for the table, page and chart")
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        if args.command == "compare":
            from edgebench.crossstudy.run import compare_studies

            written = compare_studies(args.studies, args.out)
        else:
            from edgebench.history.run import history_report

            written = history_report(args.store, args.machine, args.out)
    except NotAStudy as error:
        print(f"edgebench {args.command}: {error}", file=sys.stderr)
        return 2
    print(written["page"].read_text())
    print("written: " + ", ".join(str(p) for p in written.values()), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
