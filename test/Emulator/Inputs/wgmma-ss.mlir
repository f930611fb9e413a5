// Hand-written SIMT-level kernel: one warpgroup computes D = A B with one
// wgmma.mma_async m64n16k16 (SS): A (64 x 16 f16) staged by st.shared into a
// 32B-swizzled K-major tile, B (given as 16 x 16 = N x K) into an unswizzled
// K-major tile, fence.proxy.async + barrier, descriptors computed by arith
// from the shared-window address (llvm.ptrtoint), fence / wgmma / commit /
// wait, and every thread stores its accumulator registers to D (64 x 16
// f32). planted-wgmma.test edits it into bugs.
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<4096 x i8>
    gpu.func @wgmma_ss(%A: !llvm.ptr<1> {tile.name = "A"}, %Ad0: i32 {tile.name = "A.d0"}, %Ad1: i32 {tile.name = "A.d1"},
                       %B: !llvm.ptr<1> {tile.name = "B"}, %Bd0: i32 {tile.name = "B.d0"}, %Bd1: i32 {tile.name = "B.d1"},
                       %D: !llvm.ptr<1> {tile.name = "D"}, %Dd0: i32 {tile.name = "D.d0"}, %Dd1: i32 {tile.name = "D.d1"}) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>, flashc.num_warps = 4 : i32,
                    flashc.shared_bytes = 4096 : i64,
                    flashc.params = [{name = "A", kind = "tensor", element = f16, dims = ["64", "16"]},
                                     {name = "B", kind = "tensor", element = f16, dims = ["16", "16"]},
                                     {name = "D", kind = "tensor", element = f32, dims = ["64", "16"]}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c4 = arith.constant 4 : i32
      %c8 = arith.constant 8 : i32
      %c16 = arith.constant 16 : i32
      %c31 = arith.constant 31 : i32
      %c32 = arith.constant 32 : i32
      %c128 = arith.constant 128 : i32
      %c256 = arith.constant 256 : i32
      %base = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      // A: row r = tid / 2, half h = tid % 2 (k 8h..8h+7), into the 32B-swizzled
      // K-major tile at 0: logical byte 32 r + 16 h, its 16-byte chunk XORed
      // with (logical / 128) % 2.
      %r = arith.divui %tid, %c2 : i32
      %h = arith.remui %tid, %c2 : i32
      %r16 = arith.muli %r, %c16 : i32
      %h8 = arith.muli %h, %c8 : i32
      %srcA_i = arith.addi %r16, %h8 : i32
      %srcA = llvm.getelementptr %A[%srcA_i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
      %vA = llvm.load %srcA {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
      %r32 = arith.muli %r, %c32 : i32
      %h16 = arith.muli %h, %c16 : i32
      %logA = arith.addi %r32, %h16 : i32
      %line = arith.divui %logA, %c128 : i32
      %phase = arith.remui %line, %c2 : i32
      %flip = arith.muli %phase, %c16 : i32
      %physA = arith.xori %logA, %flip : i32
      %dstA = llvm.getelementptr %base[%physA] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
      llvm.store %vA, %dstA {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
      // B (given as N x K, K-major "col"): threads 0-31, row n = tid / 2, half h,
      // into the unswizzled K-major tile at 2048: block h at 256 h, row n at 16 n.
      %isB = arith.cmpi ult, %tid, %c32 : i32
      scf.if %isB {
        %srcB = llvm.getelementptr %B[%srcA_i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
        %vB = llvm.load %srcB {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
        %h256 = arith.muli %h, %c256 : i32
        %n16 = arith.muli %r, %c16 : i32
        %offB = arith.addi %h256, %n16 : i32
        %dstB0 = llvm.getelementptr %base[2048] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
        %dstB = llvm.getelementptr %dstB0[%offB] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        llvm.store %vB, %dstB {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
      }
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      // Descriptors: start >> 4 | LBO >> 4 << 16 | SBO >> 4 << 32 | layout << 62.
      // A: 32B swizzle (3), LBO 16, SBO 256. B: none, LBO 256, SBO 128.
      %c4_64 = arith.constant 4 : i64
      %zero64 = arith.constant 0 : i64
      %tid64 = arith.extui %tid : i32 to i64
      %spreadA = arith.muli %tid64, %zero64 : i64
      %smem = llvm.ptrtoint %base : !llvm.ptr<3> to i64
      %aOffset = arith.constant 0 : i64
      %startA = arith.addi %smem, %aOffset : i64
      %addrA = arith.addi %startA, %spreadA : i64
      %encA = arith.shrui %addrA, %c4_64 : i64
      %fieldsA = arith.constant -4611685949707845632 : i64
      %descA = arith.ori %encA, %fieldsA : i64
      %bOffset = arith.constant 2048 : i64
      %startB = arith.addi %smem, %bOffset : i64
      %encB = arith.shrui %startB, %c4_64 : i64
      %fieldsB = arith.constant 34360786944 : i64
      %descB = arith.ori %encB, %fieldsB : i64
      %zero = arith.constant 0.0 : f32
      %acc0 = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc1 = llvm.insertvalue %zero, %acc0[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc2 = llvm.insertvalue %zero, %acc1[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc3 = llvm.insertvalue %zero, %acc2[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc4 = llvm.insertvalue %zero, %acc3[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc5 = llvm.insertvalue %zero, %acc4[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc6 = llvm.insertvalue %zero, %acc5[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc7 = llvm.insertvalue %zero, %acc6[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %acc8 = llvm.insertvalue %zero, %acc7[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      nvvm.wgmma.fence.aligned
      %d = nvvm.wgmma.mma_async %descA, %descB, %acc8, #nvvm.shape<m = 64, n = 16, k = 16>, D [<f32>, #nvvm.wgmma_scale_out<one>], A [<f16>, #nvvm.wgmma_scale_in<one>, <row>], B [<f16>, #nvvm.wgmma_scale_in<one>, <col>] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)> -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %all = arith.cmpi ult, %tid, %c128 : i32
      scf.if %all {
        nvvm.wgmma.commit.group.sync.aligned
      }
      nvvm.wgmma.wait.group.sync.aligned 0
      // D: register i of thread t is (16 w + g + 8 ((i / 2) % 2), 8 (i / 4) + 2 q + i % 2).
      %w = arith.divui %tid, %c32 : i32
      %lane = arith.remui %tid, %c32 : i32
      %g = arith.divui %lane, %c4 : i32
      %q = arith.remui %tid, %c4 : i32
      %w16 = arith.muli %w, %c16 : i32
      %row0 = arith.addi %w16, %g : i32
      %q2 = arith.muli %q, %c2 : i32
      %x0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro0 = arith.constant 0 : i32
      %rowN0 = arith.muli %row0, %c16 : i32
      %at0a = arith.addi %rowN0, %q2 : i32
      %at0 = arith.addi %at0a, %ro0 : i32
      %p0 = llvm.getelementptr %D[%at0] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x0, %p0 : f32, !llvm.ptr<1>
      %x1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro1 = arith.constant 1 : i32
      %rowN1 = arith.muli %row0, %c16 : i32
      %at1a = arith.addi %rowN1, %q2 : i32
      %at1 = arith.addi %at1a, %ro1 : i32
      %p1 = llvm.getelementptr %D[%at1] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x1, %p1 : f32, !llvm.ptr<1>
      %x2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro2 = arith.constant 128 : i32
      %rowN2 = arith.muli %row0, %c16 : i32
      %at2a = arith.addi %rowN2, %q2 : i32
      %at2 = arith.addi %at2a, %ro2 : i32
      %p2 = llvm.getelementptr %D[%at2] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x2, %p2 : f32, !llvm.ptr<1>
      %x3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro3 = arith.constant 129 : i32
      %rowN3 = arith.muli %row0, %c16 : i32
      %at3a = arith.addi %rowN3, %q2 : i32
      %at3 = arith.addi %at3a, %ro3 : i32
      %p3 = llvm.getelementptr %D[%at3] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x3, %p3 : f32, !llvm.ptr<1>
      %x4 = llvm.extractvalue %d[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro4 = arith.constant 8 : i32
      %rowN4 = arith.muli %row0, %c16 : i32
      %at4a = arith.addi %rowN4, %q2 : i32
      %at4 = arith.addi %at4a, %ro4 : i32
      %p4 = llvm.getelementptr %D[%at4] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x4, %p4 : f32, !llvm.ptr<1>
      %x5 = llvm.extractvalue %d[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro5 = arith.constant 9 : i32
      %rowN5 = arith.muli %row0, %c16 : i32
      %at5a = arith.addi %rowN5, %q2 : i32
      %at5 = arith.addi %at5a, %ro5 : i32
      %p5 = llvm.getelementptr %D[%at5] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x5, %p5 : f32, !llvm.ptr<1>
      %x6 = llvm.extractvalue %d[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro6 = arith.constant 136 : i32
      %rowN6 = arith.muli %row0, %c16 : i32
      %at6a = arith.addi %rowN6, %q2 : i32
      %at6 = arith.addi %at6a, %ro6 : i32
      %p6 = llvm.getelementptr %D[%at6] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x6, %p6 : f32, !llvm.ptr<1>
      %x7 = llvm.extractvalue %d[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %ro7 = arith.constant 137 : i32
      %rowN7 = arith.muli %row0, %c16 : i32
      %at7a = arith.addi %rowN7, %q2 : i32
      %at7 = arith.addi %at7a, %ro7 : i32
      %p7 = llvm.getelementptr %D[%at7] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x7, %p7 : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}
