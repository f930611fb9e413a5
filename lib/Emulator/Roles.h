//===- Roles.h - Warp roles that run side by side -------------*- C++ -*-===//
//
// The executor runs a CTA's threads in lockstep and the two sides of an
// scf.if one after the other. A warp-specialized kernel's role split (the
// scf.if tile-warp-specialize marks `tile.warp_roles`) cannot run so: the
// producer waits for the consumers' releases and they for its copies. Its
// sides run as coroutines instead, one at a time, deterministically: a side
// runs until it finishes or blocks (an mbarrier wait whose phase has not
// completed, a bar.sync short of arrivals, a setmaxnreg.inc the register
// pool cannot supply) or arrives on a barrier (the other side may wait for
// it), then the other side resumes. When a whole round of
// resumptions executes no op, every side is blocked for good: the op the
// first side blocked at reports the deadlock.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_EMULATOR_ROLES_H
#define FLASH_LIB_EMULATOR_ROLES_H

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace flash::emu {

class Executor;

class RoleScheduler {
public:
  explicit RoleScheduler(Executor &ex);
  ~RoleScheduler();
  /// Runs each of `sides` as a coroutine until all finish; false as soon as
  /// one fails (its error is reported).
  bool run(std::vector<std::function<bool()>> sides);
  /// Called by an op that cannot complete yet: lets the other sides run.
  /// True: retry the op; false: no side can make progress (a deadlock the
  /// caller reports).
  bool block();
  /// Called after an arrival the other side may be waiting for: lets it
  /// run at once, as the hardware's warps would.
  void yield();

private:
  struct Side;
  Executor &ex;
  std::vector<std::unique_ptr<Side>> sides;
  int current = -1;
  bool givingUp = false;
  static void entry(unsigned lo, unsigned hi);
};

/// block() of the scheduler whose side runs now; false outside a role split
/// (the lockstep executor has nothing else to run).
bool blockCurrentRole();
/// yield() of the scheduler whose side runs now, if any.
void yieldCurrentRole();

} // namespace flash::emu

#endif // FLASH_LIB_EMULATOR_ROLES_H
