// Hand-written SIMT-level kernel: one warp stages X (256 f16) through shared
// memory with cp.async (16 bytes per thread), waits, synchronizes, and each
// thread writes the chunk its right neighbour copied: Y[t] = X[(t + 1) % 32]
// (chunks of 8 elements). The planted-bug tests delete the wait or the
// barrier (planted-cp-async.test).
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<512 x i8>
    gpu.func @rotate(%X: !llvm.ptr<1> {tile.name = "X"}, %Xd0: i32 {tile.name = "X.d0"},
                     %Y: !llvm.ptr<1> {tile.name = "Y"}, %Yd0: i32 {tile.name = "Y.d0"}) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>, flashc.num_warps = 1 : i32,
                    flashc.shared_bytes = 512 : i64,
                    flashc.params = [{name = "X", kind = "tensor", element = f16, dims = ["256"]},
                                     {name = "Y", kind = "tensor", element = f16, dims = ["256"]}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c1 = arith.constant 1 : i32
      %c8 = arith.constant 8 : i32
      %c31 = arith.constant 31 : i32
      %base = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      %e = arith.muli %tid, %c8 : i32
      %src = llvm.getelementptr %X[%e] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      %dst = llvm.getelementptr %base[%e] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
      nvvm.cp.async.shared.global %dst, %src, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %t1 = arith.addi %tid, %c1 : i32
      %n = arith.andi %t1, %c31 : i32
      %ne = arith.muli %n, %c8 : i32
      %from = llvm.getelementptr %base[%ne] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
      %v = llvm.load %from {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
      %to = llvm.getelementptr %Y[%e] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      llvm.store %v, %to {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
      gpu.return
    }
  }
}
