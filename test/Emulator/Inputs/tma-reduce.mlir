// Hand-written SIMT-level kernel: two CTAs of two warps each add into A
// (20 x 32 f32) with TMA reduce-adds of a 16 x 32 box from shared memory.
// Round 1: each thread writes elements i = 64 k + tid (k < 8) of the box
// as i, fences the generic proxy, and after a barrier thread 0 adds the
// box at row 0, commits and waits for the group's reads. Round 2 writes
// the buffer again (i + 1000) and adds it at row 8: its rows 12..15 fall
// past A's end and are dropped. So A += 2 * (box 1 at row 0 + box 2 at
// row 8). The planted-bug tests edit one line each (planted-tma.test).
module attributes {gpu.container_module} {
  func.func @tma_reduce_grid(%A: !tile.global<[20, 32], f32> {tile.name = "A"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    return %c2, %c1, %c1 : i32, i32, i32
  }
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<2048 x i8>
    gpu.func @tma_reduce(%A: !llvm.ptr<1> {tile.name = "A"}, %Amap: !llvm.ptr {tile.name = "A.tmap"}) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>, flashc.num_warps = 2 : i32,
                    flashc.grid = @tma_reduce_grid,
                    flashc.params = [{name = "A", kind = "tensor", element = f32, dims = ["20", "32"]}],
                    flashc.tensor_maps = [{name = "A.tmap", tensor = "A", box = array<i64: 16, 32>, swizzle = "none", oob = "zero"}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c4 = arith.constant 4 : i32
      %c8 = arith.constant 8 : i32
      %c64 = arith.constant 64 : i32
      %round2 = arith.constant 1000.0 : f32
      %smem = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      %leader = arith.cmpi eq, %tid, %c0 : i32
      scf.for %k = %c0 to %c8 step %c1 : i32 {
        %base = arith.muli %k, %c64 : i32
        %i = arith.addi %base, %tid : i32
        %v = arith.uitofp %i : i32 to f32
        %at = arith.muli %i, %c4 : i32
        %p = llvm.getelementptr %smem[%at] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        llvm.store %v, %p {alignment = 4 : i64} : f32, !llvm.ptr<3>
      }
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      scf.if %leader {
        nvvm.cp.async.bulk.tensor.reduce %Amap, %smem, box[%c0, %c0] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
        nvvm.cp.async.bulk.commit.group
        nvvm.cp.async.bulk.wait_group 0 {read}
      }
      nvvm.barrier0
      scf.for %k = %c0 to %c8 step %c1 : i32 {
        %base = arith.muli %k, %c64 : i32
        %i = arith.addi %base, %tid : i32
        %f = arith.uitofp %i : i32 to f32
        %v = arith.addf %f, %round2 : f32
        %at = arith.muli %i, %c4 : i32
        %p = llvm.getelementptr %smem[%at] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        llvm.store %v, %p {alignment = 4 : i64} : f32, !llvm.ptr<3>
      }
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      scf.if %leader {
        nvvm.cp.async.bulk.tensor.reduce %Amap, %smem, box[%c0, %c8] {redKind = #nvvm.tma_redux_kind<add>} : !llvm.ptr, !llvm.ptr<3>
        nvvm.cp.async.bulk.commit.group
        nvvm.cp.async.bulk.wait_group 0
      }
      gpu.return
    }
  }
}
