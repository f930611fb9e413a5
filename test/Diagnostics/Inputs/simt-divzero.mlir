// A SIMT-level kernel (hand-written): Y[t] = t / d for the 32 threads of one
// warp; d = 0 is a runtime error of the emulator at the arith.divsi.
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    gpu.func @k(%Y: !llvm.ptr<1> {tile.name = "Y"}, %n: i32 {tile.name = "Y.d0"},
                %d: i32 {tile.name = "d"}) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>, flashc.num_warps = 1 : i32,
                    flashc.params = [{name = "Y", kind = "tensor", element = i32, dims = ["32"]},
                                     {name = "d", kind = "scalar", element = i32}]} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      %q = arith.divsi %t, %d : i32
      %p = llvm.getelementptr %Y[%t] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      llvm.store %q, %p : i32, !llvm.ptr<1>
      gpu.return
    }
  }
}
