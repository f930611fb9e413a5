//===- Module.cpp - flashc._flashc, the compiler libraries for Python -----===//
//
// The extension behind the `flashc` package (python/flashc): compile,
// lower, emit and run. The package adds the cache, array conversion and the
// attention front door in Python.
//
//===----------------------------------------------------------------------===//
#include "Kernel.h"

namespace nb = nanobind;

NB_MODULE(_flashc, m) {
  using namespace flash::python;
  nb::object base = nb::exception<Failure>(m, "Error");
  nb::exception<CompileFailure>(m, "CompileError", base);
  // A failed run is also a RuntimeError, as a failed device assert is in
  // CUDA-backed libraries.
  nb::object runError = nb::exception<RunFailure>(
      m, "RunError", nb::make_tuple(base, nb::handle(PyExc_RuntimeError)));
  nb::exception<SanitizerFailure>(m, "SanitizerError", runError);
  bindCompile(m);
  bindRun(m);
  bindDevice(m);
}
