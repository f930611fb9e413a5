// Hand-written SIMT-level kernel: two warps exchange data through shared
// memory, ordered by an mbarrier instead of bar.sync. The leader (elect.sync
// in warp 0) initialises the barrier for 64 arrivals; after a named barrier
// every thread stores X[t], arrives and waits for phase 0, then writes its
// neighbour's value: Y[t] = X[(t + 1) % 64]. Two more rounds arrive and wait
// with the parity of the round. The planted-bug tests edit one line each
// (planted-mbarrier.test).
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<128 x i8>
    llvm.mlir.global internal @bars() {addr_space = 3 : i32, alignment = 8 : i64} : !llvm.array<1 x i64>
    gpu.func @exchange(%X: !llvm.ptr<1> {tile.name = "X"}, %Xd0: i32 {tile.name = "X.d0"},
                       %Y: !llvm.ptr<1> {tile.name = "Y"}, %Yd0: i32 {tile.name = "Y.d0"}) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>, flashc.num_warps = 2 : i32,
                    flashc.params = [{name = "X", kind = "tensor", element = f16, dims = ["64"]},
                                     {name = "Y", kind = "tensor", element = f16, dims = ["64"]}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c3 = arith.constant 3 : i32
      %c32 = arith.constant 32 : i32
      %c63 = arith.constant 63 : i32
      %ticks = arith.constant 1000 : i32
      %arrivals = arith.constant 64 : i32
      %members = arith.constant 64 : i32
      %smem = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      %bar = llvm.mlir.addressof @bars : !llvm.ptr<3>
      %elected = nvvm.elect.sync -> i1
      %warp0 = arith.cmpi ult, %tid, %c32 : i32
      %leader = arith.andi %elected, %warp0 : i1
      scf.if %leader {
        nvvm.mbarrier.init %bar, %arrivals : !llvm.ptr<3>, i32
      }
      nvvm.fence.mbarrier.init
      nvvm.barrier id = %c1 number_of_threads = %members
      %src = llvm.getelementptr %X[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      %x = llvm.load %src {alignment = 2 : i64} : !llvm.ptr<1> -> f16
      %mine = llvm.getelementptr %smem[%tid] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
      llvm.store %x, %mine {alignment = 2 : i64} : f16, !llvm.ptr<3>
      //STOREBAR llvm.store %x, %bar {alignment = 2 : i64} : f16, !llvm.ptr<3>
      %state = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
      nvvm.mbarrier.try_wait.parity %bar, %c0, %ticks : !llvm.ptr<3>, i32, i32
      %t1 = arith.addi %tid, %c1 : i32
      %n = arith.andi %t1, %c63 : i32
      %theirs = llvm.getelementptr %smem[%n] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, f16
      %v = llvm.load %theirs {alignment = 2 : i64} : !llvm.ptr<3> -> f16
      %dst = llvm.getelementptr %Y[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      llvm.store %v, %dst {alignment = 2 : i64} : f16, !llvm.ptr<1>
      scf.for %round = %c1 to %c3 step %c1 : i32 {
        %odd = arith.andi %round, %c1 : i32
        %s = nvvm.mbarrier.arrive %bar : !llvm.ptr<3> -> i64
        nvvm.mbarrier.try_wait.parity %bar, %odd, %ticks : !llvm.ptr<3>, i32, i32
      }
      gpu.return
    }
  }
}
