// Hand-written SIMT-level kernel: thread t computes prmt.b32 (default mode)
// of X[t] = (lo, hi, selector) into Y[t].
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    gpu.func @prmt(%X: !llvm.ptr<1> {tile.name = "X"}, %X0: i32 {tile.name = "X.d0"}, %X1: i32 {tile.name = "X.d1"},
                   %Y: !llvm.ptr<1> {tile.name = "Y"}, %Y0: i32 {tile.name = "Y.d0"}) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>, flashc.num_warps = 1 : i32,
                    flashc.params = [{name = "X", kind = "tensor", element = i32, dims = ["32", "3"]},
                                     {name = "Y", kind = "tensor", element = i32, dims = ["32"]}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c3 = arith.constant 3 : i32
      %row = arith.muli %tid, %c3 : i32
      %i1 = arith.addi %row, %c1 : i32
      %i2 = arith.addi %row, %c2 : i32
      %plo = llvm.getelementptr %X[%row] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %phi = llvm.getelementptr %X[%i1] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %psel = llvm.getelementptr %X[%i2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %lo = llvm.load %plo {alignment = 4 : i64} : !llvm.ptr<1> -> i32
      %hi = llvm.load %phi {alignment = 4 : i64} : !llvm.ptr<1> -> i32
      %sel = llvm.load %psel {alignment = 4 : i64} : !llvm.ptr<1> -> i32
      %r = nvvm.prmt #nvvm.permute_mode<default> %sel, %lo, %hi : i32
      %py = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %r, %py {alignment = 4 : i64} : i32, !llvm.ptr<1>
      gpu.return
    }
  }
}
