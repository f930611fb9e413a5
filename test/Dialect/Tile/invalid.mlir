// RUN: flash-opt %s -split-input-file -verify-diagnostics

// expected-error @below {{global tensor element type must be f16, bf16, f8E4M3FN, f32, i32 or i1, got 'f64'}}
func.func private @bad_global_elt(!tile.global<[N], f64>)

// -----

// expected-error @below {{static dim 1 must be positive, got 0}}
func.func private @bad_global_dim(!tile.global<[N, 0], f16>)

// -----

func.func @program_id_axis() {
  // expected-error @below {{grid axis must be 0, 1 or 2, got 3}}
  %0 = tile.program_id 3 : i32
  return
}

// -----

func.func @num_programs_axis() {
  // expected-error @below {{grid axis must be 0, 1 or 2, got -1}}
  %0 = tile.num_programs -1 : i32
  return
}

// -----

func.func @dim_out_of_range(%g: !tile.global<[M, N], f32>) {
  // expected-error @below {{dim 2 is out of range for rank 2}}
  %0 = tile.dim %g[2] : !tile.global<[M, N], f32>
  return
}

// -----

func.func @splat_type(%x: f16) {
  // expected-error @below {{scalar of type 'f16' cannot fill a tile of 'f32'}}
  %0 = tile.splat %x : f16 -> tensor<4xf32>
  return
}

// -----

func.func @iota_rank() {
  // expected-error @below {{result must be a 1-D tile of i32, got 'tensor<4x4xi32>'}}
  %0 = tile.iota : tensor<4x4xi32>
  return
}

// -----

func.func @load_offsets(%g: !tile.global<[M, N], f32>, %i: i32) {
  // expected-error @below {{expects 2 offsets (one per dim of the global tensor), got 1}}
  %0 = tile.load %g[%i] window [1] pad 0.0 : f32 : !tile.global<[M, N], f32> -> tensor<16xf32>
  return
}

// -----

func.func @load_window_rank(%g: !tile.global<[M, N], f32>, %i: i32) {
  // expected-error @below {{window names 1 dims but the tile has rank 2}}
  %0 = tile.load %g[%i, %i] window [1] pad 0.0 : f32 : !tile.global<[M, N], f32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_window_order(%g: !tile.global<[M, N], f32>, %i: i32) {
  // expected-error @below {{window dims must be strictly increasing, got [1, 0]}}
  %0 = tile.load %g[%i, %i] window [1, 0] pad 0.0 : f32 : !tile.global<[M, N], f32> -> tensor<16x16xf32>
  return
}

// -----

func.func @load_window_range(%g: !tile.global<[M, N], f32>, %i: i32) {
  // expected-error @below {{window dim 2 is out of range for a global tensor of rank 2}}
  %0 = tile.load %g[%i, %i] window [2] pad 0.0 : f32 : !tile.global<[M, N], f32> -> tensor<16xf32>
  return
}

// -----

func.func @load_element_type(%g: !tile.global<[M, N], f32>, %i: i32) {
  // expected-error @below {{tile element type 'f16' does not match the global tensor's 'f32'}}
  %0 = tile.load %g[%i, %i] window [1] pad 0.0 : f16 : !tile.global<[M, N], f32> -> tensor<16xf16>
  return
}

// -----

func.func @load_pad_type(%g: !tile.global<[M, N], f32>, %i: i32) {
  // expected-error @below {{pad value of type 'f16' does not match the element type 'f32'}}
  %0 = tile.load %g[%i, %i] window [1] pad 0.0 : f16 : !tile.global<[M, N], f32> -> tensor<16xf32>
  return
}

// -----

func.func @store_offsets(%g: !tile.global<[M, N], f32>, %t: tensor<16xf32>, %i: i32) {
  // expected-error @below {{expects 2 offsets (one per dim of the global tensor), got 3}}
  tile.store %t, %g[%i, %i, %i] window [1] : tensor<16xf32> -> !tile.global<[M, N], f32>
  return
}

// -----

func.func @store_element_type(%g: !tile.global<[M, N], f32>, %t: tensor<16xf16>, %i: i32) {
  // expected-error @below {{tile element type 'f16' does not match the global tensor's 'f32'}}
  tile.store %t, %g[%i, %i] window [1] : tensor<16xf16> -> !tile.global<[M, N], f32>
  return
}

// -----

func.func @store_mask_type(%g: !tile.global<[M, N], f32>, %t: tensor<16xf32>, %m: tensor<16xi32>, %i: i32) {
  // expected-error @below {{mask must be a tile of i1, got 'tensor<16xi32>'}}
  tile.store %t, %g[%i, %i] window [1] mask %m : tensor<16xf32>, tensor<16xi32> -> !tile.global<[M, N], f32>
  return
}

// -----

func.func @store_mask_shape(%g: !tile.global<[M, N], f32>, %t: tensor<16xf32>, %m: tensor<8xi1>, %i: i32) {
  // expected-error @below {{mask shape [8] differs from the value's [16]}}
  tile.store %t, %g[%i, %i] window [1] mask %m : tensor<16xf32>, tensor<8xi1> -> !tile.global<[M, N], f32>
  return
}

// -----

#blocked = #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>
func.func @store_mask_layout(%g: !tile.global<[M, N], f32>, %t: tensor<16x64xf32, #blocked>, %m: tensor<16x64xi1>, %i: i32) {
  // expected-error @below {{mask 'tensor<16x64xi1>' and value 'tensor<16x64xf32, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]>>' have different layouts}}
  tile.store %t, %g[%i, %i] window [0, 1] mask %m : tensor<16x64xf32, #blocked>, tensor<16x64xi1> -> !tile.global<[M, N], f32>
  return
}

// -----

func.func @atomic_add_type(%g: !tile.global<[M, N], f16>, %t: tensor<16xf16>, %i: i32) {
  // expected-error @below {{adds f32 tiles only, got 'f16'}}
  tile.atomic_add %t, %g[%i, %i] window [1] : tensor<16xf16> -> !tile.global<[M, N], f16>
  return
}

// -----

func.func @atomic_add_window(%g: !tile.global<[M, N], f32>, %t: tensor<16xf32>, %i: i32) {
  // expected-error @below {{window dim 2 is out of range for a global tensor of rank 2}}
  tile.atomic_add %t, %g[%i, %i] window [2] : tensor<16xf32> -> !tile.global<[M, N], f32>
  return
}

// -----

func.func @atomic_add_mask_shape(%g: !tile.global<[M, N], f32>, %t: tensor<16xf32>, %m: tensor<16x1xi1>, %i: i32) {
  // expected-error @below {{mask shape [16, 1] differs from the value's [16]}}
  tile.atomic_add %t, %g[%i, %i] window [1] mask %m : tensor<16xf32>, tensor<16x1xi1> -> !tile.global<[M, N], f32>
  return
}

// -----

func.func @expand_dims_shape(%t: tensor<16xf32>) {
  // expected-error @below {{result shape must be [16, 1], got [1, 16]}}
  %0 = tile.expand_dims %t axis = 1 : tensor<16xf32> -> tensor<1x16xf32>
  return
}

// -----

func.func @expand_dims_axis(%t: tensor<16xf32>) {
  // expected-error @below {{axis 2 is out of range for rank 2}}
  %0 = tile.expand_dims %t axis = 2 : tensor<16xf32> -> tensor<16x1xf32>
  return
}

// -----

func.func @broadcast_rank(%t: tensor<16xf32>) {
  // expected-error @below {{cannot broadcast rank 1 to rank 2; insert dims with tile.expand_dims first}}
  %0 = tile.broadcast %t : tensor<16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @broadcast_dim(%t: tensor<2x16xf32>) {
  // expected-error @below {{dim 0 of size 2 cannot broadcast to 16 (only size-1 dims broadcast)}}
  %0 = tile.broadcast %t : tensor<2x16xf32> -> tensor<16x16xf32>
  return
}

// -----

func.func @broadcast_element_type(%t: tensor<1x16xf32>) {
  // expected-error @below {{result element type 'f16' differs from the input's 'f32'}}
  %0 = tile.broadcast %t : tensor<1x16xf32> -> tensor<16x16xf16>
  return
}

// -----

func.func @trans_rank(%t: tensor<16xf32>) {
  // expected-error @below {{expects a 2-D tile, got rank 1}}
  %0 = tile.trans %t : tensor<16xf32> -> tensor<16xf32>
  return
}

// -----

func.func @trans_shape(%t: tensor<16x8xf32>) {
  // expected-error @below {{result shape must be [8, 16], got [16, 8]}}
  %0 = tile.trans %t : tensor<16x8xf32> -> tensor<16x8xf32>
  return
}

// -----

func.func @reduce_shape(%t: tensor<16x8xf32>) {
  // expected-error @below {{result shape must be [16], got [8]}}
  %0 = tile.reduce max %t axis = 1 : tensor<16x8xf32> -> tensor<8xf32>
  return
}

// -----

func.func @reduce_axis(%t: tensor<16x8xf32>) {
  // expected-error @below {{axis 2 is out of range for rank 2}}
  %0 = tile.reduce sum %t axis = 2 : tensor<16x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @reduce_i1(%t: tensor<16x8xi1>) {
  // expected-error @below {{cannot reduce a tile of i1}}
  %0 = tile.reduce max %t axis = 1 : tensor<16x8xi1> -> tensor<16xi1>
  return
}

// -----

#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
func.func @lane_partial_max(%t: tensor<16x8xf32, #mma>) {
  // expected-error @below {{lane_partial needs a sum of f32 with a layout on the result}}
  %0 = tile.reduce max %t axis = 1 lane_partial : tensor<16x8xf32, #mma> -> tensor<16xf32, #tile.slice<1, #mma>>
  return
}

// -----

func.func @uniform_sum(%t: tensor<16x8xf32>) {
  // expected-error @below {{uniform needs a max (the value every element along the axis shares), not lane_partial}}
  %0 = tile.reduce sum %t axis = 1 uniform : tensor<16x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @lane_partial_without_layout(%t: tensor<16x8xf32>) {
  // expected-error @below {{lane_partial needs a sum of f32 with a layout on the result}}
  %0 = tile.reduce sum %t axis = 1 lane_partial : tensor<16x8xf32> -> tensor<16xf32>
  return
}

// -----

func.func @sum_lane_partials_without_layout(%t: tensor<16xf32>) {
  // expected-error @below {{needs a tile with a layout (lane-partial form is a layout-level notion)}}
  %0 = tile.sum_lane_partials %t : tensor<16xf32>
  return
}

// -----

func.func @mma_k(%a: tensor<16x16xf16>, %b: tensor<32x8xf16>, %c: tensor<16x8xf32>) {
  // expected-error @below {{K dimension mismatch: A has K = 16 but B has K = 32}}
  %0 = tile.mma %a, %b, %c : tensor<16x16xf16>, tensor<32x8xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @mma_acc(%a: tensor<16x16xf16>, %b: tensor<8x16xf16>, %c: tensor<16x16xf32>) {
  // expected-error @below {{accumulator shape must be [16, 8] (M x N), got [16, 16]}}
  %0 = tile.mma %a, %b, %c {transpose_b} : tensor<16x16xf16>, tensor<8x16xf16> -> tensor<16x16xf32>
  return
}

// -----

func.func @mma_mixed(%a: tensor<16x16xf16>, %b: tensor<16x8xbf16>, %c: tensor<16x8xf32>) {
  // expected-error @below {{A and B must have the same element type, got 'f16' and 'bf16'}}
  %0 = tile.mma %a, %b, %c : tensor<16x16xf16>, tensor<16x8xbf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @mma_rank(%a: tensor<16xf16>, %b: tensor<16x8xf16>, %c: tensor<16x8xf32>) {
  // expected-error @below {{expects 2-D operands, got ranks 1, 2 and 2}}
  %0 = tile.mma %a, %b, %c : tensor<16xf16>, tensor<16x8xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @mma_f32_operands(%a: tensor<16x16xf32>, %b: tensor<16x8xf16>, %c: tensor<16x8xf32>) {
  // expected-error @below {{operand #0 must be ranked tensor of 16-bit float or bfloat16 type or f8E4M3FN type values}}
  %0 = tile.mma %a, %b, %c : tensor<16x16xf32>, tensor<16x8xf16> -> tensor<16x8xf32>
  return
}

// -----

func.func @softmax_values(%s: tensor<16x32xf32>, %v: tensor<16x64xf16>, %m: tensor<16xf32>, %acc: tensor<16x64xf32>) {
  // expected-error @below {{values have 16 rows but the scores have 32 columns (one per key)}}
  %0:3 = tile.online_softmax deferred %s, %v, %m, %m, %acc : tensor<16x32xf32>, tensor<16x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @softmax_rows(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<8xf32>, %acc: tensor<16x64xf32>) {
  // expected-error @below {{running statistics have 8 rows but the scores have 16}}
  %0:3 = tile.online_softmax deferred %s, %v, %m, %m, %acc : tensor<16x32xf32>, tensor<32x64xf16>, tensor<8xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @softmax_acc(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<16xf32>, %acc: tensor<16x32xf32>) {
  // expected-error @below {{accumulator shape must be [16, 64] (rows x value width), got [16, 32]}}
  %0:3 = tile.online_softmax eager %s, %v, %m, %m, %acc : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x32xf32>
  return
}

// -----

func.func @softmax_ranks(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<16x1xf32>, %acc: tensor<16x64xf32>) {
  // expected-error @below {{expects 2-D scores, values and accumulator and 1-D running statistics}}
  %0:3 = tile.online_softmax eager %s, %v, %m, %m, %acc : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16x1xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @softmax_scale(%s: tensor<16x32xf32>, %v: tensor<32x64xf16>, %m: tensor<16xf32>, %acc: tensor<16x64xf32>) {
  %c = arith.constant -0.5 : f32
  // expected-error @below {{scale must be positive, got -5.000000e-01}}
  %0:3 = tile.online_softmax deferred exp2 %s, %v, %m, %m, %acc scale %c : tensor<16x32xf32>, tensor<32x64xf16>, tensor<16xf32>, tensor<16x64xf32>
  return
}

// -----

func.func @num_stages(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'tile.num_stages' must be an integer >= 1 on a loop, got 0 : i64}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  } {tile.num_stages = 0 : i64}
  return
}

// -----

func.func @mask_split(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'tile.mask_split' must be a unit attribute on a loop, got true}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  } {tile.mask_split = true}
  return
}

// -----

// expected-error @below {{'tile.register_bound' must be a unit attribute on a func.func, got 1 : i64}}
func.func @register_bound() attributes {tile.register_bound = 1 : i64} {
  return
}

// -----

// expected-error @below {{'tile.mask_split' must be a unit attribute on a loop, got unit}}
func.func @mask_split_on_function() attributes {tile.mask_split} {
  return
}

// -----

func.func @tma_reduce_on_store(%X: !tile.global<[N, 64], f32>, %x: tensor<16x64xf32>) {
  %c0 = arith.constant 0 : i32
  // expected-error @below {{'tile.tma_reduce' must be a unit attribute on a tile.atomic_add, got unit}}
  tile.store %x, %X[%c0, %c0] window [0, 1] {tile.tma_reduce} : tensor<16x64xf32> -> !tile.global<[N, 64], f32>
  return
}

// -----

// expected-error @below {{'tile.shared_bytes' must be an i64 >= 0 on a func.func, got -16 : i64}}
func.func @shared_bytes() attributes {tile.shared_bytes = -16 : i64} {
  return
}

// -----

// expected-error @below {{'tile.arch' must be an i64 > 0 on a builtin.module, got 80 : i64}}
func.func @arch_on_function() attributes {tile.arch = 80 : i64} {
  return
}

// -----

// expected-error @below {{'tile.arch' must be an i64 > 0 on a builtin.module, got "sm_80"}}
module attributes {tile.arch = "sm_80"} {
}

// -----

// expected-error @below {{'tile.wgmma' must be a unit attribute on a builtin.module, got true}}
module attributes {tile.wgmma = true} {
}

// -----

func.func @finalize_rows(%acc: tensor<16x64xf32>, %l: tensor<8xf32>) {
  // expected-error @below {{row sum has 8 rows but the accumulator has 16}}
  %0 = tile.online_softmax_finalize %acc, %l : tensor<16x64xf32>, tensor<8xf32>
  return
}

// -----

func.func @finalize_rank(%acc: tensor<16xf32>, %l: tensor<16xf32>) {
  // expected-error @below {{expects a 2-D accumulator and a 1-D row sum}}
  %0 = tile.online_softmax_finalize %acc, %l : tensor<16xf32>, tensor<16xf32>
  return
}

// -----

// expected-error @below {{grid function @missing does not name a func.func}}
func.func @grid_missing() attributes {tile.grid = @missing} {
  return
}

// -----

func.func @wrong_grid(%x: f32) -> (i32, i32) {
  %c = arith.constant 1 : i32
  return %c, %c : i32, i32
}
// expected-error @below {{grid function @wrong_grid must return (i32, i32, i32)}}
func.func @kernel(%x: f32) attributes {tile.grid = @wrong_grid} {
  return
}

// -----

func.func @other_args() -> (i32, i32, i32) {
  %c = arith.constant 1 : i32
  return %c, %c, %c : i32, i32, i32
}
// expected-error @below {{grid function @other_args must take the kernel's argument types}}
func.func @kernel(%x: f32) attributes {tile.grid = @other_args} {
  return
}

// -----

// expected-error @below {{'tile.num_warps' must be an i32 between 1 and 32, got 0 : i32}}
func.func @no_warps() attributes {tile.num_warps = 0 : i32} {
  return
}

// -----

// expected-error @below {{constant 'X' must be an integer, float, bool or type, got "text"}}
func.func @bad_constant() attributes {tile.constants = {X = "text"}} {
  return
}

// -----

// expected-error @below {{'tile.name' of argument 0 must be a non-empty string}}
func.func @bad_name(%x: f32 {tile.name = 3 : i32}) {
  return
}

// -----

// expected-error @below {{unknown tile dialect attribute 'tile.color'}}
func.func @unknown() attributes {tile.color = 1 : i32} {
  return
}

// -----

func.func @convert_shape(%t: tensor<16x8xf32>) {
  // expected-error @below {{result shape must be [16, 8], got [8, 16]}}
  %0 = tile.convert_layout %t : tensor<16x8xf32> -> tensor<8x16xf32>
  return
}

// -----

func.func @convert_element_type(%t: tensor<16x8xf32>) {
  // expected-error @below {{result element type 'f16' differs from the input's 'f32'}}
  %0 = tile.convert_layout %t : tensor<16x8xf32> -> tensor<16x8xf16>
  return
}

// -----

// expected-error @below {{'tile.mma_layout' must be a #tile.mma on a func.func, got 4 : i32}}
func.func @bad_mma_layout() attributes {tile.mma_layout = 4 : i32} {
  return
}

// -----

// expected-error @below {{warps must list M, N and K, got 2 values}}
func.func private @mma_two(tensor<16x8xf32, #tile.mma<warps = [1, 1], values = [1, 1, 1]>>)

// -----

// expected-error @below {{values must be positive, got 0}}
func.func private @mma_zero(tensor<16x8xf32, #tile.mma<warps = [1, 1, 1], values = [0, 1, 1]>>)

// -----

// expected-error @below {{warps along K are not supported (they would need a cross-warp reduction), got 2}}
func.func private @mma_k(tensor<16x8xf32, #tile.mma<warps = [1, 1, 2], values = [1, 1, 1]>>)

// -----

// Any static 2-D shape fits an MMA layout (padded to whole steps); a
// dynamic dim or another rank does not.
// expected-error @below {{tile shape does not fit #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>: dim 0 has no static positive size}}
func.func private @mma_shape(tensor<?x64xf32, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>)

// -----

// expected-error @below {{tile shape does not fit #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>: an MMA layout distributes 2-D tiles, got rank 3}}
func.func private @mma_rank(tensor<2x48x64xf32, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>)

// -----

// expected-error @below {{operand index must be 0 (A) or 1 (B), got 2}}
func.func private @dot_index(tensor<16x16xf16, #tile.dot_op<2, <warps = [1, 1, 1], values = [1, 1, 1]>>>)

// -----

// expected-error @below {{an MMA operand layout holds f16, bf16 or f8E4M3FN, got 'f32'}}
func.func private @dot_type(tensor<16x16xf32, #tile.dot_op<0, <warps = [1, 1, 1], values = [1, 1, 1]>>>)

// -----

// expected-error @below {{a slice of an MMA layout removes dim 0 or 1, got 2}}
func.func private @slice_dim(tensor<16xf32, #tile.slice<2, #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>>>)

// -----

// expected-error @below {{a slice's parent must be #tile.mma or #tile.blocked, got #tile.dot_op}}
func.func private @slice_parent(tensor<16xf32, #tile.slice<1, #tile.dot_op<0, <warps = [1, 1, 1], values = [1, 1, 1]>>>>)

// -----

// expected-error @below {{tile shape does not fit #tile.slice<1, #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>>: a slice of an MMA layout distributes 1-D tiles, got rank 2}}
func.func private @slice_shape(tensor<8x8xf32, #tile.slice<1, #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>>>)

// -----

// expected-error @below {{threadsPerWarp must multiply to 32, got 16}}
func.func private @blocked_lanes(tensor<16x16xf32, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 4], warpsPerCTA = [1, 1], order = [1, 0]>>)

// -----

// expected-error @below {{tile shape does not fit #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>: the blocked layout has rank 2 but the tile has rank 1}}
func.func private @blocked_shape(tensor<6xf32, #tile.blocked<sizePerThread = [1, 4], threadsPerWarp = [4, 8], warpsPerCTA = [1, 1], order = [1, 0]>>)

// -----

func.func @load_scalar_indices(%g: !tile.global<[M, N], f32>, %i: i32) {
  // expected-error @below {{expects 2 indices (one per dim of the global tensor), got 1}}
  %0 = tile.load_scalar %g[%i] pad 0.0 : f32 : !tile.global<[M, N], f32> -> f32
  return
}

// -----

func.func @load_scalar_type(%g: !tile.global<[M], i32>, %i: i32) {
  // expected-error @below {{result type 'f32' does not match the global tensor's element type 'i32'}}
  %0 = tile.load_scalar %g[%i] pad 0.0 : f32 : !tile.global<[M], i32> -> f32
  return
}

// -----

func.func @load_scalar_pad(%g: !tile.global<[M], i32>, %i: i32) {
  // expected-error @below {{pad value of type 'f32' does not match the element type 'i32'}}
  %0 = tile.load_scalar %g[%i] pad 0.0 : f32 : !tile.global<[M], i32> -> i32
  return
}

// -----

func.func @gather_count(%g: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<64xi32>) {
  // expected-error @below {{gathers 2 dims but has 1 index tiles (one per gathered dim)}}
  %0 = tile.load %g[%i, %i, %i] window [2] gather [0, 1] (%rows : tensor<64xi32>) pad 0.0 : f16
      : !tile.global<[P, 16, 64], f16> -> tensor<64x64xf16>
  return
}

// -----

func.func @gather_rank(%g: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<64xi32>) {
  // expected-error @below {{window names 1 dims plus the gathered rows but the tile has rank 1}}
  %0 = tile.load %g[%i, %i, %i] window [2] gather [0] (%rows : tensor<64xi32>) pad 0.0 : f16
      : !tile.global<[P, 16, 64], f16> -> tensor<64xf16>
  return
}

// -----

func.func @gather_dim_range(%g: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<64xi32>) {
  // expected-error @below {{gathered dim 3 is out of range for a global tensor of rank 3}}
  %0 = tile.load %g[%i, %i, %i] window [2] gather [3] (%rows : tensor<64xi32>) pad 0.0 : f16
      : !tile.global<[P, 16, 64], f16> -> tensor<64x64xf16>
  return
}

// -----

func.func @gather_dim_order(%g: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<64xi32>) {
  // expected-error @below {{gathered dims must be strictly increasing, got [1, 0]}}
  %0 = tile.load %g[%i, %i, %i] window [2] gather [1, 0] (%rows, %rows : tensor<64xi32>, tensor<64xi32>) pad 0.0 : f16
      : !tile.global<[P, 16, 64], f16> -> tensor<64x64xf16>
  return
}

// -----

func.func @gather_in_window(%g: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<64xi32>) {
  // expected-error @below {{dim 2 is both gathered and in the window}}
  %0 = tile.load %g[%i, %i, %i] window [2] gather [2] (%rows : tensor<64xi32>) pad 0.0 : f16
      : !tile.global<[P, 16, 64], f16> -> tensor<64x64xf16>
  return
}

// -----

func.func @gather_index_shape(%g: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<32xi32>) {
  // expected-error @below {{index tile 0 must be a 1-D tile of i32 with one element per gathered row (64), got 'tensor<32xi32>'}}
  %0 = tile.load %g[%i, %i, %i] window [2] gather [0] (%rows : tensor<32xi32>) pad 0.0 : f16
      : !tile.global<[P, 16, 64], f16> -> tensor<64x64xf16>
  return
}

// -----

func.func @gather_index_type(%g: !tile.global<[P, 16, 64], f16>, %i: i32, %rows: tensor<64xf32>) {
  // expected-error @below {{index tile 0 must be a 1-D tile of i32 with one element per gathered row (64), got 'tensor<64xf32>'}}
  %0 = tile.load %g[%i, %i, %i] window [2] gather [0] (%rows : tensor<64xf32>) pad 0.0 : f16
      : !tile.global<[P, 16, 64], f16> -> tensor<64x64xf16>
  return
}

// -----

func.func @split_copies_stages(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'tile.split_copies' must be a unit attribute on a loop with at most 2 'tile.num_stages', got unit}}
  scf.for %i = %c0 to %n step %c1 : i32 {
  } {tile.num_stages = 3 : i64, tile.split_copies}
  return
}

// -----

func.func @device_assert_type(%c: tensor<64xi32>) {
  // expected-error @below {{condition must be an i1 scalar or a tile of i1, got 'tensor<64xi32>'}}
  tile.device_assert %c, "in range" : tensor<64xi32>
  return
}

// -----

func.func @device_assert_message(%c: i1) {
  // expected-error @below {{message must not be empty}}
  tile.device_assert %c, "" : i1
  return
}

// -----

func.func @release_lag_without_release() {
  // expected-error @below {{'tile.tma_release_lag' must be a positive integer on a releasing tile.async_wait (tile.tma_release), got 2 : i64}}
  tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release_lag = 2 : i64, tile.tma_stages = 2 : i64}
  return
}

// -----

func.func @release_lag_zero() {
  // expected-error @below {{'tile.tma_release_lag' must be a positive integer on a releasing tile.async_wait (tile.tma_release), got 0 : i64}}
  tile.async_wait 0 {tile.tma_barrier = 0 : i64, tile.tma_release, tile.tma_release_lag = 0 : i64, tile.tma_stages = 2 : i64}
  return
}

// -----

func.func @ring_counts_per_iter_arg(%n: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // expected-error @below {{'tile.tma_ring_counts' must be an array<i64> of barrier indices >= 0 on an scf.for with one i32 iter_arg per entry, got array<i64: 0, 2>}}
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%count = %c0) -> (i32) : i32 {
    scf.yield %count : i32
  } {tile.tma_ring_counts = array<i64: 0, 2>}
  return
}

// -----

func.func @ring_base_on_addi(%n: i32) {
  // expected-error @below {{'tile.tma_ring_base' must be a barrier index >= 0 on an arith.addi, got -1 : i64}}
  %b = arith.addi %n, %n {tile.tma_ring_base = -1 : i64} : i32
  return
}
