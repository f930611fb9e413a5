//===- Value.cpp ----------------------------------------------------------===//

#include "Sema/Value.h"
#include "Sema/Types.h"

#include "AST.h"

using namespace flash;
using namespace flash::frontend;

bool Val::isRuntimeScalar() const { return kind == Runtime && !isTile(v.getType()); }

std::string frontend::describe(const Val &v) {
  switch (v.kind) {
  case Val::Int:
    return "an integer constant";
  case Val::Float:
    return "a float constant";
  case Val::Bool:
    return "a bool constant";
  case Val::Runtime:
    return (isTile(v.v.getType()) ? "a tile of type " : "a scalar of type ") +
           typeStr(v.v.getType());
  case Val::Global:
    return "a tensor parameter";
  case Val::Type:
    return "the type " + eltName(v.type);
  case Val::Function:
    return "the function '" + v.fn->name + "'";
  case Val::Tuple:
    if (v.elems.empty())
      return "no value";
    return "a tuple of " + std::to_string(v.elems.size()) + " values";
  }
  return "a value";
}
