#ifndef FLASH_TILE_TYPES_TD
#define FLASH_TILE_TYPES_TD

include "dialect/Tile/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Tile_GlobalType : TypeDef<Tile_Dialect, "Global"> {
  let mnemonic = "global";
  let summary = "a row-major global-memory tensor with symbolic or static dims";
  let description = [{
    A kernel parameter living in global memory, row-major and contiguous.
    Each dim is either a symbol (`Nq`), bound from the argument's shape at
    launch, or a static size fixed at compile time (`64`). Dims with the same
    symbol in different parameters must be equal at launch.

    ```mlir
    !tile.global<[B, H, Nq, 64], f16>
    ```
  }];
  let parameters = (ins
    "::mlir::Type":$elementType,
    ArrayRefParameter<"int64_t">:$shape,
    ArrayRefParameter<"::mlir::StringAttr">:$dimNames);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    unsigned getRank() const { return getShape().size(); }
    bool isStaticDim(unsigned dim) const {
      return getShape()[dim] != ::mlir::ShapedType::kDynamic;
    }
    /// The dim's symbol, or its size printed as text when static.
    std::string getDimLabel(unsigned dim) const;
  }];
}

def Tile_ReduceKind : I32EnumAttr<"ReduceKind", "tile reduction", [
    I32EnumAttrCase<"Max", 0, "max">,
    I32EnumAttrCase<"Sum", 1, "sum">]> {
  let cppNamespace = "::flash::tile";
}

def Tile_Normalization : I32EnumAttr<"Normalization",
    "when online softmax divides by the running sum", [
    I32EnumAttrCase<"Eager", 0, "eager">,
    I32EnumAttrCase<"Deferred", 1, "deferred">]> {
  let cppNamespace = "::flash::tile";
}

#endif // FLASH_TILE_TYPES_TD
