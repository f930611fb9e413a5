// Grid functions rendered as expressions: every op the sidecar understands,
// parenthesized only where C int32 evaluation needs it.
// RUN: flash-opt %s --flashc-emit-sidecar="output=-" -o /dev/null | FileCheck %s

// CHECK: "grid": ["cdiv(Nq, 128) * (B + H)","max(min(B, 4), n) - (H - 1) - (-3)","Nq / (B * H) % 7 + floordiv(Nk, 2) + B * H * Nk"],
module attributes {gpu.container_module} {
  func.func @g_grid(%Q: !tile.global<[B, H, Nq, 64], f16> {tile.name = "Q"},
                    %K: !tile.global<[B, H, Nk, 64], f16> {tile.name = "K"},
                    %n: i32 {tile.name = "n"}) -> (i32, i32, i32) {
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %c4 = arith.constant 4 : i32
    %c7 = arith.constant 7 : i32
    %c128 = arith.constant 128 : i32
    %cm3 = arith.constant -3 : i32
    %b = tile.dim %Q[0] : !tile.global<[B, H, Nq, 64], f16>
    %h = tile.dim %Q[1] : !tile.global<[B, H, Nq, 64], f16>
    %nq = tile.dim %Q[2] : !tile.global<[B, H, Nq, 64], f16>
    %nk = tile.dim %K[2] : !tile.global<[B, H, Nk, 64], f16>
    %bh = arith.addi %b, %h : i32
    %cd = arith.ceildivsi %nq, %c128 : i32
    %x = arith.muli %cd, %bh : i32
    %mn = arith.minsi %b, %c4 : i32
    %mx = arith.maxsi %mn, %n : i32
    %hm1 = arith.subi %h, %c1 : i32
    %y0 = arith.subi %mx, %hm1 : i32
    %y = arith.subi %y0, %cm3 : i32
    %bxh = arith.muli %b, %h : i32
    %q = arith.divsi %nq, %bxh : i32
    %r = arith.remsi %q, %c7 : i32
    %f = arith.floordivsi %nk, %c2 : i32
    %z0 = arith.addi %r, %f : i32
    %bhn = arith.muli %bxh, %nk : i32
    %z = arith.addi %z0, %bhn : i32
    return %x, %y, %z : i32, i32, i32
  }
  gpu.module @flashc_kernels {
    gpu.func @g(%Q: !llvm.ptr<1>, %Q0: i32, %Q1: i32, %Q2: i32, %Q3: i32,
                %K: !llvm.ptr<1>, %K0: i32, %K1: i32, %K2: i32, %K3: i32, %n: i32) kernel
        attributes {known_block_size = array<i32: 64, 1, 1>} {
      gpu.return
    }
  }
}
