// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-allocate-shared))' -verify-diagnostics

func.func private @sink(!tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>)

func.func @escapes() {
  %a = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  // expected-error @below {{tile-allocate-shared: a shared buffer may only be used by tile.async_copy and tile.local_load, not by 'func.call' (its live range would be unknown)}}
  func.call @sink(%a) : (!tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>) -> ()
  return
}

// -----

// expected-error @below {{tile-allocate-shared: the live ranges of shared buffers are computed over one block; this function's body has 2}}
func.func @two_blocks() {
  %a = tile.local_alloc : !tile.shared<[1, 16, 64], f16, swizzle = [1, 8]>
  llvm.br ^next
^next:
  return
}
