// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s

// tile.mma on sm_90a (tile.wgmma on the module): the warpgroup layout with
// B read from shared memory lowers to wgmma.mma_async.

// RS form (Q in registers) with a K-major B (K stored N x K, 128-byte rows,
// 128B swizzle): per k16 step one inline-PTX wgmma m64n64k16 whose
// descriptor is the constant bits (LBO 16 B, SBO 1024 B, swizzle 128B, the
// k step's 32 bytes) plus the slot's address in 16-byte units; fence before,
// commit and wait 0 after. cp.async's wait is followed by a proxy fence.
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
!kbuf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-LABEL: gpu.func @rs_k_major
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: %[[ADDR:.*]] = llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i64
// CHECK: %[[MASKED:.*]] = arith.andi %[[ADDR]], %{{.*}} : i64
// CHECK: %[[UNITS:.*]] = arith.shrui %[[MASKED]], %{{.*}} : i64
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant 4611686293305360384 : i64
// CHECK: %[[D0:.*]] = arith.addi %{{.*}}, %[[UNITS]] : i64
// CHECK: llvm.inline_asm has_side_effects asm_dialect = att "{\0A.reg .pred p;\0Asetp.ne.b32 p, $69, 0;\0Awgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {$0, $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31}, {$64, $65, $66, $67}, $68, p, 1, 1, 0;\0A}\0A", "=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,=f,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,r,r,r,r,l,r" {{.*}}, %[[D0]], %{{.*}} : (f32, {{.*}}, i32, i32, i32, i32, i64, i32) -> !llvm.struct<(f32,
// CHECK: arith.constant 4611686293305360386 : i64
// CHECK: llvm.inline_asm
// CHECK: arith.constant 4611686293305360388 : i64
// CHECK: llvm.inline_asm
// CHECK: arith.constant 4611686293305360390 : i64
// CHECK: llvm.inline_asm
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK-NOT: nvvm.mma.sync
module attributes {tile.wgmma} {
func.func @rs_k_major(%Q: !tile.global<[64, 64], f16> {tile.name = "Q"},
                      %K: !tile.global<[64, 64], f16> {tile.name = "K"},
                      %O: !tile.global<[64, 64], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : i32
  %kbuf = tile.local_alloc {offset = 0 : i64} : !kbuf
  tile.async_copy %K[%c0, %c0] window [0, 1] into %kbuf[%c0] : !tile.global<[64, 64], f16> -> !kbuf
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #A>
  %k = tile.local_load %kbuf[%c0] : !kbuf -> tensor<64x64xf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x64xf16, #A>, tensor<64x64xf16, #BT> -> tensor<64x64xf32, #mma>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<64x64xf32, #mma> -> !tile.global<[64, 64], f32>
  return
}
}

// -----

// SS form: A read by a fused local_load too (K-major: SBO 1024 B), with an
// MN-major B (V stored K x N: trans-b; LBO 64 rows x 128 B, SBO 1024 B, each
// k16 step 16 rows further). Two warpgroups: 128 rows, each warpgroup's A
// descriptor 64 rows (64 x 128 bytes = 512 units) further on. A's slot and
// warpgroup units add into the descriptor's low word (LBO 16 B: 65536),
// and the high word (SBO 1024 B, swizzle 128B) is or'ed in as a constant:
// loop-invariant A descriptors then hold one register each, not a pair.
#mma = #tile.mma<warps = [8, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
!pbuf = !tile.shared<[1, 128, 64], f16, swizzle = [1, 8]>
!vbuf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-LABEL: gpu.func @ss_mn_major
// CHECK: arith.muli {{.*}} : i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[B0:.*]] = arith.addi %c4611686293338849280_i64, %{{.*}} : i64
// CHECK: %[[SLOT:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[LOW:.*]] = arith.addi %c65536_i32, %[[SLOT]] : i32
// CHECK: %[[GROUP:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[LOW2:.*]] = arith.addi %[[LOW]], %[[GROUP]] : i32
// CHECK: %[[WIDE:.*]] = arith.extui %[[LOW2]] : i32 to i64
// CHECK: %[[A0:.*]] = arith.ori %[[WIDE]], %c4611686293305294848_i64 : i64
// CHECK: nvvm.wgmma.mma_async %[[A0]], %[[B0]],
// CHECK-COUNT-3: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>] : !llvm.struct<(f32,
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 0
module attributes {tile.wgmma} {
func.func @ss_mn_major(%O: !tile.global<[128, 64], f32> {tile.name = "O"})
    attributes {tile.num_warps = 8 : i32, tile.shared_bytes = 32768 : i64} {
  %c0 = arith.constant 0 : i32
  %pbuf = tile.local_alloc {offset = 0 : i64} : !pbuf
  %vbuf = tile.local_alloc {offset = 16384 : i64} : !vbuf
  %p = tile.local_load %pbuf[%c0] : !pbuf -> tensor<128x64xf16, #A>
  %v = tile.local_load %vbuf[%c0] : !vbuf -> tensor<64x64xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %o = tile.mma %p, %v, %zero : tensor<128x64xf16, #A>, tensor<64x64xf16, #B> -> tensor<128x64xf32, #mma>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<128x64xf32, #mma> -> !tile.global<[128, 64], f32>
  return
}
}

// -----

// Rows of 256 bytes stored as two 128-byte column blocks (block_cols = 64).
// K-major B (K stored N x K): k16 steps 0-3 read block 0 (start 0, 32, 64,
// 96 bytes), steps 4-7 block 1, 64 rows x 128 bytes = 8192 bytes (512
// units) further. MN-major B (V stored K x N, N = 128 over both blocks):
// one m64n128k16 per k16 step, the second block LBO = 8192 bytes after the
// first (LBO units 512 at bit 16), each step 16 rows x 128 bytes further.
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
!blocked = !tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
// CHECK-LABEL: gpu.func @blocked_k_major
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant 4611686293305360384 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: arith.constant 4611686293305360386 : i64
// CHECK: arith.constant 4611686293305360388 : i64
// CHECK: arith.constant 4611686293305360390 : i64
// CHECK: arith.constant 4611686293305360896 : i64
// CHECK: arith.constant 4611686293305360898 : i64
// CHECK: arith.constant 4611686293305360900 : i64
// CHECK: arith.constant 4611686293305360902 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-LABEL: gpu.func @blocked_mn_major
// CHECK: arith.constant 4611686293338849280 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK: arith.constant 4611686293338849408 : i64
// CHECK: arith.constant 4611686293338849536 : i64
// CHECK: arith.constant 4611686293338849664 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK-NOT: nvvm.mma.sync
module attributes {tile.wgmma} {
func.func @blocked_k_major(%Q: !tile.global<[64, 128], f16> {tile.name = "Q"},
                           %O: !tile.global<[64, 64], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 16384 : i64} {
  %c0 = arith.constant 0 : i32
  %kbuf = tile.local_alloc {offset = 0 : i64} : !blocked
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 128], f16> -> tensor<64x128xf16, #A>
  %k = tile.local_load %kbuf[%c0] : !blocked -> tensor<64x128xf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x128xf16, #A>, tensor<64x128xf16, #BT> -> tensor<64x64xf32, #mma>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<64x64xf32, #mma> -> !tile.global<[64, 64], f32>
  return
}
func.func @blocked_mn_major(%P: !tile.global<[64, 64], f16> {tile.name = "P"},
                            %O: !tile.global<[64, 128], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 16384 : i64} {
  %c0 = arith.constant 0 : i32
  %vbuf = tile.local_alloc {offset = 0 : i64} : !blocked
  %p = tile.load %P[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #A>
  %v = tile.local_load %vbuf[%c0] : !blocked -> tensor<64x128xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32, #mma>
  %o = tile.mma %p, %v, %zero : tensor<64x64xf16, #A>, tensor<64x128xf16, #B> -> tensor<64x128xf32, #mma>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<64x128xf32, #mma> -> !tile.global<[64, 128], f32>
  return
}
}

// -----

// Rows of 192 bytes (96 f16) stored as three 64-byte column blocks
// (block_cols = 32, swizzle [2, 4]: the 64B mode, layout code 2 at bits
// 62-63). K-major B (K stored N x K): two k16 steps per block (start 0 and
// 32 bytes into it), the blocks 64 rows x 64 bytes = 4096 bytes (256 units)
// apart; LBO 16 bytes (unused), SBO 8 rows x 64 bytes = 512 (32 units).
// MN-major B (V stored K x N, N = 96 over the three blocks): one
// m64n96k16 per k16 step, LBO = 4096 bytes from block to block (256 units
// at bit 16), SBO 512, each step 16 rows x 64 bytes = 1024 bytes further.
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
!blocked64 = !tile.shared<[1, 64, 96], f16, swizzle = [2, 4], block_cols = 32>
// CHECK-LABEL: gpu.func @blocked64_k_major
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant -9223371899415756800 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: arith.constant -9223371899415756798 : i64
// CHECK: arith.constant -9223371899415756544 : i64
// CHECK: arith.constant -9223371899415756542 : i64
// CHECK: arith.constant -9223371899415756288 : i64
// CHECK: arith.constant -9223371899415756286 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-LABEL: gpu.func @blocked64_mn_major
// CHECK: arith.constant -9223371899399045120 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK: arith.constant -9223371899399045056 : i64
// CHECK: arith.constant -9223371899399044992 : i64
// CHECK: arith.constant -9223371899399044928 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n96k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK-NOT: nvvm.mma.sync
module attributes {tile.wgmma} {
func.func @blocked64_k_major(%Q: !tile.global<[64, 96], f16> {tile.name = "Q"},
                             %O: !tile.global<[64, 64], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 12288 : i64} {
  %c0 = arith.constant 0 : i32
  %kbuf = tile.local_alloc {offset = 0 : i64} : !blocked64
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 96], f16> -> tensor<64x96xf16, #A>
  %k = tile.local_load %kbuf[%c0] : !blocked64 -> tensor<64x96xf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x96xf16, #A>, tensor<64x96xf16, #BT> -> tensor<64x64xf32, #mma>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<64x64xf32, #mma> -> !tile.global<[64, 64], f32>
  return
}
func.func @blocked64_mn_major(%P: !tile.global<[64, 64], f16> {tile.name = "P"},
                              %O: !tile.global<[64, 96], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 12288 : i64} {
  %c0 = arith.constant 0 : i32
  %vbuf = tile.local_alloc {offset = 0 : i64} : !blocked64
  %p = tile.load %P[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #A>
  %v = tile.local_load %vbuf[%c0] : !blocked64 -> tensor<64x96xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<64x96xf32, #mma>
  %o = tile.mma %p, %v, %zero : tensor<64x64xf16, #A>, tensor<64x96xf16, #B> -> tensor<64x96xf32, #mma>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<64x96xf32, #mma> -> !tile.global<[64, 96], f32>
  return
}
}

// -----

// Rows of 160 bytes (80 f16) stored as five 32-byte column blocks
// (block_cols = 16, swizzle [4, 2]: the 32B mode, layout code 3). K-major
// B: each k16 step is one block, 64 rows x 32 bytes = 2048 bytes (128
// units) after the previous; SBO 8 rows x 32 bytes = 256 (16 units).
// MN-major B (N = 80 over the five blocks): one m64n80k16 per k16 step,
// LBO 2048 bytes (128 units at bit 16), each step 16 x 32 = 512 bytes on.
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
!blocked32 = !tile.shared<[1, 64, 80], f16, swizzle = [4, 2], block_cols = 16>
// CHECK-LABEL: gpu.func @blocked32_k_major
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.constant -4611685949707845632 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16
// CHECK: arith.constant -4611685949707845504 : i64
// CHECK: arith.constant -4611685949707845376 : i64
// CHECK: arith.constant -4611685949707845248 : i64
// CHECK: arith.constant -4611685949707845120 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0;
// CHECK-NOT: wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-LABEL: gpu.func @blocked32_mn_major
// CHECK: arith.constant -4611685949699522560 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n80k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK: arith.constant -4611685949699522528 : i64
// CHECK: arith.constant -4611685949699522496 : i64
// CHECK: arith.constant -4611685949699522464 : i64
// CHECK: wgmma.mma_async.sync.aligned.m64n80k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK-NOT: nvvm.mma.sync
module attributes {tile.wgmma} {
func.func @blocked32_k_major(%Q: !tile.global<[64, 80], f16> {tile.name = "Q"},
                             %O: !tile.global<[64, 64], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 10240 : i64} {
  %c0 = arith.constant 0 : i32
  %kbuf = tile.local_alloc {offset = 0 : i64} : !blocked32
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 80], f16> -> tensor<64x80xf16, #A>
  %k = tile.local_load %kbuf[%c0] : !blocked32 -> tensor<64x80xf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x80xf16, #A>, tensor<64x80xf16, #BT> -> tensor<64x64xf32, #mma>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<64x64xf32, #mma> -> !tile.global<[64, 64], f32>
  return
}
func.func @blocked32_mn_major(%P: !tile.global<[64, 64], f16> {tile.name = "P"},
                              %O: !tile.global<[64, 80], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 10240 : i64} {
  %c0 = arith.constant 0 : i32
  %vbuf = tile.local_alloc {offset = 0 : i64} : !blocked32
  %p = tile.load %P[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #A>
  %v = tile.local_load %vbuf[%c0] : !blocked32 -> tensor<64x80xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<64x80xf32, #mma>
  %o = tile.mma %p, %v, %zero : tensor<64x64xf16, #A>, tensor<64x80xf16, #B> -> tensor<64x80xf32, #mma>
  tile.store %o, %O[%c0, %c0] window [0, 1] : tensor<64x80xf32, #mma> -> !tile.global<[64, 80], f32>
  return
}
}

// -----

// What wgmma cannot take stays mma.sync on sm_90a: B loaded from global
// memory, and rows of 256 bytes stored row-major (not one swizzle span, no
// column blocks). Without tile.wgmma the warpgroup-shaped layout is plain
// mma.sync.
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
!wide = !tile.shared<[1, 128, 128], f16, swizzle = [1, 8]>
// CHECK-LABEL: gpu.func @b_from_global
// CHECK-NOT: wgmma
// CHECK: nvvm.mma.sync
// CHECK-LABEL: gpu.func @wide_rows
// CHECK-NOT: wgmma
// CHECK: nvvm.mma.sync
module attributes {tile.wgmma} {
func.func @b_from_global(%A: !tile.global<[64, 64], f16> {tile.name = "A"},
                         %B: !tile.global<[64, 64], f16> {tile.name = "B"},
                         %C: !tile.global<[64, 64], f32> {tile.name = "C"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #A>
  %b = tile.load %B[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #mma>
  %c = tile.mma %a, %b, %zero : tensor<64x64xf16, #A>, tensor<64x64xf16, #B> -> tensor<64x64xf32, #mma>
  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<64x64xf32, #mma> -> !tile.global<[64, 64], f32>
  return
}
func.func @wide_rows(%A: !tile.global<[64, 128], f16> {tile.name = "A"},
                     %C: !tile.global<[64, 128], f32> {tile.name = "C"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 32768 : i64} {
  %c0 = arith.constant 0 : i32
  %buf = tile.local_alloc {offset = 0 : i64} : !wide
  %a = tile.load %A[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 128], f16> -> tensor<64x128xf16, #A>
  %b = tile.local_load %buf[%c0] : !wide -> tensor<128x128xf16, #B>
  %zero = arith.constant dense<0.0> : tensor<64x128xf32, #mma>
  %c = tile.mma %a, %b, %zero : tensor<64x128xf16, #A>, tensor<128x128xf16, #B> -> tensor<64x128xf32, #mma>
  tile.store %c, %C[%c0, %c0] window [0, 1] : tensor<64x128xf32, #mma> -> !tile.global<[64, 128], f32>
  return
}
}

// -----

// RS form with a zero accumulator over two 64-row repeats of one warpgroup
// (128 rows on 4 warps, the scores of a 4-warp 128-row tile): repeat 1's
// first k step takes scale-d 0 and undefined inputs, so that no moves of
// the zero into its tied inputs follow repeat 0's wgmmas (ptxas would
// inject warpgroup.arrive / wait there, C7519 / C7517); repeat 0 and the
// later k steps accumulate (scale-d 1).
#mma = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#BT = #tile.dot_op<1, #mma, transposed = true>
!kbuf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
// CHECK-LABEL: gpu.func @rs_zero_two_repeats
// CHECK: %[[UNDEF:.*]] = llvm.mlir.undef : f32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-COUNT-4: llvm.inline_asm {{.*}}, %[[ONE]] : (f32,
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK: llvm.inline_asm {{.*}} %[[UNDEF]], %[[UNDEF]], {{.*}}, %[[ZERO]] : (f32,
// CHECK-COUNT-3: llvm.inline_asm {{.*}}, %[[ONE]] : (f32,
// CHECK-NOT: llvm.inline_asm
// CHECK: nvvm.wgmma.commit.group.sync.aligned
module attributes {tile.wgmma} {
func.func @rs_zero_two_repeats(%Q: !tile.global<[128, 64], f16> {tile.name = "Q"},
                               %K: !tile.global<[64, 64], f16> {tile.name = "K"},
                               %O: !tile.global<[128, 64], f32> {tile.name = "O"})
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 8192 : i64} {
  %c0 = arith.constant 0 : i32
  %kbuf = tile.local_alloc {offset = 0 : i64} : !kbuf
  tile.async_copy %K[%c0, %c0] window [0, 1] into %kbuf[%c0] : !tile.global<[64, 64], f16> -> !kbuf
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[128, 64], f16> -> tensor<128x64xf16, #A>
  %k = tile.local_load %kbuf[%c0] : !kbuf -> tensor<64x64xf16, #BT>
  %zero = arith.constant dense<0.0> : tensor<128x64xf32, #mma>
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<128x64xf16, #A>, tensor<64x64xf16, #BT> -> tensor<128x64xf32, #mma>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<128x64xf32, #mma> -> !tile.global<[128, 64], f32>
  return
}
}
