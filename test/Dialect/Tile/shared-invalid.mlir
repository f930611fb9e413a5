// RUN: flash-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{shared buffer element type must be f16, bf16 or f8E4M3FN, got 'f32'}}
func.func private @f32_buffer(!tile.shared<[1, 64, 64], f32>)

// -----

// expected-error @below {{shared buffer shape must be [slots, rows, cols], got rank 2}}
func.func private @rank2(!tile.shared<[64, 64], f16>)

// -----

// expected-error @below {{shared buffer rows must be whole 16-byte chunks, got 24 bytes}}
func.func private @partial_chunk(!tile.shared<[1, 64, 12], f16>)

// -----

// expected-error @below {{swizzle per_phase and max_phase must be powers of two, got [1, 6]}}
func.func private @odd_phase(!tile.shared<[1, 64, 64], f16, swizzle = [1, 6]>)

// -----

// expected-error @below {{swizzle max_phase 8 exceeds the 4 chunks of a row}}
func.func private @wide_phase(!tile.shared<[1, 64, 32], f16, swizzle = [1, 8]>)

// -----

// expected-error @below {{shared buffer dims must be positive}}
func.func private @empty(!tile.shared<[0, 64, 64], f16>)

// -----

func.func @misaligned_offset() {
  // expected-error @below {{offset must be a multiple of 16 bytes, got 8}}
  %0 = tile.local_alloc {offset = 8 : i64} : !tile.shared<[1, 16, 16], f16>
  return
}

// -----

func.func @partial_rows(%K: !tile.global<[N, 128], f16>, %i: i32) {
  %buf = tile.local_alloc : !tile.shared<[1, 64, 64], f16>
  // expected-error @below {{copies whole rows: the window's last dim must be the global tensor's last dim, static and equal to the buffer's 64 columns}}
  tile.async_copy %K[%i, %i] window [0, 1] into %buf[%i] : !tile.global<[N, 128], f16> -> !tile.shared<[1, 64, 64], f16>
  return
}

// -----

func.func @element_mismatch(%K: !tile.global<[N, 64], bf16>, %i: i32) {
  %buf = tile.local_alloc : !tile.shared<[1, 64, 64], f16>
  // expected-error @below {{tile element type 'f16' does not match the global tensor's 'bf16'}}
  tile.async_copy %K[%i, %i] window [0, 1] into %buf[%i] : !tile.global<[N, 64], bf16> -> !tile.shared<[1, 64, 64], f16>
  return
}

// -----

func.func @copy_offsets(%K: !tile.global<[B, N, 64], f16>, %i: i32) {
  %buf = tile.local_alloc : !tile.shared<[1, 64, 64], f16>
  // expected-error @below {{expects 3 offsets (one per dim of the global tensor), got 2}}
  tile.async_copy %K[%i, %i] window [1, 2] into %buf[%i] : !tile.global<[B, N, 64], f16> -> !tile.shared<[1, 64, 64], f16>
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
func.func @load_shape(%i: i32) {
  %buf = tile.local_alloc : !tile.shared<[2, 64, 64], f16>
  // expected-error @below {{result shape must be [64, 64], got [64, 32]}}
  %0 = tile.local_load %buf[%i] : !tile.shared<[2, 64, 64], f16> -> tensor<64x32xf16, #dot_b>
  return
}

// -----

func.func @load_layout(%i: i32) {
  %buf = tile.local_alloc : !tile.shared<[1, 64, 64], f16>
  // expected-error @below {{result needs a layout (local_load exists after layout assignment)}}
  %0 = tile.local_load %buf[%i] : !tile.shared<[1, 64, 64], f16> -> tensor<64x64xf16>
  return
}

// -----

#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#dot_b = #tile.dot_op<1, #mma>
func.func @load_element(%i: i32) {
  %buf = tile.local_alloc : !tile.shared<[1, 64, 64], bf16>
  // expected-error @below {{result element type 'f16' differs from the buffer's 'bf16'}}
  %0 = tile.local_load %buf[%i] : !tile.shared<[1, 64, 64], bf16> -> tensor<64x64xf16, #dot_b>
  return
}

// -----

func.func @copy_gather_rows(%K: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<32xi32>) {
  %buf = tile.local_alloc : !tile.shared<[1, 64, 64], f16>
  // expected-error @below {{index tile 0 must be a 1-D tile of i32 with one element per gathered row (64), got 'tensor<32xi32>'}}
  tile.async_copy %K[%i, %i, %i] window [2] gather [0] (%rows : tensor<32xi32>) into %buf[%i] : !tile.global<[P, 16, 64], f16> -> !tile.shared<[1, 64, 64], f16>
  return
}

// -----

func.func @copy_gather_window(%K: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<64xi32>) {
  %buf = tile.local_alloc : !tile.shared<[1, 64, 64], f16>
  // expected-error @below {{window names 2 dims plus the gathered rows but the tile has rank 2}}
  tile.async_copy %K[%i, %i, %i] window [1, 2] gather [0] (%rows : tensor<64xi32>) into %buf[%i] : !tile.global<[P, 16, 64], f16> -> !tile.shared<[1, 64, 64], f16>
  return
}

// -----

// expected-error @below {{block_cols 128 must divide the 128 columns into two or more blocks}}
func.func private @one_block(!tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 128>)

// -----

// expected-error @below {{block_cols 48 must divide the 128 columns into two or more blocks}}
func.func private @uneven_blocks(!tile.shared<[1, 64, 128], f16, block_cols = 48>)

// -----

// expected-error @below {{column blocks must be whole 16-byte chunks, got 8 bytes}}
func.func private @partial_block(!tile.shared<[1, 64, 128], f16, block_cols = 4>)

// -----

// expected-error @below {{swizzle max_phase 8 exceeds the 4 chunks of a column block's row}}
func.func private @wide_block_phase(!tile.shared<[1, 64, 128], f16, swizzle = [1, 8], block_cols = 32>)

// -----

// expected-error @below {{swizzle max_phase 4 does not divide the 6 chunks of a column block's row}}
func.func private @uneven_block_phase(!tile.shared<[1, 64, 144], f16, swizzle = [1, 4], block_cols = 48>)

// -----

// expected-error @below {{block_cols must not be negative, got -64}}
func.func private @negative_blocks(!tile.shared<[1, 64, 128], f16, block_cols = -64>)

// -----

// expected-error @below {{block_cols must be positive (omit it for one block)}}
func.func private @zero_blocks(!tile.shared<[1, 64, 128], f16, block_cols = 0>)

// -----

// expected-error @below {{expected 'swizzle' then 'block_cols', each once, got 'swizzle'}}
func.func private @swizzle_after_blocks(!tile.shared<[1, 64, 128], f16, block_cols = 64, swizzle = [1, 8]>)

// -----

// f8E4M3FN rows count bytes: 8 elements are half a chunk.
// expected-error @below {{shared buffer rows must be whole 16-byte chunks, got 8 bytes}}
func.func private @f8_partial_chunk(!tile.shared<[1, 64, 8], f8E4M3FN>)
