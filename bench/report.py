#!/usr/bin/env python3
"""Re-renders a recorded benchmark CSV (from bench_attention.py) anywhere.

    python3 bench/report.py --from-csv bench/results/results.csv [--md OUT.md] [--png OUT.png]
    python3 bench/report.py --from-csv results.csv --update-perf docs/perf.md [--create-section]

Writes the Markdown table (TFLOP/s per implementation and configuration, the
flashc/SDPA-flash and fa2/fa1 time ratios, the causal speed-up) to --md or
stdout, and the PNG plot to --png (needs matplotlib). --update-perf replaces
the text between `<!-- BEGIN gpu-bench -->` and `<!-- END gpu-bench -->` in
the given file; a file without those markers is an error unless
--create-section, which appends a section holding them.

Metadata (device, versions, date) comes from the CSV's .meta.json next to it
(or --meta). Exit status: 0 success, 1 a bad input file, 2 bad usage.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description="Render a recorded flashc benchmark CSV.")
    ap.add_argument("--from-csv", required=True, metavar="FILE", help="results.csv to render")
    ap.add_argument("--meta", help="metadata JSON (default: FILE's .meta.json, if any)")
    ap.add_argument("--md", help="write the Markdown table here (default: stdout)")
    ap.add_argument("--png", help="write the plot here (needs matplotlib)")
    ap.add_argument("--title", default="flashc vs PyTorch SDPA")
    ap.add_argument("--update-perf", metavar="PERF_MD",
                    help="replace the gpu-bench section of this Markdown file")
    ap.add_argument("--create-section", action="store_true",
                    help="with --update-perf: append the marked section if missing")
    args = ap.parse_args(sys.argv[1:] if argv is None else argv)
    if not os.path.isfile(args.from_csv):
        ap.error(f"no such CSV: {args.from_csv}")
    if args.meta and not os.path.isfile(args.meta):
        ap.error(f"no such metadata file: {args.meta}")
    if args.create_section and not args.update_perf:
        ap.error("--create-section needs --update-perf")
    if args.update_perf and not os.path.isfile(args.update_perf):
        ap.error(f"no such file: {args.update_perf}")

    try:
        rows = benchlib.read_csv(args.from_csv)
    except (ValueError, KeyError) as e:
        print(f"report: error: {args.from_csv}: {e}", file=sys.stderr)
        return 1
    if not rows:
        print(f"report: error: {args.from_csv} has no rows", file=sys.stderr)
        return 1
    meta = benchlib.load_meta(args.from_csv, args.meta)
    table = benchlib.render_markdown(rows, title=args.title, meta=meta,
                                     source=os.path.basename(args.from_csv))
    if args.md:
        with open(args.md, "w") as f:
            f.write(table)
        print(f"wrote {args.md}")
    elif not args.update_perf:
        sys.stdout.write(table)

    if args.png:
        try:
            benchlib.write_plot(rows, args.png, fixture=bool(meta.get("fixture")))
        except ImportError:
            print("report: error: --png needs matplotlib (pip install matplotlib)",
                  file=sys.stderr)
            return 1
        print(f"wrote {args.png}")

    if args.update_perf:
        with open(args.update_perf) as f:
            text = f.read()
        try:
            text = benchlib.update_perf_text(text, table, create=args.create_section)
        except ValueError as e:
            print(f"report: error: {args.update_perf}: {e}", file=sys.stderr)
            return 1
        with open(args.update_perf, "w") as f:
            f.write(text)
        print(f"updated {args.update_perf}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
