//===- IndexBuilder.h - i32 index arithmetic that builds IR -----*- C++ -*-===//
//
// `IndexValue` is an integer type for the layout functions of
// dialect/Tile/LayoutFunctions.h: its operators + * / % ^ (with int64_t and with
// itself) emit `arith` ops on i32, folding constants as they go, so that the
// coordinate formulas are written once and evaluated both at compile time
// (int64_t) and in the kernel (IndexValue). All values are non-negative
// (warp, lane, coordinates), so / and % are unsigned.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_CONVERSION_TILETOSIMT_INDEXBUILDER_H
#define FLASH_LIB_CONVERSION_TILETOSIMT_INDEXBUILDER_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <cstdint>
#include <optional>

namespace flash::simt {

/// Where the ops of an IndexValue go.
struct IndexBuilder {
  mlir::OpBuilder &builder;
  mlir::Location loc;
};

class IndexValue {
public:
  IndexValue() = default;
  IndexValue(IndexBuilder *ib, mlir::Value value) : ib(ib), value(value) {
    if (auto c = value.getDefiningOp<mlir::arith::ConstantIntOp>())
      constant = c.value();
  }
  IndexValue(IndexBuilder *ib, int64_t c) : ib(ib), constant(c) {}

  std::optional<int64_t> getConstant() const { return constant; }
  IndexBuilder *getBuilder() const { return ib; }

  /// The i32 value (materializes a constant on demand).
  mlir::Value get() const {
    if (value)
      return value;
    return mlir::arith::ConstantIntOp::create(ib->builder, ib->loc, *constant,
                                              32);
  }
  operator mlir::Value() const { return get(); }

  friend IndexValue operator+(const IndexValue &a, const IndexValue &b) {
    if (a.constant && b.constant)
      return {a.ib, *a.constant + *b.constant};
    if (a.constant == 0)
      return b;
    if (b.constant == 0)
      return a;
    return a.emitNoSignedWrap<mlir::arith::AddIOp>(b);
  }
  friend IndexValue operator*(const IndexValue &a, const IndexValue &b) {
    if (a.constant && b.constant)
      return {a.ib, *a.constant * *b.constant};
    if (a.constant == 0 || b.constant == 0)
      return {a.ib, int64_t(0)};
    if (a.constant == 1)
      return b;
    if (b.constant == 1)
      return a;
    return a.emitNoSignedWrap<mlir::arith::MulIOp>(b);
  }
  friend IndexValue operator/(const IndexValue &a, const IndexValue &b) {
    if (a.constant && b.constant)
      return {a.ib, *a.constant / *b.constant};
    if (a.constant == 0 || b.constant == 1)
      return a;
    return a.emit<mlir::arith::DivUIOp>(b);
  }
  friend IndexValue operator%(const IndexValue &a, const IndexValue &b) {
    if (a.constant && b.constant)
      return {a.ib, *a.constant % *b.constant};
    if (a.constant == 0 || b.constant == 1)
      return {a.ib, int64_t(0)};
    return a.emit<mlir::arith::RemUIOp>(b);
  }

  /// Swizzled shared-memory offsets (see layout::swizzledOffset).
  friend IndexValue operator^(const IndexValue &a, const IndexValue &b) {
    if (a.constant && b.constant)
      return {a.ib, *a.constant ^ *b.constant};
    if (a.constant == 0)
      return b;
    if (b.constant == 0)
      return a;
    return a.emit<mlir::arith::XOrIOp>(b);
  }

#define FLASH_INDEX_MIXED(OP)                                                  \
  friend IndexValue operator OP(const IndexValue &a, int64_t b) {              \
    return a OP IndexValue(a.ib, b);                                           \
  }                                                                            \
  friend IndexValue operator OP(int64_t a, const IndexValue &b) {              \
    return IndexValue(b.ib, a) OP b;                                           \
  }
  FLASH_INDEX_MIXED(+)
  FLASH_INDEX_MIXED(*)
  FLASH_INDEX_MIXED(/)
  FLASH_INDEX_MIXED(%)
  FLASH_INDEX_MIXED(^)
#undef FLASH_INDEX_MIXED

private:
  /// Index sums and products never leave i32 (dims and offsets are i32, tiles
  /// are small); saying so lets LLVM move constants through the sign
  /// extension into address offsets.
  template <typename OpTy>
  IndexValue emitNoSignedWrap(const IndexValue &other) const {
    IndexBuilder *b = ib ? ib : other.ib;
    return {b, OpTy::create(b->builder, b->loc, get(), other.get(),
                            mlir::arith::IntegerOverflowFlags::nsw)
                   .getResult()};
  }
  template <typename OpTy>
  IndexValue emit(const IndexValue &other) const {
    IndexBuilder *b = ib ? ib : other.ib;
    return {b, OpTy::create(b->builder, b->loc, get(), other.get()).getResult()};
  }

  IndexBuilder *ib = nullptr;
  mlir::Value value;
  std::optional<int64_t> constant;
};

} // namespace flash::simt

#endif // FLASH_LIB_CONVERSION_TILETOSIMT_INDEXBUILDER_H
