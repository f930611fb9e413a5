// Layout-level tile IR the lowering rejects: transpose_b with B in the
// plain operand layout. (Every .tile program the front end accepts lowers,
// so a lowering diagnostic is reached from hand-written IR.)
#mma = #tile.mma<warps = [1, 1, 1], values = [1, 1, 1]>
#A = #tile.dot_op<0, #mma>
#B = #tile.dot_op<1, #mma>
func.func @k(%a: tensor<16x16xf16, #A>, %b: tensor<16x16xf16, #B>,
             %c: tensor<16x16xf32, #mma>)
    attributes {tile.num_warps = 1 : i32} {
  %d = tile.mma %a, %b, %c {transpose_b} : tensor<16x16xf16, #A>, tensor<16x16xf16, #B> -> tensor<16x16xf32, #mma>
  return
}
