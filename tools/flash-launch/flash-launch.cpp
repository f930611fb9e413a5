//===- flash-launch.cpp - run PTX + launch sidecar on a GPU, no LLVM -------===//
//
//   flash-launch K.ptx [--sidecar K.ptx.json] --arg NAME=FILE.npy|NUMBER ...
//                [--out NAME=FILE.npy ...] [--warmup N] [--iterations N]
//
// For GPU machines without LLVM: compile elsewhere (`flashc K.tile -o K.ptx`
// writes K.ptx and K.ptx.json), run here. Prints the launch and its time.
// Exit codes: 0 ok, 1 error (one line on stderr).
//
//===----------------------------------------------------------------------===//

#include "flashc/Launcher/CudaDriver.h"
#include "flashc/Launcher/Launch.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <list>
#include <sstream>

using namespace flash;

static int fail(const std::string &msg) {
  std::fprintf(stderr, "flash-launch: error: %s\n", msg.c_str());
  return 1;
}

static bool readText(const std::string &path, std::string &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  std::stringstream ss;
  ss << in.rdbuf();
  out = ss.str();
  return true;
}

namespace {

using Specs = std::vector<std::pair<std::string, std::string>>;

struct CommandLine {
  std::string ptxPath, sidecarPath;
  Specs args, outs;
  launcher::LaunchOptions options;
};

/// Parses argv; exits on a malformed option or --help.
CommandLine parseCommandLine(int argc, char **argv) {
  CommandLine cl;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc)
        std::exit(fail(std::string(flag) + " needs a value"));
      return argv[++i];
    };
    auto pair = [&](const std::string &v, Specs &dst) {
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0)
        std::exit(fail("expected NAME=VALUE, got '" + v + "'"));
      dst.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    };
    if (a == "--arg")
      pair(value("--arg"), cl.args);
    else if (a == "--out")
      pair(value("--out"), cl.outs);
    else if (a == "--sidecar")
      cl.sidecarPath = value("--sidecar");
    else if (a == "--warmup")
      cl.options.warmup = std::atoi(value("--warmup"));
    else if (a == "--iterations")
      cl.options.iterations = std::atoi(value("--iterations"));
    else if (a == "-h" || a == "--help") {
      std::printf("usage: flash-launch K.ptx [--sidecar K.ptx.json] --arg "
                  "NAME=FILE.npy|NUMBER ... [--out NAME=FILE.npy ...] "
                  "[--warmup N] [--iterations N]\n");
      std::exit(0);
    } else if (cl.ptxPath.empty() && a[0] != '-')
      cl.ptxPath = a;
    else
      std::exit(fail("unexpected argument '" + a + "'"));
  }
  return cl;
}

/// The --arg values: .npy files for the sidecar's tensor params (into
/// `arrays`, whose addresses stay put), numbers for the rest.
bool loadArgs(const CommandLine &cl, const launcher::Sidecar &sidecar,
              std::list<npy::Array> &arrays, std::vector<launcher::Arg> &args,
              std::string &error) {
  for (const auto &[name, text] : cl.args) {
    launcher::Arg arg;
    arg.name = name;
    const launcher::SidecarParam *param = nullptr;
    for (const auto &p : sidecar.params)
      if (p.name == name)
        param = &p;
    if (param && param->tensor) {
      arrays.emplace_back();
      if (!npy::readFile(text, arrays.back(), error)) {
        error = "cannot read argument '" + name + "' from '" + text +
                "': " + error;
        return false;
      }
      arg.tensor = &arrays.back();
      for (const auto &o : cl.outs)
        arg.copyBack |= o.first == name;
    } else {
      char *end = nullptr;
      arg.scalar = std::strtod(text.c_str(), &end);
      if (text.empty() || *end) {
        error = "argument '" + name + "' needs a number, not '" + text + "'";
        return false;
      }
    }
    args.push_back(std::move(arg));
  }
  return true;
}

bool writeOutputs(const CommandLine &cl,
                  const std::vector<launcher::Arg> &args, std::string &error) {
  for (const auto &[name, file] : cl.outs) {
    const launcher::Arg *arg = nullptr;
    for (const auto &a : args)
      if (a.name == name)
        arg = &a;
    if (!arg || !arg->tensor) {
      error = "--out names '" + name + "', which is no tensor argument";
      return false;
    }
    if (!npy::writeFile(file, *arg->tensor, error)) {
      error = "cannot write '" + file + "': " + error;
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  CommandLine cl = parseCommandLine(argc, argv);
  if (cl.ptxPath.empty())
    return fail("no PTX file (see --help)");
  if (cl.sidecarPath.empty())
    cl.sidecarPath = cl.ptxPath + ".json";
  std::string ptx, json, error;
  if (!readText(cl.ptxPath, ptx))
    return fail("cannot read '" + cl.ptxPath + "'");
  if (!readText(cl.sidecarPath, json))
    return fail("cannot read '" + cl.sidecarPath + "'");
  launcher::Sidecar sidecar;
  if (!launcher::parseSidecar(json, sidecar, error))
    return fail(error);
  std::list<npy::Array> arrays;
  std::vector<launcher::Arg> args;
  if (!loadArgs(cl, sidecar, arrays, args, error))
    return fail(error);

  auto driver = cuda::Driver::open(error);
  if (!driver)
    return fail(error);
  launcher::LaunchResult result;
  if (!launcher::launch(*driver, ptx, sidecar, args, error, &result,
                        cl.options))
    return fail(error);
  std::printf("%s on %s (sm_%d%d): grid (%lld, %lld, %lld), %lld threads, "
              "%lld B dynamic shared: %.3f ms per launch\n",
              sidecar.entry.c_str(), driver->deviceName().c_str(),
              driver->ccMajor(), driver->ccMinor(), (long long)result.grid[0],
              (long long)result.grid[1], (long long)result.grid[2],
              (long long)result.block, (long long)result.dynamicSharedBytes,
              result.milliseconds);
  if (!writeOutputs(cl, args, error))
    return fail(error);
  return 0;
}
