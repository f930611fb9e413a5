// RUN: flash-opt %s | FileCheck %s
// RUN: flash-opt %s | flash-opt | FileCheck %s
// RUN: flash-opt -mlir-print-op-generic %s | flash-opt | FileCheck %s

// Layout encodings round-trip, with their aliases, and tile.convert_layout.
// CHECK-DAG: #[[MMA:.*]] = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
// CHECK-DAG: #[[A:.*]] = #tile.dot_op<0, #[[MMA]]>
// CHECK-DAG: #[[BT:.*]] = #tile.dot_op<1, #[[MMA]], transposed = true>
// CHECK-DAG: #[[ROWS:.*]] = #tile.slice<1, #[[MMA]]>
// CHECK-DAG: #[[BLOCKED:.*]] = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
// CHECK-DAG: #[[COLS:.*]] = #tile.slice<0, #[[BLOCKED]]>
// CHECK-LABEL: func.func @layouts
// CHECK-SAME: tensor<128x64xf32, #[[MMA]]>, %{{.*}}: tensor<128x64xf16, #[[A]]>, %{{.*}}: tensor<64x64xf16, #[[BT]]>, %{{.*}}: tensor<128xf32, #[[ROWS]]>, %{{.*}}: tensor<128x64xf16, #[[BLOCKED]]>, %{{.*}}: tensor<64xi32, #[[COLS]]>
// CHECK: tile.convert_layout %{{.*}} : tensor<128x64xf16, #[[BLOCKED]]> -> tensor<128x64xf16, #[[A]]>
#mma = #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>
#blocked = #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], order = [1, 0]>
func.func @layouts(%acc: tensor<128x64xf32, #mma>,
                   %a: tensor<128x64xf16, #tile.dot_op<0, #mma>>,
                   %bt: tensor<64x64xf16, #tile.dot_op<1, #mma, transposed = true>>,
                   %rows: tensor<128xf32, #tile.slice<1, #mma>>,
                   %g: tensor<128x64xf16, #blocked>,
                   %cols: tensor<64xi32, #tile.slice<0, #blocked>>)
    -> tensor<128x64xf16, #tile.dot_op<0, #mma>> {
  %c = tile.convert_layout %g : tensor<128x64xf16, #blocked> -> tensor<128x64xf16, #tile.dot_op<0, #mma>>
  return %c : tensor<128x64xf16, #tile.dot_op<0, #mma>>
}

// Any static shape of the layout's rank fits: the layouts pad it to whole
// steps (a [1, 1] tile, 48 rows of a 128-row step, a column of 6 in steps
// of 32).
// CHECK-LABEL: func.func private @padded
// CHECK-SAME: tensor<1x1xf32, #[[MMA]]>, tensor<48x64xf32, #[[MMA]]>, tensor<1xf32, #[[ROWS]]>, tensor<16x6xf32, #[[BLOCKED]]>
func.func private @padded(tensor<1x1xf32, #mma>, tensor<48x64xf32, #mma>,
                          tensor<1xf32, #tile.slice<1, #mma>>, tensor<16x6xf32, #blocked>)
