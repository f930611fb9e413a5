//===- CommandLine.h - flashc's command line --------------------*- C++ -*-===//
//
// `flashc FILE.tile ...` (compile to an --emit level) and `flashc run ...`
// (compile, then run on a target): the options, with one flag per row of
// flashc/Support/CompileOptions.def, turned into one flash::Compilation.
//
//===----------------------------------------------------------------------===//
#ifndef FLASHC_DRIVER_COMMANDLINE_H
#define FLASHC_DRIVER_COMMANDLINE_H

namespace flash {

/// flashc's main. Returns the exit code: 0 success, 1 a problem with the
/// input or the options, 2 an internal error.
int flashcMain(int argc, char **argv);

} // namespace flash

#endif // FLASHC_DRIVER_COMMANDLINE_H
