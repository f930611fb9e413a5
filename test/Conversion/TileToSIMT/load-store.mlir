// RUN: flash-opt %s --split-input-file --convert-tile-to-simt --cse | FileCheck %s
// RUN: flash-opt %s --split-input-file --convert-tile-to-simt | FileCheck %s --check-prefix=NOTILE

// NOTILE-NOT: tile.load
// NOTILE-NOT: tile.mma
// NOTILE-NOT: tensor<

// Global loads and stores: bounds, vectors, single writers.

// Masked loads and stores: a window that can hang over a dim checks
// 0 <= index < dim for it, loads give the pad when out of bounds, stores
// write nothing; the 8 contiguous f16 per thread of a blocked layout move as
// 16-byte vectors; the 1-D slice held by several lanes is stored once
// (a lane-mask predicate).
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #blocked>
// CHECK-LABEL: gpu.func @masked
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr<1> {tile.name = "X"}, %[[N:.*]]: i32 {tile.name = "X.d0"}, %{{.*}}: i32 {tile.name = "X.d1"}, %[[Y:.*]]: !llvm.ptr<1>
// The thread's address is computed once; the column window [0, 64) lies
// inside the static dim, so only rows are checked.
// CHECK: %[[PTR:.*]] = llvm.getelementptr %[[X]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
// CHECK-NOT: %c64_i32 : i32
// CHECK: arith.cmpi sge, %[[ROW:.*]], %c0_i32 : i32
// CHECK: arith.cmpi slt, %[[ROW]], %[[N]] : i32
// CHECK: %[[IN:.*]] = arith.andi
// CHECK: scf.if %[[IN]] -> (vector<8xf16>) {
// CHECK:   %[[V:.*]] = llvm.load %[[PTR]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<8xf16>
// CHECK:   scf.yield %[[V]] : vector<8xf16>
// CHECK: } else {
// CHECK:   scf.yield %{{.*}} : vector<8xf16>
// CHECK: }
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xf16>, !llvm.ptr<1>
// CHECK: }
// Row maxima: the lanes of a row hold copies; only the first writes.
// CHECK: nvvm.shfl.sync bfly
// CHECK: arith.shrui %c16843009_i32, %{{.*}} : i32
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
func.func @masked(%X: !tile.global<[N, 64], f16> {tile.name = "X"},
                  %Y: !tile.global<[N, 64], f16> {tile.name = "Y"},
                  %M: !tile.global<[N], f32> {tile.name = "M"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %pid = tile.program_id 0 : i32
  %r0 = arith.muli %pid, %c16 : i32
  %x = tile.load %X[%r0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<16x64xf16, #blocked>
  tile.store %x, %Y[%r0, %c0] window [0, 1] : tensor<16x64xf16, #blocked> -> !tile.global<[N, 64], f16>
  %x32 = arith.extf %x : tensor<16x64xf16, #blocked> to tensor<16x64xf32, #blocked>
  %m = tile.reduce max %x32 axis = 1 : tensor<16x64xf32, #blocked> -> tensor<16xf32, #rows>
  tile.store %m, %M[%r0] window [0] : tensor<16xf32, #rows> -> !tile.global<[N], f32>
  return
}

// -----

// Rows [i, i + 16) of a loop whose upper bound is (N / 16) * 16 of X's dim
// and whose step is 16 never leave X, nor Y, whose dim has the same symbol N
// (equal at launch): no row checks in the first loop, but for Z, whose rows
// are M. The second loop runs to N itself: its last block may hang over, so
// rows are checked. The batch index is checked once per tile, not per
// register.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @proven_in_bounds
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr<1> {tile.name = "X"}, %[[B:.*]]: i32 {tile.name = "X.d0"}, %[[N:.*]]: i32 {tile.name = "X.d1"}
// CHECK-SAME: %[[YN:[a-z0-9]*]]: i32 {tile.name = "Y.d1"}
// CHECK-SAME: %[[ZM:[a-z0-9]*]]: i32 {tile.name = "Z.d1"}
// CHECK: scf.for
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[YN]]
// CHECK: scf.if %{{.*}} -> (vector<16xf32>)
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[YN]]
// CHECK: arith.cmpi slt, %{{.*}}, %[[ZM]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[YN]]
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.*}}, %[[N]]
func.func @proven_in_bounds(%X: !tile.global<[B, N, 32], f32> {tile.name = "X"},
                            %Y: !tile.global<[B, N, 32], f32> {tile.name = "Y"},
                            %Z: !tile.global<[B, M, 32], f32> {tile.name = "Z"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %b = tile.program_id 0 : i32
  %n = tile.dim %X[1] : !tile.global<[B, N, 32], f32>
  %blocks = arith.divsi %n, %c16 : i32
  %full = arith.muli %blocks, %c16 : i32
  scf.for %i = %c0 to %full step %c16 : i32 {
    %x = tile.load %X[%b, %i, %c0] window [1, 2] pad 0.0 : f32 : !tile.global<[B, N, 32], f32> -> tensor<16x32xf32, #blocked>
    tile.store %x, %Y[%b, %i, %c0] window [1, 2] : tensor<16x32xf32, #blocked> -> !tile.global<[B, N, 32], f32>
    tile.store %x, %Z[%b, %i, %c0] window [1, 2] : tensor<16x32xf32, #blocked> -> !tile.global<[B, M, 32], f32>
  }
  scf.for %i = %full to %n step %c16 : i32 {
    %x = tile.load %X[%b, %i, %c0] window [1, 2] pad 0.0 : f32 : !tile.global<[B, N, 32], f32> -> tensor<16x32xf32, #blocked>
    tile.store %x, %Y[%b, %i, %c0] window [1, 2] : tensor<16x32xf32, #blocked> -> !tile.global<[B, N, 32], f32>
  }
  return
}

// -----

// The clamped bounds tile-split-masked-loops writes: a loop from 0 up to
// max(0, min((N / 16) * 16, 16 E)) stays inside N (a max of two such
// bounds, 0 <= any dim); up to max(S, min(...)) with S unknown it may not.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @clamped_bounds
// CHECK-SAME: %[[N:[a-z0-9]*]]: i32 {tile.name = "X.d0"}
// CHECK: scf.for
// CHECK-NOT: arith.cmpi slt, %{{.*}}, %[[N]]
// CHECK: scf.for
// CHECK: arith.cmpi slt, %{{.*}}, %[[N]]
func.func @clamped_bounds(%X: !tile.global<[N, 32], f32> {tile.name = "X"},
                          %Y: !tile.global<[N, 32], f32> {tile.name = "Y"},
                          %e: i32 {tile.name = "e"}, %s: i32 {tile.name = "s"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %n = tile.dim %X[0] : !tile.global<[N, 32], f32>
  %blocks = arith.divsi %n, %c16 : i32
  %full = arith.muli %blocks, %c16 : i32
  %e16 = arith.muli %e, %c16 : i32
  %below = arith.minsi %full, %e16 : i32
  %end = arith.maxsi %c0, %below : i32
  scf.for %i = %c0 to %end step %c16 : i32 {
    %x = tile.load %X[%i, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[N, 32], f32> -> tensor<16x32xf32, #blocked>
    tile.store %x, %Y[%i, %c0] window [0, 1] : tensor<16x32xf32, #blocked> -> !tile.global<[N, 32], f32>
  }
  %unknown = arith.maxsi %s, %below : i32
  scf.for %i = %c0 to %unknown step %c16 : i32 {
    %x = tile.load %X[%i, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[N, 32], f32> -> tensor<16x32xf32, #blocked>
    tile.store %x, %Y[%i, %c0] window [0, 1] : tensor<16x32xf32, #blocked> -> !tile.global<[N, 32], f32>
  }
  return
}

// -----

// tile.load_scalar: one load of the same address in every thread (the value
// is uniform: no tile, no shuffle), under its bounds check, the pad
// otherwise; a gathered load adds each register's row index (read from the
// index tile's register that holds that row) to its address, and checks it.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #blocked>
// CHECK-LABEL: gpu.func @scalar_and_gather
// CHECK-SAME: (%[[X:.*]]: !llvm.ptr<1> {tile.name = "X"}, %[[XN:.*]]: i32 {tile.name = "X.d0"}, %{{.*}}: i32 {tile.name = "X.d1"}, %[[I:.*]]: !llvm.ptr<1> {tile.name = "I"}, %[[IN:.*]]: i32 {tile.name = "I.d0"},
// CHECK:      %[[B:.*]] = nvvm.read.ptx.sreg.ctaid.x : i32
// CHECK:      %[[P:.*]] = llvm.getelementptr %[[I]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK:      arith.cmpi sge, %[[B]], %c0_i32 : i32
// CHECK:      arith.cmpi slt, %[[B]], %[[IN]] : i32
// CHECK:      %[[OK:.*]] = arith.andi
// CHECK:      %[[START:.*]] = scf.if %[[OK]] -> (i32) {
// CHECK-NEXT:   %[[V:.*]] = llvm.load %[[P]] {alignment = 4 : i64} : !llvm.ptr<1> -> i32
// CHECK-NEXT:   scf.yield %[[V]] : i32
// CHECK-NEXT: } else {
// CHECK-NEXT:   scf.yield %c-1_i32 : i32
// CHECK-NEXT: }
// CHECK-NOT:  nvvm.shfl.sync
// The gathered rows: register 0's row is index register 0.
// CHECK:      %[[ROW:.*]] = vector.extract %[[ROWS:.*]][0] : i32 from vector<4xi32>
// CHECK:      arith.cmpi sge, %[[ROW]], %c0_i32 : i32
// CHECK:      arith.cmpi slt, %[[ROW]], %[[XN]] : i32
// CHECK:      %[[R64:.*]] = arith.extsi %[[ROW]] : i32 to i64
// CHECK:      %[[OFF:.*]] = arith.muli %[[R64]], %{{.*}} : i64
// CHECK:      %[[ADDR:.*]] = llvm.getelementptr %{{.*}}[%[[OFF]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK:      scf.if %{{.*}} -> (vector<4xf32>) {
// CHECK-NEXT:   llvm.load %[[ADDR]] {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xf32>
func.func @scalar_and_gather(%X: !tile.global<[N, 64], f32> {tile.name = "X"},
                             %I: !tile.global<[B], i32> {tile.name = "I"},
                             %Y: !tile.global<[B, 32, 64], f32> {tile.name = "Y"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %b = tile.program_id 0 : i32
  %start = tile.load_scalar %I[%b] pad -1 : i32 : !tile.global<[B], i32> -> i32
  %iota = tile.iota : tensor<32xi32, #rows>
  %s = tile.splat %start : i32 -> tensor<32xi32, #rows>
  %rows = arith.addi %s, %iota : tensor<32xi32, #rows>
  %x = tile.load %X[%c0, %c0] window [1] gather [0] (%rows : tensor<32xi32, #rows>) pad 0.0 : f32 : !tile.global<[N, 64], f32> -> tensor<32x64xf32, #blocked>
  tile.store %x, %Y[%b, %c0, %c0] window [1, 2] : tensor<32x64xf32, #blocked> -> !tile.global<[B, 32, 64], f32>
  return
}

// -----

// Masked stores and bool tensors. A mask read from a bool tensor (bytes,
// loaded one at a time: any nonzero byte is true) differs from element to
// element: each f32 is stored on its own, under its mask bit. A row mask
// broadcast along the columns is the same over each 4-element vector: the
// vectors stay, one mask bit each. A bool tile is stored as bytes.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #blocked>
// CHECK-LABEL: gpu.func @masked_store
// CHECK: %[[B:.*]] = scf.if %{{.*}} -> (i8) {
// CHECK:   llvm.load %{{.*}} {alignment = 1 : i64} : !llvm.ptr<1> -> i8
// CHECK: arith.cmpi ne, %[[B]], %c0_i8 : i8
// CHECK: %[[M:.*]] = vector.from_elements %{{.*}} : vector<8xi1>
// CHECK: %[[BIT:.*]] = vector.extract %[[M]][0] : i1 from vector<8xi1>
// CHECK: %[[P:.*]] = arith.andi %{{.*}}, %[[BIT]] : i1
// CHECK: scf.if %[[P]] {
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK-COUNT-7: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : f32, !llvm.ptr<1>
// CHECK-NOT: : f32, !llvm.ptr<1>
// CHECK: %[[R:.*]] = vector.extract %{{.*}}[0] : i1 from vector<8xi1>
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: vector.extract %{{.*}}[4] : i1 from vector<8xi1>
// CHECK:   llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xf32>, !llvm.ptr<1>
// CHECK: arith.extui %{{.*}} : i1 to i8
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 1 : i64} : i8, !llvm.ptr<1>
func.func @masked_store(%X: !tile.global<[N, 64], f32> {tile.name = "X"},
                        %M: !tile.global<[N, 64], i1> {tile.name = "M"},
                        %Y: !tile.global<[N, 64], f32> {tile.name = "Y"},
                        %Z: !tile.global<[N, 64], f32> {tile.name = "Z"},
                        %P: !tile.global<[N, 64], i1> {tile.name = "P"},
                        %limit: i32 {tile.name = "limit"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %pid = tile.program_id 0 : i32
  %r0 = arith.muli %pid, %c16 : i32
  %x = tile.load %X[%r0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[N, 64], f32> -> tensor<16x64xf32, #blocked>
  %m = tile.load %M[%r0, %c0] window [0, 1] pad false : !tile.global<[N, 64], i1> -> tensor<16x64xi1, #blocked>
  tile.store %x, %Y[%r0, %c0] window [0, 1] mask %m : tensor<16x64xf32, #blocked>, tensor<16x64xi1, #blocked> -> !tile.global<[N, 64], f32>
  %iota = tile.iota : tensor<16xi32, #rows>
  %lim = tile.splat %limit : i32 -> tensor<16xi32, #rows>
  %lt = arith.cmpi slt, %iota, %lim : tensor<16xi32, #rows>
  %col = tile.expand_dims %lt axis = 1 : tensor<16xi1, #rows> -> tensor<16x1xi1, #blocked>
  %rowmask = tile.broadcast %col : tensor<16x1xi1, #blocked> -> tensor<16x64xi1, #blocked>
  tile.store %x, %Z[%r0, %c0] window [0, 1] mask %rowmask : tensor<16x64xf32, #blocked>, tensor<16x64xi1, #blocked> -> !tile.global<[N, 64], f32>
  tile.store %m, %P[%r0, %c0] window [0, 1] : tensor<16x64xi1, #blocked> -> !tile.global<[N, 64], i1>
  return
}

// -----

// fp8 tensors are bytes in memory: a thread's 4 contiguous f8E4M3FN load and
// store as vector<4xi8> (4-byte accesses, the pad 0.0's bits), the registers
// assembled as bytes and bitcast to f8E4M3FN once, and bitcast back to bytes
// once before the stores.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @fp8_bytes
// CHECK: arith.bitcast %{{.*}} : f8E4M3FN to i8
// CHECK: llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<1> -> vector<4xi8>
// CHECK: %[[R:.*]] = vector.from_elements %{{.*}} : vector<8xi8>
// CHECK: %[[F:.*]] = arith.bitcast %[[R]] : vector<8xi8> to vector<8xf8E4M3FN>
// CHECK: %[[M:.*]] = arith.mulf %[[F]], %[[F]] : vector<8xf8E4M3FN>
// CHECK: arith.bitcast %[[M]] : vector<8xf8E4M3FN> to vector<8xi8>
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<4xi8>, !llvm.ptr<1>
func.func @fp8_bytes(%X: !tile.global<[N, 64], f8E4M3FN> {tile.name = "X"},
                     %Y: !tile.global<[N, 64], f8E4M3FN> {tile.name = "Y"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %pid = tile.program_id 0 : i32
  %r0 = arith.muli %pid, %c16 : i32
  %x = tile.load %X[%r0, %c0] window [0, 1] pad 0.0 : f8E4M3FN : !tile.global<[N, 64], f8E4M3FN> -> tensor<16x64xf8E4M3FN, #blocked>
  %m = arith.mulf %x, %x : tensor<16x64xf8E4M3FN, #blocked>
  tile.store %m, %Y[%r0, %c0] window [0, 1] : tensor<16x64xf8E4M3FN, #blocked> -> !tile.global<[N, 64], f8E4M3FN>
  return
}

// -----

// tile.atomic_add: one relaxed device-scope atomicrmw fadd per element, by
// its first holder only (the lanes of a row hold copies of a row maximum;
// adding from every copy would add it several times), under the bounds and
// the mask.
#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
#rows = #tile.slice<1, #blocked>
// CHECK-LABEL: gpu.func @atomic_add
// CHECK: nvvm.shfl.sync bfly
// CHECK: %[[LANES:.*]] = arith.shrui %{{.*}}, %{{.*}} : i32
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, f32
// CHECK: }
// CHECK: vector.extract %{{.*}}[0] : i1 from vector<8xi1>
// CHECK: scf.if %{{.*}} {
// CHECK:   llvm.atomicrmw fadd %{{.*}}, %{{.*}} syncscope("device") monotonic {alignment = 4 : i64} : !llvm.ptr<1>, f32
// CHECK-COUNT-7: llvm.atomicrmw fadd
// CHECK-NOT: llvm.atomicrmw
func.func @atomic_add(%X: !tile.global<[N, 64], f32> {tile.name = "X"},
                      %S: !tile.global<[N], f32> {tile.name = "S"},
                      %T: !tile.global<[N, 64], f32> {tile.name = "T"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %c16 = arith.constant 16 : i32
  %pid = tile.program_id 0 : i32
  %r0 = arith.muli %pid, %c16 : i32
  %x = tile.load %X[%r0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[N, 64], f32> -> tensor<16x64xf32, #blocked>
  %m = tile.reduce max %x axis = 1 : tensor<16x64xf32, #blocked> -> tensor<16xf32, #rows>
  tile.atomic_add %m, %S[%c0] window [0] : tensor<16xf32, #rows> -> !tile.global<[N], f32>
  %zero = arith.constant dense<0.0> : tensor<16x64xf32, #blocked>
  %pos = arith.cmpf ogt, %x, %zero : tensor<16x64xf32, #blocked>
  tile.atomic_add %x, %T[%c0, %c0] window [0, 1] mask %pos : tensor<16x64xf32, #blocked>, tensor<16x64xi1, #blocked> -> !tile.global<[N, 64], f32>
  return
}

// -----

// Eight rows padded to the atom's 16: a thread's registers 2, 3 (row
// g + 8) hold its registers 0, 1 (row g) again; only the first register of
// the first thread holding an element stores it: one 8-byte store per
// thread, no predicate.
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
// CHECK-LABEL: gpu.func @store_rows_below_the_atom
// CHECK: %[[V:.*]] = vector.shuffle %{{.*}}, %{{.*}} [0, 1] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT: llvm.store %[[V]], %{{.*}} {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: gpu.return
func.func @store_rows_below_the_atom(%X: !tile.global<[8, 8], f32> {tile.name = "X"})
    attributes {tile.num_warps = 1 : i32} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f32 : !tile.global<[8, 8], f32> -> tensor<8x8xf32, #mma>
  tile.store %x, %X[%c0, %c0] window [0, 1] : tensor<8x8xf32, #mma> -> !tile.global<[8, 8], f32>
  return
}
