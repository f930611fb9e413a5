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

int main(int argc, char **argv) {
  std::string ptxPath, sidecarPath;
  std::vector<std::pair<std::string, std::string>> argSpecs, outSpecs;
  launcher::LaunchOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char *flag) -> const char * {
      if (i + 1 >= argc) {
        fail(std::string(flag) + " needs a value");
        std::exit(1);
      }
      return argv[++i];
    };
    auto pair = [&](const std::string &v,
                    std::vector<std::pair<std::string, std::string>> &dst) {
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) {
        fail("expected NAME=VALUE, got '" + v + "'");
        std::exit(1);
      }
      dst.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    };
    if (a == "--arg")
      pair(value("--arg"), argSpecs);
    else if (a == "--out")
      pair(value("--out"), outSpecs);
    else if (a == "--sidecar")
      sidecarPath = value("--sidecar");
    else if (a == "--warmup")
      options.warmup = std::atoi(value("--warmup"));
    else if (a == "--iterations")
      options.iterations = std::atoi(value("--iterations"));
    else if (a == "-h" || a == "--help") {
      std::printf("usage: flash-launch K.ptx [--sidecar K.ptx.json] --arg "
                  "NAME=FILE.npy|NUMBER ... [--out NAME=FILE.npy ...] "
                  "[--warmup N] [--iterations N]\n");
      return 0;
    } else if (ptxPath.empty() && a[0] != '-')
      ptxPath = a;
    else
      return fail("unexpected argument '" + a + "'");
  }
  if (ptxPath.empty())
    return fail("no PTX file (see --help)");
  if (sidecarPath.empty())
    sidecarPath = ptxPath + ".json";
  std::string ptx, json, error;
  if (!readText(ptxPath, ptx))
    return fail("cannot read '" + ptxPath + "'");
  if (!readText(sidecarPath, json))
    return fail("cannot read '" + sidecarPath + "'");
  launcher::Sidecar sidecar;
  if (!launcher::parseSidecar(json, sidecar, error))
    return fail(error);

  std::list<npy::Array> arrays; // stable addresses
  std::vector<launcher::Arg> args;
  for (const auto &[name, text] : argSpecs) {
    launcher::Arg arg;
    arg.name = name;
    const launcher::SidecarParam *param = nullptr;
    for (const auto &p : sidecar.params)
      if (p.name == name)
        param = &p;
    if (param && param->tensor) {
      arrays.emplace_back();
      if (!npy::readFile(text, arrays.back(), error))
        return fail("cannot read argument '" + name + "' from '" + text +
                    "': " + error);
      arg.tensor = &arrays.back();
      for (const auto &o : outSpecs)
        arg.copyBack |= o.first == name;
    } else {
      char *end = nullptr;
      arg.scalar = std::strtod(text.c_str(), &end);
      if (text.empty() || *end)
        return fail("argument '" + name + "' needs a number, not '" + text +
                    "'");
    }
    args.push_back(std::move(arg));
  }

  auto driver = cuda::Driver::open(error);
  if (!driver)
    return fail(error);
  launcher::LaunchResult result;
  if (!launcher::launch(*driver, ptx, sidecar, args, error, &result, options))
    return fail(error);
  std::printf("%s on %s (sm_%d%d): grid (%lld, %lld, %lld), %lld threads, "
              "%lld B dynamic shared: %.3f ms per launch\n",
              sidecar.entry.c_str(), driver->deviceName().c_str(),
              driver->ccMajor(), driver->ccMinor(),
              (long long)result.grid[0], (long long)result.grid[1],
              (long long)result.grid[2], (long long)result.block,
              (long long)result.dynamicSharedBytes, result.milliseconds);
  for (const auto &[name, file] : outSpecs) {
    const launcher::Arg *arg = nullptr;
    for (const auto &a : args)
      if (a.name == name)
        arg = &a;
    if (!arg || !arg->tensor)
      return fail("--out names '" + name + "', which is no tensor argument");
    if (!npy::writeFile(file, *arg->tensor, error))
      return fail("cannot write '" + file + "': " + error);
  }
  return 0;
}
