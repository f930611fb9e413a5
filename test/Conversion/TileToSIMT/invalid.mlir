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
