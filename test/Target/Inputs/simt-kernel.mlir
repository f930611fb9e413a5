// A hand-written SIMT-level module in the form convert-tile-to-simt produces
// (docs/ir-conventions.md, "SIMT level"): one kernel with global loads and
// stores under bounds checks, a shared-memory round trip between barriers, an
// m16n8k16 mma.sync, a butterfly shuffle, a register repack, exp2 and a loop
// with vector iter_args. The host-side grid function keeps the tile types.
module attributes {gpu.container_module} {
  func.func @toy_grid(%X: !tile.global<[R, 64], f16> {tile.name = "X"},
                      %Y: !tile.global<[R, 8], f32> {tile.name = "Y"},
                      %scale: f32 {tile.name = "scale"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %c16 = arith.constant 16 : i32
    %r = tile.dim %X[0] : !tile.global<[R, 64], f16>
    %g = arith.ceildivsi %r, %c16 : i32
    return %g, %c1, %c1 : i32, i32, i32
  }
  gpu.module @flashc_kernels {
    llvm.mlir.global internal @__flashc_smem() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<2048 x i8>
    gpu.func @toy(%X: !llvm.ptr<1> {tile.name = "X"}, %X_d0: i32 {tile.name = "X.d0"},
                  %X_d1: i32 {tile.name = "X.d1"}, %Y: !llvm.ptr<1> {tile.name = "Y"},
                  %Y_d0: i32 {tile.name = "Y.d0"}, %Y_d1: i32 {tile.name = "Y.d1"},
                  %scale: f32 {tile.name = "scale"}) kernel
        attributes {known_block_size = array<i32: 32, 1, 1>,
                    flashc.num_warps = 1 : i32, flashc.grid = @toy_grid,
                    flashc.shared_bytes = 2048 : i64,
                    flashc.params = [{name = "X", kind = "tensor", element = f16, dims = ["R", "64"]},
                                     {name = "Y", kind = "tensor", element = f32, dims = ["R", "8"]},
                                     {name = "scale", kind = "scalar", element = f32}],
                    tile.constants = {BLOCK_R = 16 : i64, EXACT = true, SCALE = 5.000000e-01 : f64}} {
      %lane = nvvm.read.ptx.sreg.tid.x : i32
      %pid = nvvm.read.ptx.sreg.ctaid.x : i32
      %c0 = arith.constant 0 : i32
      %c1 = arith.constant 1 : i32
      %c4 = arith.constant 4 : i32
      %c8 = arith.constant 8 : i32
      %c16 = arith.constant 16 : i32
      %c31 = arith.constant 31 : i32
      %cm1 = arith.constant -1 : i32
      %c64_i64 = arith.constant 64 : i64
      %zero2 = arith.constant dense<0.0> : vector<2xf16>
      // Row of this lane: pid * 16 + lane / 4; columns 2 * (lane % 4) .. + 1.
      %g = arith.divui %lane, %c4 : i32
      %q = arith.remui %lane, %c4 : i32
      %row0 = arith.muli %pid, %c16 : i32
      %row = arith.addi %row0, %g : i32
      %col = arith.muli %q, %c1 : i32
      %in = arith.cmpi slt, %row, %X_d0 : i32
      %a = scf.if %in -> (vector<2xf16>) {
        %row64 = arith.extsi %row : i32 to i64
        %col64 = arith.extsi %col : i32 to i64
        %base = arith.muli %row64, %c64_i64 : i64
        %idx = arith.addi %base, %col64 : i64
        %p = llvm.getelementptr %X[%idx] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f16
        %v = llvm.load %p {alignment = 4 : i64} : !llvm.ptr<1> -> vector<2xf16>
        scf.yield %v : vector<2xf16>
      } else {
        scf.yield %zero2 : vector<2xf16>
      }
      // Shared-memory round trip: lane L reads what lane L ^ 1 wrote.
      %smem = llvm.mlir.addressof @__flashc_smem : !llvm.ptr<3>
      nvvm.barrier
      %sp = llvm.getelementptr %smem[%lane] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<2xf16>
      llvm.store %a, %sp : vector<2xf16>, !llvm.ptr<3>
      nvvm.barrier
      %other = arith.xori %lane, %c1 : i32
      %sq = llvm.getelementptr %smem[%other] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, vector<2xf16>
      %b = llvm.load %sq : !llvm.ptr<3> -> vector<2xf16>
      nvvm.barrier
      %swapped = vector.shuffle %b, %b [1, 0] : vector<2xf16>, vector<2xf16>
      %zf = arith.constant 0.0 : f32
      %d = nvvm.mma.sync A[%a, %b, %a, %swapped] B[%b, %a] C[%zf, %zf, %zf, %zf]
        {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>,
         shape = #nvvm.shape<m = 16, n = 8, k = 16>}
        : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
      %d0 = llvm.extractvalue %d[0] : !llvm.struct<(f32, f32, f32, f32)>
      %d1 = llvm.extractvalue %d[1] : !llvm.struct<(f32, f32, f32, f32)>
      // Row maximum over the quad: two butterfly shuffles.
      %m0 = arith.maximumf %d0, %d1 : f32
      %s1 = nvvm.shfl.sync bfly %cm1, %m0, %c1, %c31 : f32 -> f32
      %m1 = arith.maximumf %m0, %s1 : f32
      %c2 = arith.constant 2 : i32
      %s2 = nvvm.shfl.sync bfly %cm1, %m1, %c2, %c31 : f32 -> f32
      %m2 = arith.maximumf %m1, %s2 : f32
      %x0 = arith.subf %d0, %m2 : f32
      %x1 = arith.subf %d1, %m2 : f32
      %e0 = arith.mulf %x0, %scale : f32
      %e1 = arith.mulf %x1, %scale : f32
      %init = vector.from_elements %e0, %e1 : vector<2xf32>
      %ex = math.exp2 %init : vector<2xf32>
      %acc = scf.for %i = %c0 to %c4 step %c1 iter_args(%v = %ex) -> (vector<2xf32>) : i32 {
        %w = arith.addf %v, %ex : vector<2xf32>
        scf.yield %w : vector<2xf32>
      }
      %out = arith.cmpi slt, %row, %Y_d0 : i32
      scf.if %out {
        %row64 = arith.extsi %row : i32 to i64
        %c8_i64 = arith.constant 8 : i64
        %col64 = arith.extsi %col : i32 to i64
        %base = arith.muli %row64, %c8_i64 : i64
        %idx = arith.addi %base, %col64 : i64
        %p = llvm.getelementptr %Y[%idx] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
        llvm.store %acc, %p {alignment = 8 : i64} : vector<2xf32>, !llvm.ptr<1>
      }
      gpu.return
    }
  }
}
