// Hand-written SIMT-level kernel: one warpgroup runs the register-A (RS)
// wgmma m64n16k16 as llvm.inline_asm, twice in a loop into the same
// accumulator (D = 2 A B): A from each thread's 4 fragment registers
// (Afrag[t]), B (16 x 16 = N x K) staged into an unswizzled K-major tile.
// Each iteration, after its wait, thread t echoes its first A register to
// Aecho[t].
// planted-wgmma.test edits it into bugs.
module attributes {gpu.container_module} {
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<1024 x i8>
    gpu.func @wgmma_rs(%Afrag: !llvm.ptr<1> {tile.name = "Afrag"}, %Af0: i32 {tile.name = "Afrag.d0"}, %Af1: i32 {tile.name = "Afrag.d1"},
                       %B: !llvm.ptr<1> {tile.name = "B"}, %Bd0: i32 {tile.name = "B.d0"}, %Bd1: i32 {tile.name = "B.d1"},
                       %D: !llvm.ptr<1> {tile.name = "D"}, %Dd0: i32 {tile.name = "D.d0"}, %Dd1: i32 {tile.name = "D.d1"},
                       %Aecho: !llvm.ptr<1> {tile.name = "Aecho"}, %Ae0: i32 {tile.name = "Aecho.d0"}) kernel
        attributes {known_block_size = array<i32: 128, 1, 1>, flashc.num_warps = 4 : i32,
                    flashc.shared_bytes = 1024 : i64,
                    flashc.params = [{name = "Afrag", kind = "tensor", element = i32, dims = ["128", "4"]},
                                     {name = "B", kind = "tensor", element = f16, dims = ["16", "16"]},
                                     {name = "D", kind = "tensor", element = f32, dims = ["64", "16"]},
                                     {name = "Aecho", kind = "tensor", element = i32, dims = ["128"]}]} {
      %tid = nvvm.read.ptx.sreg.tid.x : i32
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c2 = arith.constant 2 : i32
      %c4 = arith.constant 4 : i32
      %c8 = arith.constant 8 : i32
      %c16 = arith.constant 16 : i32
      %c32 = arith.constant 32 : i32
      %c256 = arith.constant 256 : i32
      %base = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      // B (N x K) into the unswizzled K-major tile at 0 (threads 0-31).
      %r = arith.divui %tid, %c2 : i32
      %h = arith.remui %tid, %c2 : i32
      %isB = arith.cmpi ult, %tid, %c32 : i32
      scf.if %isB {
        %r16 = arith.muli %r, %c16 : i32
        %h8 = arith.muli %h, %c8 : i32
        %src_i = arith.addi %r16, %h8 : i32
        %srcB = llvm.getelementptr %B[%src_i] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f16
        %vB = llvm.load %srcB {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
        %h256 = arith.muli %h, %c256 : i32
        %offB = arith.addi %h256, %r16 : i32
        %dstB = llvm.getelementptr %base[%offB] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
        llvm.store %vB, %dstB {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<3>
      }
      nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
      nvvm.barrier0
      // A from registers: thread t's 4 fragment registers, Afrag[t][0..3].
      %t4 = arith.muli %tid, %c4 : i32
      %srcA = llvm.getelementptr %Afrag[%t4] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %vA = llvm.load %srcA {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
      %a0 = vector.extract %vA[0] : i32 from vector<4xi32>
      %a1 = vector.extract %vA[1] : i32 from vector<4xi32>
      %a2 = vector.extract %vA[2] : i32 from vector<4xi32>
      %a3 = vector.extract %vA[3] : i32 from vector<4xi32>
      // B descriptor: start 0, none, LBO 256, SBO 128.
      %descB = arith.constant 34360786944 : i64
      %echo = llvm.getelementptr %Aecho[%tid] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, i32
      %zero = arith.constant 0.0 : f32
      %init0 = llvm.mlir.undef : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init1 = llvm.insertvalue %zero, %init0[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init2 = llvm.insertvalue %zero, %init1[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init3 = llvm.insertvalue %zero, %init2[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init4 = llvm.insertvalue %zero, %init3[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init5 = llvm.insertvalue %zero, %init4[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init6 = llvm.insertvalue %zero, %init5[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init7 = llvm.insertvalue %zero, %init6[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %init8 = llvm.insertvalue %zero, %init7[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %one = arith.constant 1 : i32
      %lb = arith.constant 0 : index
      %ub = arith.constant 2 : index
      %step = arith.constant 1 : index
      %d = scf.for %it = %lb to %ub step %step iter_args(%acc = %init8) -> (!llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>) {
        nvvm.wgmma.fence.aligned
        %in0 = llvm.extractvalue %acc[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %in1 = llvm.extractvalue %acc[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %in2 = llvm.extractvalue %acc[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %in3 = llvm.extractvalue %acc[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %in4 = llvm.extractvalue %acc[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %in5 = llvm.extractvalue %acc[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %in6 = llvm.extractvalue %acc[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %in7 = llvm.extractvalue %acc[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        %res = llvm.inline_asm has_side_effects asm_dialect = att "{ .reg .pred p; setp.ne.b32 p, $21, 0; wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7}, {$16, $17, $18, $19}, $20, p, 1, 1, 0; }", "=f,=f,=f,=f,=f,=f,=f,=f,0,1,2,3,4,5,6,7,r,r,r,r,l,r" %in0, %in1, %in2, %in3, %in4, %in5, %in6, %in7, %a0, %a1, %a2, %a3, %descB, %one : (f32, f32, f32, f32, f32, f32, f32, f32, i32, i32, i32, i32, i64, i32) -> !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
        nvvm.wgmma.commit.group.sync.aligned
        nvvm.wgmma.wait.group.sync.aligned 0
        llvm.store %a0, %echo : i32, !llvm.ptr<1>
        scf.yield %res : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      }
      nvvm.wgmma.wait.group.sync.aligned 0 // after the loop: lands nothing unless the loop left a group
      %w = arith.divui %tid, %c32 : i32
      %lane = arith.remui %tid, %c32 : i32
      %g = arith.divui %lane, %c4 : i32
      %q = arith.remui %tid, %c4 : i32
      %w16 = arith.muli %w, %c16 : i32
      %row0 = arith.addi %w16, %g : i32
      %q2 = arith.muli %q, %c2 : i32
      %rowN = arith.muli %row0, %c16 : i32
      %at0 = arith.addi %rowN, %q2 : i32
      %x0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o0 = arith.constant 0 : i32
      %at0x = arith.addi %at0, %o0 : i32
      %p0 = llvm.getelementptr %D[%at0x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x0, %p0 : f32, !llvm.ptr<1>
      %x1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o1 = arith.constant 1 : i32
      %at1x = arith.addi %at0, %o1 : i32
      %p1 = llvm.getelementptr %D[%at1x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x1, %p1 : f32, !llvm.ptr<1>
      %x2 = llvm.extractvalue %d[2] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o2 = arith.constant 128 : i32
      %at2x = arith.addi %at0, %o2 : i32
      %p2 = llvm.getelementptr %D[%at2x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x2, %p2 : f32, !llvm.ptr<1>
      %x3 = llvm.extractvalue %d[3] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o3 = arith.constant 129 : i32
      %at3x = arith.addi %at0, %o3 : i32
      %p3 = llvm.getelementptr %D[%at3x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x3, %p3 : f32, !llvm.ptr<1>
      %x4 = llvm.extractvalue %d[4] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o4 = arith.constant 8 : i32
      %at4x = arith.addi %at0, %o4 : i32
      %p4 = llvm.getelementptr %D[%at4x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x4, %p4 : f32, !llvm.ptr<1>
      %x5 = llvm.extractvalue %d[5] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o5 = arith.constant 9 : i32
      %at5x = arith.addi %at0, %o5 : i32
      %p5 = llvm.getelementptr %D[%at5x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x5, %p5 : f32, !llvm.ptr<1>
      %x6 = llvm.extractvalue %d[6] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o6 = arith.constant 136 : i32
      %at6x = arith.addi %at0, %o6 : i32
      %p6 = llvm.getelementptr %D[%at6x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x6, %p6 : f32, !llvm.ptr<1>
      %x7 = llvm.extractvalue %d[7] : !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>
      %o7 = arith.constant 137 : i32
      %at7x = arith.addi %at0, %o7 : i32
      %p7 = llvm.getelementptr %D[%at7x] : (!llvm.ptr<1>, i32) -> !llvm.ptr<1>, f32
      llvm.store %x7, %p7 : f32, !llvm.ptr<1>
      gpu.return
    }
  }
}
