// Hand-written SIMT-level kernel: one warp loads two 16 x 64 f16 boxes of X
// (R x 64, R = 20: the second box is partly out of bounds) with TMA into
// 128B-swizzled shared stages, signalled by one mbarrier (expect_tx of both
// boxes), waits for the phase, and copies them to Y (32 x 64) un-swizzling
// by hand: Y = X with rows 20..31 zero. It also writes stage 0 into a third
// swizzled buffer with plain stores, fences the generic proxy, and TMA-stores
// that buffer to Z (16 x 64): Z = X[0:16]. The planted-bug tests edit one
// line each (planted-tma.test).
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<6144 x i8>
    llvm.mlir.global internal @bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<1 x i64>
    gpu.func @tma_copy(%X: !llvm.ptr<1> {tile.name = "X"}, %Xmap: !llvm.ptr {tile.name = "X.tmap"},
                       %Y: !llvm.ptr<1> {tile.name = "Y"},
                       %Z: !llvm.ptr<1> {tile.name = "Z"}, %Zmap: !llvm.ptr {tile.name = "Z.tmap"}) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>, flashc.num_warps = 1 : i32,
                    flashc.params = [{name = "X", kind = "tensor", element = f16, dims = ["R", "C"]},
                                     {name = "Y", kind = "tensor", element = f16, dims = ["32", "64"]},
                                     {name = "Z", kind = "tensor", element = f16, dims = ["16", "64"]}],
                    flashc.tensor_maps = [{name = "X.tmap", tensor = "X", box = array<i64: 16, 64>, swizzle = "128B", oob = "zero"},
                                          {name = "Z.tmap", tensor = "Z", box = array<i64: 16, 64>, swizzle = "128B", oob = "zero"}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %c4 = arith.constant 4 : i32
      %c15 = arith.constant 15 : i32
      %c16 = arith.constant 16 : i32
      %c32 = arith.constant 32 : i32
      %c64 = arith.constant 64 : i32
      %c112 = arith.constant 112 : i32
      %c128 = arith.constant 128 : i32
      %upper = arith.constant 2048 : i32
      %outAt = arith.constant 4096 : i32
      %bytes = arith.constant 4096 : i32
      %ticks = arith.constant 1000 : i32
      %smem = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      %bar = llvm.mlir.addressof @bars : !llvm.ptr<3>
      %dst1 = llvm.getelementptr %smem[%upper] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      %out = llvm.getelementptr %smem[%outAt] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      %leader = nvvm.elect.sync -> i1
      scf.if %leader {
        nvvm.mbarrier.init %bar, %c1 : !llvm.ptr<3>, i32
      }
      nvvm.fence.mbarrier.init
      nvvm.barrier0
      scf.if %leader {
        nvvm.mbarrier.arrive.expect_tx %bar, %bytes : !llvm.ptr<3>, i32
        %d0 = llvm.addrspacecast %smem : !llvm.ptr<3> to !llvm.ptr<7>
        nvvm.cp.async.bulk.tensor.shared.cluster.global %d0, %Xmap, %bar, box[%c0, %c0] : !llvm.ptr<7>, !llvm.ptr
        %d1 = llvm.addrspacecast %dst1 : !llvm.ptr<3> to !llvm.ptr<7>
        nvvm.cp.async.bulk.tensor.shared.cluster.global %d1, %Xmap, %bar, box[%c0, %c16] : !llvm.ptr<7>, !llvm.ptr
      }
      nvvm.mbarrier.try_wait.parity %bar, %c0, %ticks : !llvm.ptr<3>, i32, i32
      // Row r, columns 2t and 2t + 1: byte 4t of line r % 16 of stage r / 16,
      // swizzled: chunk ^= line % 8.
      %col = arith.muli %tid, %c2 : i32
      %inRow = arith.muli %tid, %c4 : i32
      scf.for %r = %c0 to %c32 step %c1 : i32 {
        %line = arith.andi %r, %c15 : i32
        %stage = arith.shrui %r, %c4 : i32
        %lineAt = arith.muli %line, %c128 : i32
        %off = arith.addi %lineAt, %inRow : i32
        %sh = arith.shrui %off, %c3 : i32
        %mask = arith.andi %sh, %c112 : i32
        %phys = arith.xori %off, %mask : i32
        %stageAt = arith.muli %stage, %upper : i32
        %at = arith.addi %stageAt, %phys : i32
        %p = llvm.getelementptr %smem[%at] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        %v = llvm.load %p {alignment = 4 : i64} : !llvm.ptr<3> -> vector<2xf16>
        %rowAt = arith.muli %r, %c64 : i32
        %e = arith.addi %rowAt, %col : i32
        %g = llvm.getelementptr %Y[%e] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
        llvm.store %v, %g {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<1>
        %first = arith.cmpi ult, %r, %c16 : i32
        scf.if %first {
          %q = llvm.getelementptr %out[%phys] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
          llvm.store %v, %q {alignment = 4 : i64} : vector<2xf16>, !llvm.ptr<3>
        }
      }
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      scf.if %leader {
        nvvm.cp.async.bulk.tensor.global.shared.cta %Zmap, %out, box[%c0, %c0] : !llvm.ptr, !llvm.ptr<3>
        nvvm.cp.async.bulk.commit.group
        nvvm.cp.async.bulk.wait_group 0 {read}
      }
      gpu.return
    }
  }
}
