#ifndef FLASH_TILE_LAYOUTS_TD
#define FLASH_TILE_LAYOUTS_TD

include "flashc/Dialect/Tile/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/TensorEncoding.td"

def Tile_LayoutAttrInterface : AttrInterface<"LayoutAttrInterface"> {
  let cppNamespace = "::flash::tile";
  let description = [{
    A distributed layout of a tile over the threads of a CTA: which register
    of which lane of which warp holds each element. Every layout is one
    function (warp, lane, register) -> tile coordinate, defined once in
    LayoutFunctions.h; everything else derives from it.
  }];
  let methods = [
    InterfaceMethod<"Why a tile of `shape` cannot use this layout; empty "
                    "when it can.",
      "std::string", "checkShape", (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"Elements each thread holds for a tile of `shape`.",
      "int64_t", "getNumRegisters", (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<"Warps the layout spreads a tile over.",
      "int64_t", "getNumWarps", (ins)>,
    InterfaceMethod<"The tile coordinate that register `reg` of lane `lane` "
                    "of warp `warp` holds.",
      "::flash::tile::layout::Coord", "getCoord",
      (ins "::llvm::ArrayRef<int64_t>":$shape, "int64_t":$warp,
           "int64_t":$lane, "int64_t":$reg)>,
  ];
}

class Tile_LayoutAttr<string name, string attrMnemonic>
    : AttrDef<Tile_Dialect, name, [
        DeclareAttrInterfaceMethods<Tile_LayoutAttrInterface>,
        DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = attrMnemonic;
}

def Tile_MmaLayoutAttr : Tile_LayoutAttr<"MmaLayout", "mma"> {
  let summary = "accumulator layout of a TiledMMA of mma.sync m16n8k16";
  let description = [{
    The layout of an MMA's accumulator, and of every element-wise tile
    computed around it (masks, scores, probabilities: any element type).
    A TiledMMA: the m16n8k16 atom (f16 or bf16 operands, f32 accumulator)
    repeated over `warps` (AtomLayoutMNK: warps along M, N, K) and, within
    each warp, over `values` (ValueLayoutMNK: register repeats of the atom
    along M, N, K). One step covers (16 wM vM) x (8 wN vN); larger tiles
    repeat the step in registers, smaller ones are held by several warps,
    and any other size is padded to whole steps: the registers in the
    padding hold copies of the tile's first elements (LayoutFunctions.h).
    Warp w sits at (w % wM, w / wM % wN) and owns 16 vM consecutive rows and
    8 vN consecutive columns of each step.

    Thread map of the accumulator (C/D) for one atom, lane = 4 g + q:
    ```
    register i (0..3) of lane l -> row g + 8 (i / 2), col 2 q + i % 2
          col: 0    1    2    3   ...  7
    row 0:   T0.0 T0.1 T1.0 T1.1 ... T3.1
    row 1:   T4.0 T4.1 T5.0 T5.1 ... T7.1
    ...
    row 8:   T0.2 T0.3 T1.2 T1.3 ... T3.3
    ```
    Register order, fastest first: atom element, value along N, value
    along M, repeat along N, repeat along M. A tile with one dim of size 1
    (a row or column of a broadcast, a [1, 1] scalar) holds what the slice
    layout of its other dim holds.

    ```mlir
    tensor<128x64xf32, #tile.mma<warps = [4, 1, 1], values = [2, 1, 1]>>
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$warps,
                        ArrayRefParameter<"int64_t">:$values);
  let assemblyFormat =
      "`<` `warps` `=` `[` $warps `]` `,` `values` `=` `[` $values `]` `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    ::flash::tile::layout::MmaParams getParams() const;
  }];
}

def Tile_DotOperandLayoutAttr : Tile_LayoutAttr<"DotOperandLayout", "dot_op"> {
  let summary = "A (0) or B (1) operand layout of an MMA layout";
  let description = [{
    The registers mma.sync reads as operand A (M x K tile) or B (K x N tile)
    for the TiledMMA `parent`. Elements are 16-bit; two consecutive
    registers pack into one 32-bit mma register, low half first.

    Thread map for one atom, lane = 4 g + q, element e = 2 r + h:
    ```
    A: e -> row g + 8 (r % 2), col 2 q + h + 8 (r / 2)   (8 per lane)
    B: e -> k 2 q + h + 8 r,   n g                      (4 per lane)
    ```
    With `transposed`, the tile is stored the other way round (N x K for B,
    as a K tile read row by row for Q * K^T): element (i, j) of the tile is
    held where the operand's (j, i) is.

    Warps along N hold copies of A, warps along M copies of B. With warps
    along M only, the accumulator layout and the A layout put every element
    in the same thread: S becomes P's operand by a register repack. Like
    the accumulator layout, any size is padded to whole steps; an MMA reads
    the padding along K as zeros.
  }];
  let parameters = (ins "unsigned":$operandIndex,
                        "MmaLayoutAttr":$parent,
                        DefaultValuedParameter<"bool", "false">:$transposed);
  let assemblyFormat =
      "`<` $operandIndex `,` $parent (`,` `transposed` `=` $transposed^)? `>`";
  let genVerifyDecl = 1;
}

def Tile_SliceLayoutAttr : Tile_LayoutAttr<"SliceLayout", "slice"> {
  let summary = "a layout with one dim removed: the layout of a reduction";
  let description = [{
    The layout of a reduction along `dim` of a tile in the `parent` layout
    (#tile.mma or #tile.blocked): with an MMA parent and dim = 1, the per-row
    vectors of attention (running max and sum). Every thread holds the rows
    (columns) it holds in the parent, so the 4 lanes of a quad hold the same
    row values (and warps along the removed dim hold copies).
    ```
    dim = 1: register a + 2 (v + vM p) -> row 16 vM wm + 16 v + g + 8 a (+ steps)
    ```
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` $dim `,` $parent `>`";
  let genVerifyDecl = 1;
}

def Tile_BlockedLayoutAttr : Tile_LayoutAttr<"BlockedLayout", "blocked"> {
  let summary = "each thread holds a contiguous block: coalesced global access";
  let description = [{
    Triton's blocked layout: along each dim a thread holds `sizePerThread`
    contiguous elements, `threadsPerWarp` lanes and `warpsPerCTA` warps tile
    the dim, and the tile repeats in registers. `order` lists dims fastest
    first (lane and register numbering). For f16 rows, sizePerThread 8 along
    the row gives 16-byte vector accesses.
    ```
    #tile.blocked<sizePerThread = [1, 8], threadsPerWarp = [4, 8],
                  warpsPerCTA = [4, 1], order = [1, 0]>
    lane l of warp w, register r -> row 4 w + l / 8 + 16 (r / 8), col 8 (l % 8) + r % 8
    ```
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$sizePerThread,
                        ArrayRefParameter<"int64_t">:$threadsPerWarp,
                        ArrayRefParameter<"int64_t">:$warpsPerCTA,
                        ArrayRefParameter<"int64_t">:$order);
  let assemblyFormat = [{
    `<` `sizePerThread` `=` `[` $sizePerThread `]` `,`
        `threadsPerWarp` `=` `[` $threadsPerWarp `]` `,`
        `warpsPerCTA` `=` `[` $warpsPerCTA `]` `,`
        `order` `=` `[` $order `]` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    ::flash::tile::layout::BlockedParams getParams() const;
  }];
}

#endif // FLASH_TILE_LAYOUTS_TD
