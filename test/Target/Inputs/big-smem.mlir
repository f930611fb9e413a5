// A kernel with a 64 KiB shared buffer: above the 48 KiB static limit, so
// flashc-prepare-nvvm makes it dynamic shared memory.
module attributes {gpu.container_module} {
  func.func @big_grid(%X: !tile.global<[N], f32> {tile.name = "X"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %c128 = arith.constant 128 : i32
    %n = tile.dim %X[0] : !tile.global<[N], f32>
    %g = arith.ceildivsi %n, %c128 : i32
    return %g, %c1, %c1 : i32, i32, i32
  }
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<65536 x i8>
    gpu.func @big(%X: !llvm.ptr<1> {tile.name = "X"}, %X_d0: i32 {tile.name = "X.d0"}) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>, flashc.num_warps = 4 : i32,
                    flashc.grid = @big_grid, flashc.shared_bytes = 65536 : i64,
                    flashc.params = [{name = "X", kind = "tensor", element = f32, dims = ["N"]}],
                    tile.constants = {}} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c1 = arith.constant 1 : i32
      %c16000 = arith.constant 16000 : i32
      %smem = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      %hi = arith.addi %tid, %c16000 : i32
      %x = llvm.load %X : !llvm.ptr<1> -> f32
      %p = llvm.getelementptr %smem[%hi] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      llvm.store %x, %p : f32, !llvm.ptr<3>
      nvvm.barrier
      %other = arith.xori %hi, %c1 : i32
      %q = llvm.getelementptr %smem[%other] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f32
      %y = llvm.load %q : !llvm.ptr<3> -> f32
      %o = llvm.getelementptr %X[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %y, %o : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}
