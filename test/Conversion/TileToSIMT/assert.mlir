// RUN: flash-opt %s --convert-tile-to-simt --mlir-print-debuginfo | FileCheck %s
// RUN: flash-opt %s --convert-tile-to-simt | FileCheck %s --check-prefix=NOTILE

// NOTILE-NOT: tile.device_assert
// NOTILE-NOT: tensor<

// A tile condition: each thread ANDs the 8 registers it holds and asserts
// once, with the message and the source location of the device_assert. A
// scalar condition is asserted as it is.
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-LABEL: gpu.func @checked
// CHECK: %[[CMP:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : vector<8xf16>
// CHECK: %[[E0:.*]] = vector.extract %[[CMP]][0] : i1 from vector<8xi1>
// CHECK: %[[E1:.*]] = vector.extract %[[CMP]][1] : i1 from vector<8xi1>
// CHECK: %[[A1:.*]] = arith.andi %[[E0]], %[[E1]] : i1
// CHECK-COUNT-6: arith.andi
// CHECK: cf.assert %{{.*}}, "X below the limit" loc(#[[LOC:.*]])
// CHECK-NOT: vector.extract
// CHECK: cf.assert %{{.*}}, "limit positive" loc(#[[LOC2:.*]])
// CHECK-DAG: #[[LOC]] = loc("k.tile":7:3)
// CHECK-DAG: #[[LOC2]] = loc("k.tile":9:3)
func.func @checked(%X: !tile.global<[N, 64], f16> {tile.name = "X"}, %limit: f16 {tile.name = "limit"})
    attributes {tile.num_warps = 4 : i32} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0] window [0, 1] pad 0.0 : f16 : !tile.global<[N, 64], f16> -> tensor<16x64xf16, #blocked>
  %l = tile.splat %limit : f16 -> tensor<16x64xf16, #blocked>
  %ok = arith.cmpf olt, %x, %l : tensor<16x64xf16, #blocked>
  tile.device_assert %ok, "X below the limit" : tensor<16x64xi1, #blocked> loc("k.tile":7:3)
  %zero = arith.constant 0.0 : f16
  %pos = arith.cmpf ogt, %limit, %zero : f16
  tile.device_assert %pos, "limit positive" : i1 loc("k.tile":9:3)
  return
}
