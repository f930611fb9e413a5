#ifndef FLASH_TILE_DIALECT_TD
#define FLASH_TILE_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::flash::tile";
  let summary = "Layout-free tiles, global tensor windows, MMA and online softmax";
  let description = [{
    The `tile` dialect is flashc's block-level IR. A *tile* is a builtin
    ranked tensor with a static shape (`tensor<128x64xf16>`); element-wise
    math on tiles uses the upstream `arith` and `math` ops, which accept
    tensors. A *global tensor* is a kernel parameter of type `!tile.global`
    whose dims are symbolic names bound at launch or static integers.

    A kernel is a `func.func` carrying `tile.num_warps` and `tile.grid`
    (a symbol naming the grid function, which takes the kernel's arguments and
    returns the three grid sizes as i32). Each kernel argument carries its
    source name in `tile.name`.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasConstantMaterializer = 1;
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // FLASH_TILE_DIALECT_TD
