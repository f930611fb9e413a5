"""The kernel checks' scratch files: each check names its inputs and outputs
in the lit work directory with a tag of its own (program and pid), and removes
them when done so that reruns and parallel checks never read stale arrays."""
import os


def remove_scratch(workdir, tag):
    for f in os.listdir(workdir):
        if f.startswith(tag):
            os.remove(os.path.join(workdir, f))
