//===- flashc.cpp - the flashc compiler -----------------------------------===//
//
// The command line and the compile live in lib/Driver (CommandLine.h,
// Compilation.h), shared with `flashc run` and the Python module.
//
//===----------------------------------------------------------------------===//
#include "flashc/Driver/CommandLine.h"

int main(int argc, char **argv) { return flash::flashcMain(argc, argv); }
