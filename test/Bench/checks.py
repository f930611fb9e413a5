"""Assertions shared by the bench/ unit-check scripts: each counts, and the
script prints the count at its end so FileCheck sees that all of them ran."""

count = 0


def check(cond, what):
    global count
    count += 1
    if not cond:
        raise AssertionError(what)


def equal(got, want, what):
    check(got == want, "%s: got %r, want %r" % (what, got, want))


def close(got, want, what):
    check(abs(got - want) < 1e-6 * max(1.0, abs(want)), "%s: got %r, want %r" % (what, got, want))
