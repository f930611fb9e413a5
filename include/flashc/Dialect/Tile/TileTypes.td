#ifndef FLASH_TILE_TYPES_TD
#define FLASH_TILE_TYPES_TD

include "flashc/Dialect/Tile/TileDialect.td"
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

def Tile_SharedType : TypeDef<Tile_Dialect, "Shared"> {
  let mnemonic = "shared";
  let summary = "a multi-slot shared-memory buffer of 2-D tiles, XOR-swizzled";
  let description = [{
    A CTA-wide shared-memory buffer of `[slots, rows, cols]` 16-bit elements:
    `slots` copies of one `rows x cols` tile (the stages of a software
    pipeline; 1 when the buffer is not pipelined). Rows are row-major; each
    row is a whole number of 16-byte chunks, and chunk `c` of row `r` of a
    slot is stored at chunk `c ^ ((r / per_phase) % max_phase)` of that row,
    so that eight 16-byte accesses to one chunk column of eight consecutive
    rows (an ldmatrix matrix, or a cp.async phase) hit distinct banks. Byte
    offset of element (s, r, c), with E bytes per element:

    ```
    s * rows * cols * E + r * cols * E
      + ((c * E / 16) ^ ((r / per_phase) % max_phase)) * 16 + (c * E) % 16
    ```

    `swizzle = [1, 1]` (printed as nothing) is the plain row-major layout.
    Where the buffer lives is decided by `tile-allocate-shared`.

    `block_cols = W` (0, printed as nothing: one block) stores a slot as
    `cols / W` column blocks one after another, each a row-major
    `rows x W` tile swizzled as above over its rows of `W * E` bytes: the
    layout of a wgmma operand whose rows are longer than its swizzle span
    of 32, 64 or 128 bytes (each block one TMA box). Byte offset of (s, r, c):

    ```
    s * rows * cols * E + (c / W) * rows * W * E + r * W * E
      + (((c % W) * E / 16) ^ ((r / per_phase) % max_phase)) * 16 + (c * E) % 16
    ```

    ```mlir
    !tile.shared<[2, 64, 64], f16, swizzle = [1, 8]>
    !tile.shared<[2, 64, 128], f16, swizzle = [1, 8], block_cols = 64>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType,
                        "int64_t":$perPhase, "int64_t":$maxPhase,
                        "int64_t":$blockCols);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getSlots() const { return getShape()[0]; }
    int64_t getRows() const { return getShape()[1]; }
    int64_t getCols() const { return getShape()[2]; }
    int64_t getElementBytes() const {
      return getElementType().getIntOrFloatBitWidth() / 8;
    }
    int64_t getRowBytes() const { return getCols() * getElementBytes(); }
    /// Whether the slot is stored as column blocks (block_cols > 0).
    bool isColumnBlocked() const { return getBlockCols() > 0; }
    /// Bytes of one stored row: of a column block, or of the whole row.
    int64_t getStoredRowBytes() const {
      return isColumnBlocked() ? getBlockCols() * getElementBytes()
                               : getRowBytes();
    }
    int64_t getSlotBytes() const { return getRows() * getRowBytes(); }
    int64_t getBytes() const { return getSlots() * getSlotBytes(); }
    /// The shape of one slot, [rows, cols].
    ::llvm::ArrayRef<int64_t> getSlotShape() const {
      return getShape().drop_front();
    }
    /// Byte offset of element (slot, row, col) from the buffer's start.
    int64_t byteOffset(int64_t slot, int64_t row, int64_t col) const;
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
