"""Where ptxas put the wait for P V in fa2's sm_90a primary loop (run by
sass-profile-fa2.test): the loop issues S = Q K^T and P V, waits for S
(WARPGROUP.DEPBAR.LE gsb0, 0x1), runs the softmax, and waits for P V
(DEPBAR.LE gsb0, 0x0). P V runs under the instructions in between, so the
exponentials (MUFU.EX2) must lie there, not after the wait.
usage: wgmma_wait_check.py BENCH_DIR CUBIN"""
import sys

sys.path.insert(0, sys.argv[1])
from sassprof import cfg, machine, model, profile, sass, tools  # noqa: E402

function = sass.find_function(sass.parse(tools.disassemble(sys.argv[2])), None)
h100 = machine.for_arch("sm_90a")
loops = profile.tensor_loops(cfg.CFG(function))
primary = min(loops, key=lambda loop: model.in_order_cycles(loop.instructions(), h100) /
              sum(model.tensor_flop(i) for i in loop.instructions()
                  if i.opcode in model.WGMMA_OPCODES))
instrs = primary.instructions()
waits = [n for n, i in enumerate(instrs) if model.depbar_groups(i) is not None]
keeps = [model.depbar_groups(instrs[n]) for n in waits]
if keeps != [1, 0]:
    sys.exit("primary loop: waits %s, want DEPBAR.LE gsb0 1 then 0" % keeps)
ex2 = [n for n, i in enumerate(instrs) if i.opcode == "MUFU" and "EX2" in i.mnemonic]
under = sum(1 for n in ex2 if waits[0] < n < waits[1])
print("primary loop: %d instructions, %d between the waits, %d of %d MUFU.EX2 under P V"
      % (len(instrs), waits[1] - waits[0] - 1, under, len(ex2)))
if under < len(ex2) * 3 // 4:
    sys.exit("the wait for P V precedes %d of the loop's %d exponentials" % (len(ex2) - under, len(ex2)))
