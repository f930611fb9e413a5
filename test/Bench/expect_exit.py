"""expect_exit.py CODE -- CMD...: runs CMD, prints its stdout and stderr, and
fails unless it exits with CODE (lit's `not` only tells zero from non-zero)."""
import subprocess
import sys

code = int(sys.argv[1])
assert sys.argv[2] == "--", "usage: expect_exit.py CODE -- CMD..."
r = subprocess.run(sys.argv[3:], capture_output=True, text=True)
sys.stdout.write(r.stdout)
sys.stdout.write(r.stderr)
if r.returncode != code:
    print(f"expect_exit: exit status {r.returncode}, expected {code}")
    sys.exit(1)
