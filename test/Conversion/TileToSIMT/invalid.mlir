// RUN: flash-opt %s --split-input-file --convert-tile-to-simt -verify-diagnostics

// Tiles without a layout: the layout assignment has not run.
func.func @no_layout(%X: !tile.global<[16, 16], f32> {tile.name = "X"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  // expected-error@+1 {{'tile.load' op has a tile without a layout encoding: run tile-assign-layouts first}}
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[16, 16], f32> -> tensor<16x16xf32>
  tile.store %x, %X[%c0, %c0] window [0, 1] : tensor<16x16xf32> -> !tile.global<[16, 16], f32>
  return
}

// -----

// transpose_b needs B in the transposed operand layout.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
func.func @mma_transpose_mismatch(%a: tensor<16x16xf16, #A>, %b: tensor<16x16xf16, #B>,
                                  %c: tensor<16x16xf32, #mma>)
    attributes {tile.num_warps = 1 : i32} {
  // expected-error@+2 {{'tile.mma' op transpose_b requires operand B in the transposed dot_op layout and vice versa, got #tile.dot_op<1,}}
  // expected-error@+1 {{failed to legalize operation 'tile.mma'}}
  %d = tile.mma %a, %b, %c {transpose_b} : tensor<16x16xf16, #A>, tensor<16x16xf16, #B> -> tensor<16x16xf32, #mma>
  return
}

// -----

// Operands must be the dot_op layouts of the accumulator's #tile.mma.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [16, 2], warpsPerCTA = [1, 1], order = [1, 0]>
#B = #tile.dot_op<1, #mma>
func.func @mma_operand_layout(%a: tensor<16x16xf16, #blocked>, %b: tensor<16x8xf16, #B>,
                              %c: tensor<16x8xf32, #mma>)
    attributes {tile.num_warps = 1 : i32} {
  // expected-error@+2 {{'tile.mma' op operand A layout must be #tile.dot_op<0, #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>>, got #tile.blocked}}
  // expected-error@+1 {{failed to legalize operation 'tile.mma'}}
  %d = tile.mma %a, %b, %c : tensor<16x16xf16, #blocked>, tensor<16x8xf16, #B> -> tensor<16x8xf32, #mma>
  return
}

// -----

// Shared buffers are placed by tile-allocate-shared.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
!buf = !tile.shared<[1, 16, 16], f16>
func.func @buffer_without_offset(%X: !tile.global<[16, 16], f16> {tile.name = "X"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  // expected-error@+1 {{'tile.local_alloc' op has no offset: run tile-allocate-shared before convert-tile-to-simt}}
  %b = tile.local_alloc : !buf
  tile.async_copy %X[%c0, %c0] window [0, 1] into %b[%c0] : !tile.global<[16, 16], f16> -> !buf
  return
}

// -----

// cp.async copies whole 16-byte chunks of whole rows: the window starts at
// column 0.
!buf = !tile.shared<[1, 16, 16], f16>
func.func @copy_column_offset(%X: !tile.global<[16, 16], f16> {tile.name = "X"}, %col: i32 {tile.name = "col"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %b = tile.local_alloc {offset = 0 : i64} : !buf
  // expected-error@+1 {{'tile.async_copy' op copies whole rows: its offset along the last dim must be the constant 0}}
  tile.async_copy %X[%c0, %col] window [0, 1] into %b[%c0] : !tile.global<[16, 16], f16> -> !buf
  return
}

// -----

// A gathered copy takes its chunk distribution from its index tiles'
// layout: it must be the slice of a blocked layout along dim 1.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
!buf = !tile.shared<[1, 16, 16], f16>
func.func @copy_gather_layout(%X: !tile.global<[N, 16], f16> {tile.name = "X"},
                              %rows: tensor<16xi32, #tile.slice<1, #mma>>)
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %b = tile.local_alloc {offset = 0 : i64} : !buf
  // expected-error@+2 {{'tile.async_copy' op index tiles must share one #tile.slice<1, #tile.blocked<...>> layout (the chunks each thread copies)}}
  // expected-error@+1 {{failed to legalize operation 'tile.async_copy'}}
  tile.async_copy %X[%c0, %c0] window [1] gather [0] (%rows : tensor<16xi32, #tile.slice<1, #mma>>) into %b[%c0] : !tile.global<[N, 16], f16> -> !buf
  return
}

// -----

// ... which holds every chunk once: 16 rows of 2 chunks cannot take 2 warps
// of 16 rows each (the chunks would be copied twice).
#chunks = #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [2, 1], order = [1, 0]>
!buf = !tile.shared<[1, 16, 16], f16>
func.func @copy_gather_twice(%X: !tile.global<[N, 16], f16> {tile.name = "X"},
                             %rows: tensor<16xi32, #tile.slice<1, #chunks>>)
    attributes {tile.num_warps = 2 : i32} {
  %c0 = arith.constant 0 : i32
  %b = tile.local_alloc {offset = 0 : i64} : !buf
  // expected-error@+2 {{'tile.async_copy' op the index tiles' layout #tile.blocked<sizePerThread = [1, 1], threadsPerWarp = [16, 2], warpsPerCTA = [2, 1], order = [1, 0]> must spread the 16 x 2 chunks of the slot over the 2 warps, each chunk once}}
  // expected-error@+1 {{failed to legalize operation 'tile.async_copy'}}
  tile.async_copy %X[%c0, %c0] window [1] gather [0] (%rows : tensor<16xi32, #tile.slice<1, #chunks>>) into %b[%c0] : !tile.global<[N, 16], f16> -> !buf
  return
}

// -----

// A gathered load reads each register's row index from a register of the
// same thread: the index tile's layout must hold those rows.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]>
#other = #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]>
func.func @gather_index_layout(%X: !tile.global<[N, 16], f32> {tile.name = "X"},
                               %Y: !tile.global<[32, 16], f32> {tile.name = "Y"},
                               %rows: tensor<32xi32, #other>)
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  // expected-error@+2 {{'tile.load' op index tile layout #tile.blocked<sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [1], order = [0]> does not give every thread the rows it loads in #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [8, 4], warpsPerCTA = [1, 1], order = [1, 0]>}}
  // expected-error@+1 {{failed to legalize operation 'tile.load'}}
  %x = tile.load %X[%c0, %c0] window [1] gather [0] (%rows : tensor<32xi32, #other>) pad 0.0 : f32 : !tile.global<[N, 16], f32> -> tensor<32x16xf32, #blocked>
  tile.store %x, %Y[%c0, %c0] window [0, 1] : tensor<32x16xf32, #blocked> -> !tile.global<[32, 16], f32>
  return
}

// -----

// Layout IR skips tile-check-resources: a layout that pads a tile to
// thousands of registers per thread is refused before the conversion
// unrolls it (it ran for minutes).
#huge = #tile.mma<warps = [1, 1, 1], values = [256, 1, 1]>
// expected-error@+1 {{'func.func' op has a tile of type 'tensor<128x64xf32, #tile.mma<warps = [1, 1, 1], values = [256, 1, 1]>>' whose layout gives each thread 8192 registers, more than the 1024 a tile may take}}
func.func @huge_values(%acc: tensor<128x64xf32, #huge>)
    attributes {tile.num_warps = 1 : i32} {
  return
}

// -----

// More warps than the kernel has (it aborted out of memory at 2^30).
#wide = #tile.mma<warps = [1073741824, 1, 1], values = [1, 1, 1]>
// expected-error@+1 {{'func.func' op has a tile of type 'tensor<16x8xf32, #tile.mma<warps = [1073741824, 1, 1], values = [1, 1, 1]>>' whose layout spreads it over 1073741824 warps, but the kernel has 4 (tile.num_warps)}}
func.func @too_many_warps(%acc: tensor<16x8xf32, #wide>)
    attributes {tile.num_warps = 4 : i32} {
  return
}

// -----

// A wgmma descriptor takes base offset 0: the 128B swizzle pattern of K's
// buffer must start on a 1024-byte boundary, and offset 512 does not.
#wg = #tile.mma<warps = [4, 1, 1], values = [1, 1, 1]>
#wg_a = #tile.dot_op<0, #wg>
#wg_bt = #tile.dot_op<1, #wg, transposed = true>
!kbuf = !tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>
module attributes {tile.wgmma} {
func.func @wgmma_misaligned_operand(%Q: !tile.global<[64, 64], f16>, %K: !tile.global<[64, 64], f16>,
                                    %O: !tile.global<[64, 64], f32>)
    attributes {tile.num_warps = 4 : i32, tile.shared_bytes = 8704 : i64} {
  %c0 = arith.constant 0 : i32
  // expected-note@+1 {{buffer allocated here at offset 512}}
  %kbuf = tile.local_alloc {offset = 512 : i64} : !kbuf
  tile.async_copy %K[%c0, %c0] window [0, 1] into %kbuf[%c0] : !tile.global<[64, 64], f16> -> !kbuf
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  %q = tile.load %Q[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[64, 64], f16> -> tensor<64x64xf16, #wg_a>
  %k = tile.local_load %kbuf[%c0] : !kbuf -> tensor<64x64xf16, #wg_bt>
  %zero = arith.constant dense<0.0> : tensor<64x64xf32, #wg>
  // expected-error@+1 {{'tile.mma' op reads shared buffer '!tile.shared<[1, 64, 64], f16, swizzle = [1, 8]>' through a wgmma descriptor at byte 512, which is not aligned to the 1024 bytes its 128B swizzle pattern needs (descriptors take base offset 0)}}
  %s = tile.mma %q, %k, %zero {transpose_b} : tensor<64x64xf16, #wg_a>, tensor<64x64xf16, #wg_bt> -> tensor<64x64xf32, #wg>
  tile.store %s, %O[%c0, %c0] window [0, 1] : tensor<64x64xf32, #wg> -> !tile.global<[64, 64], f32>
  return
}
}
