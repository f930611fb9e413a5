//===- Roles.cpp - Warp roles that run side by side -----------------------===//
#include "Roles.h"
#include "Executor.h"

#include <cstdlib>
#include <ucontext.h>

namespace flash::emu {

namespace {
/// Each side's stack: the executor's recursion over nested regions.
constexpr size_t kStackBytes = size_t(8) << 20;
} // namespace

struct RoleScheduler::Side {
  std::function<bool()> body;
  ucontext_t context;
  std::unique_ptr<char[]> stack;
  /// This side's masks of nested regions (the executor's are per depth).
  std::vector<std::vector<uint8_t>> masks;
  bool finished = false, ok = false;
};

static thread_local RoleScheduler *running = nullptr;

bool blockCurrentRole() { return running && running->block(); }

void yieldCurrentRole() {
  if (running)
    running->yield();
}

RoleScheduler::RoleScheduler(Executor &ex) : ex(ex) {}
RoleScheduler::~RoleScheduler() = default;

void RoleScheduler::entry(unsigned lo, unsigned hi) {
  auto *side = reinterpret_cast<Side *>((uintptr_t(hi) << 32) | uintptr_t(lo));
  side->ok = side->body();
  side->finished = true;
  // Returning resumes uc_link: the scheduler's context.
}

bool RoleScheduler::run(std::vector<std::function<bool()>> bodies) {
  ucontext_t home;
  std::vector<std::vector<uint8_t>> *outerMasks = ex.masks;
  for (auto &body : bodies) {
    auto side = std::make_unique<Side>();
    side->body = std::move(body);
    side->masks = *outerMasks;
    side->stack.reset(new char[kStackBytes]);
    getcontext(&side->context);
    side->context.uc_stack.ss_sp = side->stack.get();
    side->context.uc_stack.ss_size = kStackBytes;
    side->context.uc_link = &home;
    uintptr_t p = reinterpret_cast<uintptr_t>(side.get());
    makecontext(&side->context, reinterpret_cast<void (*)()>(&entry), 2,
                unsigned(p & 0xffffffffu), unsigned(p >> 32));
    sides.push_back(std::move(side));
  }
  RoleScheduler *outer = running;
  running = this;
  bool ok = true;
  while (ok) {
    bool live = false, progressed = false;
    for (size_t i = 0; i < sides.size() && ok; ++i) {
      Side &side = *sides[i];
      if (side.finished)
        continue;
      live = true;
      int64_t before = ex.stats.opsExecuted;
      current = int(i);
      ex.masks = &side.masks;
      swapcontext(&home, &side.context);
      ex.masks = outerMasks;
      current = -1;
      if (side.finished) {
        progressed = true;
        ok = side.ok;
      } else if (ex.stats.opsExecuted != before) {
        progressed = true;
      }
    }
    if (!live || !ok)
      break;
    if (!progressed) {
      // Every side is blocked: each one reports where (the cause may be in
      // any of them).
      givingUp = true;
      ok = false;
      Error first;
      bool reported = false;
      for (size_t i = 0; i < sides.size(); ++i) {
        Side &side = *sides[i];
        if (side.finished)
          continue;
        current = int(i);
        ex.masks = &side.masks;
        swapcontext(&home, &side.context);
        ex.masks = outerMasks;
        current = -1;
        Error &e = ex.errorReporter().last();
        if (!reported)
          first = e;
        else
          first.message += "; meanwhile " + e.message;
        reported = true;
      }
      // Where the first side waits, with what the others wait for.
      ex.errorReporter().last() = first;
    }
  }
  running = outer;
  // A side left suspended after another failed is abandoned with its stack.
  return ok;
}

void RoleScheduler::yield() {
  Side &side = *sides[current];
  swapcontext(&side.context, side.context.uc_link);
}

bool RoleScheduler::block() {
  if (givingUp)
    return false;
  Side &side = *sides[current];
  ucontext_t *home = side.context.uc_link;
  swapcontext(&side.context, home);
  return !givingUp;
}

} // namespace flash::emu
