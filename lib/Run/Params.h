//===- Params.h - a kernel's parameters as `flashc run` binds them -*- C++
//-*-===//
//
// The parameters come from the tile-level kernel's signature (interp) or from
// the SIMT kernel's `flashc.params` attribute (emulate, cuda); either way the
// user binds them by name, and each keeps the value it was bound to.
//
//===----------------------------------------------------------------------===//
#ifndef FLASH_LIB_RUN_PARAMS_H
#define FLASH_LIB_RUN_PARAMS_H

#include "flashc/Interp/Interpreter.h"
#include "flashc/Runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace flash::run {

class Diagnostics;

struct Param {
  std::string name;
  unsigned index = 0;
  std::string declared; // the declared type, for messages
  bool tensor = false;
  mlir::Type elemType;             // element type (tensors) or scalar type
  std::vector<int64_t> staticDims; // tensors: size, or -1 for a symbol
  std::vector<std::string> dimNames;
  interp::ElemType elem;
  // What the user bound: the --arg text, then the loaded array or number.
  bool given = false;
  bool inMemory = false; // `array` came with the request, not from a file
  std::string text;
  npy::Array array;
  double scalar = 0;
};

/// The parameters in declaration order, found by name.
class ParamList {
public:
  /// Checks the parameter's element type and name, then records it.
  bool add(Param param, Diagnostics &diag);
  Param *find(llvm::StringRef name);
  const Param &get(llvm::StringRef name) const;
  /// "Q, K, V" or "(none)", for messages.
  std::string names() const;

  std::vector<Param>::iterator begin() { return params.begin(); }
  std::vector<Param>::iterator end() { return params.end(); }
  std::vector<Param>::const_iterator begin() const { return params.begin(); }
  std::vector<Param>::const_iterator end() const { return params.end(); }
  size_t size() const { return params.size(); }

private:
  std::vector<Param> params;
  llvm::StringMap<unsigned> byName;
};

/// The parameters of a tile-level kernel, from its signature.
bool collectTileParams(mlir::func::FuncOp kernel, ParamList &params,
                       Diagnostics &diag);

/// The parameters of a SIMT kernel, from its `flashc.params` attribute.
bool collectSIMTParams(mlir::gpu::GPUFuncOp kernel, ParamList &params,
                       Diagnostics &diag);

/// How messages spell a type: "f16", "!tile.global<[N], f32>".
std::string typeText(mlir::Type type);

/// The .npy dtype that holds `elem`, if any.
std::optional<npy::DType> npyDTypeFor(interp::ElemType elem);

} // namespace flash::run

#endif // FLASH_LIB_RUN_PARAMS_H
