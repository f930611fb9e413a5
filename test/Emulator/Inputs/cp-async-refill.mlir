// Hand-written SIMT-level kernel: two warps stage X (1024 f16) through one
// 1024-byte shared buffer in two rounds of cp.async (16 bytes per thread).
// Each round waits, synchronizes, and each thread writes the chunk its right
// neighbour copied (thread 31's neighbour is in the other warp). The barrier
// marked "refill" keeps the second round's copies from overwriting chunks the
// first round's readers have not finished with; planted-cp-async.test
// deletes it.
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<1024 x i8>
    gpu.func @refill(%X: !llvm.ptr<1> {tile.name = "X"}, %Xd0: i32 {tile.name = "X.d0"},
                     %Y: !llvm.ptr<1> {tile.name = "Y"}, %Yd0: i32 {tile.name = "Y.d0"}) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>, flashc.num_warps = 2 : i32,
                    flashc.shared_bytes = 1024 : i64,
                    flashc.params = [{name = "X", kind = "tensor", element = f16, dims = ["1024"]},
                                     {name = "Y", kind = "tensor", element = f16, dims = ["1024"]}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c1 = arith.constant 1 : i32
      %c8 = arith.constant 8 : i32
      %c63 = arith.constant 63 : i32
      %c512 = arith.constant 512 : i32
      %base = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      %e = arith.muli %tid, %c8 : i32
      %dst = llvm.getelementptr %base[%e] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
      %t1 = arith.addi %tid, %c1 : i32
      %n = arith.andi %t1, %c63 : i32
      %ne = arith.muli %n, %c8 : i32
      %from = llvm.getelementptr %base[%ne] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16

      %src0 = llvm.getelementptr %X[%e] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      nvvm.cp.async.shared.global %dst, %src0, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %v0 = llvm.load %from {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
      %to0 = llvm.getelementptr %Y[%e] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      llvm.store %v0, %to0 {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>

      nvvm.barrier0 // refill
      %e1 = arith.addi %e, %c512 : i32
      %src1 = llvm.getelementptr %X[%e1] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      nvvm.cp.async.shared.global %dst, %src1, 16, cache = cg : !llvm.ptr<3>, !llvm.ptr<1>
      nvvm.cp.async.commit.group
      nvvm.cp.async.wait.group 0
      nvvm.barrier0
      %v1 = llvm.load %from {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xf16>
      %to1 = llvm.getelementptr %Y[%e1] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      llvm.store %v1, %to1 {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
      gpu.return
    }
  }
}
