"""What the f8e4m3 kernel checks share: the e4m3 NumPy type and their
command line (the flashc binary, the kernel file, the scratch directory, and
for the single-kernel checks the target and arch)."""
import argparse

import ml_dtypes

E4M3 = ml_dtypes.float8_e4m3fn


def parser(run_options=False):
    ap = argparse.ArgumentParser()
    ap.add_argument("--flashc", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--workdir", required=True)
    if run_options:
        ap.add_argument("--target", default="interp")
        ap.add_argument("--arch", default=None)
    return ap
