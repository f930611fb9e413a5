// tile-allocate-shared with max-shared-bytes (what flashc passes for its
// arch): a kernel whose buffers need more is rejected at the kernel, a note
// at each buffer; one that fits (or no limit) passes.
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-allocate-shared{max-shared-bytes=4096 arch=sm_80}))' -verify-diagnostics
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-allocate-shared{max-shared-bytes=8192 arch=sm_80}))' | FileCheck %s --check-prefix=FITS
// RUN: flash-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(tile-allocate-shared))' | FileCheck %s --check-prefix=FITS

// Two live 2-slot buffers of 16 x 64 f16 (2 KiB a slot): 8192 bytes.
// FITS-LABEL: func.func @too_big
// FITS: tile.shared_bytes = 8192
// expected-error @below {{the kernels need 8192 bytes of shared memory per CTA, more than the 4096 that sm_80 allows}}
func.func @too_big(%K: !tile.global<[N, 64], f16>, %i: i32) {
  // expected-note @below {{staged in shared memory as '!tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>'}}
  %k = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  // expected-note @below {{staged in shared memory as '!tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>'}}
  %v = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  %c0 = arith.constant 0 : i32
  tile.async_copy %K[%i, %c0] window [0, 1] into %k[%c0] : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_copy %K[%i, %c0] window [0, 1] into %v[%c0] : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  tile.barrier
  return
}

// -----

// One 2-slot buffer: 4096 bytes, exactly the limit.
// FITS-LABEL: func.func @fits
// FITS: tile.shared_bytes = 4096
func.func @fits(%K: !tile.global<[N, 64], f16>, %i: i32) {
  %k = tile.local_alloc : !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  %c0 = arith.constant 0 : i32
  tile.async_copy %K[%i, %c0] window [0, 1] into %k[%c0] : !tile.global<[N, 64], f16> -> !tile.shared<[2, 16, 64], f16, swizzle = [1, 8]>
  tile.async_commit
  tile.async_wait 0
  return
}
