"""flashc.flex_attention: PyTorch FlexAttention's interface over
kernels/lib/attention.tile's attention(), whose score_mod and mask_mod
function parameters take the modifiers (docs/python.md, "flex_attention").

A modifier is tile source (text defining `fn score_mod(...)` or `fn
mask_mod(...)`) or a Python function, traced to a tile function by calling
it once on symbolic values (_Value) that record each operation as a `let`
of the function's body. Python operators, the functions of this module
(where, exp, tanh, ...), NumPy's ufuncs and np.where, and torch's functions
(through __torch_function__) are traced, and so is indexing a Captured
array (a gather of the kernel's ModTensor, or a lookup by a computed index);
what has no tile form (Python control flow on a traced value, arithmetic
with an array) raises TraceError naming the modifier and the operation.
flex_attention_backward traces score_mod again with its derivative with
respect to the score, for kernels/lib/attention_bwd.tile.
"""
import functools
import math
import re
import sys

import numpy as np

import importlib
from .kernel import DEFAULT_ARCH
from .kernel import compile as _compile

# The module (the package's name `attention` is its function).
_attention = importlib.import_module(".attention", __package__)


class TraceError(TypeError):
    """A modifier does something that has no tile form."""


_UNARY = {"exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "sqrt": "sqrt",
          "tanh": "tanh", "sigmoid": "sigmoid"}


class _Tracer:
    """The body of one traced function: its lets, in order. With
    `differentiate` each value derived from the score also carries its
    derivative with respect to the score (forward mode: a let per step, as
    (text, dims) in _Value.grad); `transposed` lays the block out as the
    backward's dK/dV program holds it, keys along dim 0 ([N, M])."""

    def __init__(self, what, differentiate=False, transposed=False):
        self.what = what
        self.lines = []
        self.tensor = None
        self.differentiate = differentiate
        self.transposed = transposed
        self.lookup = False

    def shape(self):
        """The block's shape as the tile language writes it."""
        return "[N, M]" if self.transposed else "[M, N]"

    def derive(self, expr, *dims):
        """Binds a derivative: (name, dims)."""
        name = f"d{len(self.lines)}"
        self.lines.append(f"  let {name} = {expr};")
        return name, frozenset().union(*dims)

    def capture(self, array):
        """Records the tensor a gather reads: ModTensor, one per kernel."""
        if self.tensor is not None and self.tensor is not array:
            self.fail("reads two captured tensors: attention() passes its modifiers one "
                      "(ModTensor)")
        self.tensor = array

    def bind(self, expr, kind, dims, grad=None):
        name = f"v{len(self.lines)}"
        self.lines.append(f"  let {name} = {expr};")
        value = _Value(self, name, kind, dims)
        value.grad = grad
        return value

    def fail(self, message):
        raise TraceError(f"{self.what}: {message}")


def _literal(value, kind):
    """A Python number as a tile literal of `kind` (f32, i32 or bool)."""
    if kind == "bool":
        return "true" if value else "false"
    if kind == "i32":
        value = int(value)
        if not -2**31 <= value < 2**31:
            raise OverflowError(f"{value} does not fit an i32")
        return str(value) if value >= 0 else f"(-{-value})"
    value = float(value)
    if math.isnan(value):
        raise ValueError("NaN has no tile literal")
    text = "inf" if math.isinf(value) else repr(abs(value))
    return f"(-{text})" if math.copysign(1.0, value) < 0 else text


def _number(x):
    """x as a Python bool, int or float, or None when it is no number."""
    if isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, np.generic) and x.ndim == 0:
        return x.item()
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor) and x.ndim == 0:
        return x.item()
    return None


def _kind_of(number):
    if isinstance(number, bool):
        return "bool"
    return "i32" if isinstance(number, int) else "f32"


class _Value:
    """A traced tile or scalar: its name in the body, element type (f32, i32
    or bool) and which of the block's dims it spans (M: query rows, N:
    keys)."""

    __array_priority__ = 1000

    def __init__(self, tracer, text, kind, dims, source=None, grad=None):
        self._tracer = tracer
        self.text = text
        self.kind = kind
        self.dims = frozenset(dims)
        # (name, dim) of the arguments b, h, q_idx, kv_idx: a gather's entries.
        self.source = source
        # d self / d score as (text, dims) when differentiating; None: 0.
        self.grad = grad

    # Operands ---------------------------------------------------------------
    def _operand(self, other, op):
        """(text, kind, dims) of an operand combined with self."""
        if isinstance(other, _Value):
            return other.text, other.kind, other.dims
        number = _number(other)
        if number is None:
            what = type(other).__name__
            if hasattr(other, "shape"):
                what = f"a captured {what} of shape {tuple(other.shape)}"
            self._tracer.fail(f"'{op}' with {what} cannot be traced: a modifier combines "
                              "its arguments and numbers (a captured array has no tile "
                              "form in the kernel)")
        kind = _kind_of(number)
        if kind != "bool" and self.kind == "f32":
            kind = "f32"
        return _literal(number, kind), kind, frozenset()

    def _as(self, text, kind, target):
        if kind == target:
            return text
        if target == "f32" and kind in ("i32", "bool"):
            return f"cast({text}, f32)"
        if target == "i32" and kind == "bool":
            return f"cast({text}, i32)"
        return text

    def _binary(self, other, op, tile_op, result=None, reverse=False):
        text, kind, dims = self._operand(other, op)
        kinds = {self.kind, kind}
        if "bool" in kinds and kinds != {"bool"}:
            if op in ("&", "|", "==", "!="):
                self._tracer.fail(f"'{op}' between a bool and a number cannot be traced: "
                                  "compare the number first")
            # Arithmetic on masks: as numbers, as torch computes it.
        common = "f32" if "f32" in kinds else "i32" if "i32" in kinds else "bool"
        if op in ("/",):
            common = "f32"
        a = self._as(self.text, self.kind, common)
        b = self._as(text, kind, common)
        if reverse:
            a, b = b, a
        return self._tracer.bind(f"{a} {tile_op} {b}", result or common, self.dims | dims)

    def _arith(self, other, op, reverse=False):
        if self.kind == "bool" and (isinstance(other, _Value) and other.kind == "bool"
                                    or isinstance(_number(other), bool)):
            self._tracer.fail(f"'{op}' on two masks cannot be traced: use & and |")
        result = self._binary(other, op, op, reverse=reverse)
        if self._tracer.differentiate:
            a, b = (other, self) if reverse else (self, other)
            result.grad = _arith_grad(self._tracer, op, a, b, result)
        return result

    def __add__(self, o): return self._arith(o, "+")
    def __radd__(self, o): return self._arith(o, "+", True)
    def __sub__(self, o): return self._arith(o, "-")
    def __rsub__(self, o): return self._arith(o, "-", True)
    def __mul__(self, o): return self._arith(o, "*")
    def __rmul__(self, o): return self._arith(o, "*", True)
    def __truediv__(self, o): return self._arith(o, "/")
    def __rtruediv__(self, o): return self._arith(o, "/", True)

    def _int_divisor(self, other, op):
        number = _number(other)
        if self.kind != "i32" or not isinstance(number, int) or isinstance(number, bool) \
                or number <= 0:
            self._tracer.fail(f"'{op}' is traced for an integer index by a positive int "
                              f"constant only, not {self.kind} {op} {other!r}")
        return number

    def __floordiv__(self, o):
        d = self._int_divisor(o, "//")
        # Python floors; the tile language truncates toward zero.
        x = self.text
        return self._tracer.bind(f"where({x} < 0, ({x} - {d - 1}) / {d}, {x} / {d})", "i32",
                                 self.dims)

    def __mod__(self, o):
        d = self._int_divisor(o, "%")
        return self._tracer.bind(f"({self.text} % {d} + {d}) % {d}", "i32", self.dims)

    def __pow__(self, o):
        number = _number(o)
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 8:
            self._tracer.fail(f"'**' is traced for small int exponents only, not {o!r}")
        result = self
        for _ in range(number - 1):
            result = result * self
        return result

    def __neg__(self):
        if self.kind == "bool":
            self._tracer.fail("'-' on a mask cannot be traced: use ~")
        grad = self.grad and self._tracer.derive(f"-{self.grad[0]}", self.grad[1])
        return self._tracer.bind(f"-{self.text}", self.kind, self.dims, grad)

    def __pos__(self):
        return self

    def __abs__(self):
        grad = self.grad and self._tracer.derive(
            f"where({self.text} < 0.0, -{self.grad[0]}, {self.grad[0]})", self.dims,
            self.grad[1])
        return self._tracer.bind(f"abs({self.text})", self.kind, self.dims, grad)

    def _compare(self, other, op):
        if self.grad or isinstance(other, _Value) and other.grad:
            self._tracer.fail(f"'{op}' on a value computed from the score has no derivative: "
                              "its backward cannot be traced (min, max and clamp of the "
                              "score have one)")
        return self._binary(other, op, op, result="bool")

    def __lt__(self, o): return self._compare(o, "<")
    def __le__(self, o): return self._compare(o, "<=")
    def __gt__(self, o): return self._compare(o, ">")
    def __ge__(self, o): return self._compare(o, ">=")
    def __eq__(self, o): return self._compare(o, "==")  # noqa: E704
    def __ne__(self, o): return self._compare(o, "!=")
    __hash__ = object.__hash__

    def _logic(self, other, op, tile_op):
        text, kind, dims = self._operand(other, op)
        if self.kind != "bool" or kind != "bool":
            self._tracer.fail(f"'{op}' is traced on masks (bool values) only, not "
                              f"{self.kind} {op} {kind}")
        return self._tracer.bind(f"{self.text} {tile_op} {text}", "bool", self.dims | dims)

    def __and__(self, o): return self._logic(o, "&", "&&")
    __rand__ = __and__
    def __or__(self, o): return self._logic(o, "|", "||")
    __ror__ = __or__

    def __invert__(self):
        if self.kind != "bool":
            self._tracer.fail("'~' is traced on masks (bool values) only")
        return self._tracer.bind(f"!{self.text}", "bool", self.dims)

    def __bool__(self):
        self._tracer.fail("a traced value has no Python truth value (if, and, or, not, "
                          "chained comparisons): use where(), &, | and ~")

    def __index__(self):
        self._tracer.fail("indexing a captured array by a traced index cannot be traced: "
                          "wrap the array as flashc.flex.Captured(array)")

    def __int__(self):
        self._tracer.fail("int() of a traced value cannot be traced")

    def __float__(self):
        self._tracer.fail("float() of a traced value cannot be traced")

    def __iter__(self):
        self._tracer.fail("iterating over a traced value cannot be traced")

    def __getitem__(self, index):
        self._tracer.fail("indexing a traced value cannot be traced")

    # Methods of torch tensors and NumPy arrays the modifiers use ------------
    # (exp, log, tanh and the other math methods are the module's functions,
    # attached after them.)
    def abs(self): return abs(self)
    def float(self): return self._cast("f32")
    def int(self): return self._cast("i32")
    def long(self): return self._cast("i32")

    def astype(self, dtype):
        """NumPy's cast: to f32, i32 (any int) or bool."""
        kind = {"f": "f32", "i": "i32", "u": "i32", "b": "bool"}.get(np.dtype(dtype).kind)
        if kind is None:
            self._tracer.fail(f"astype({dtype!r}) cannot be traced: float, int or bool")
        return self.bool() if kind == "bool" else self._cast(kind)

    def floor(self):
        """The largest integer <= self (an f32 value)."""
        if self.kind != "f32":
            return self
        if self.grad:
            self._tracer.fail("floor of a value computed from the score has no derivative: "
                              "its backward cannot be traced")
        whole = self._tracer.bind(f"cast({self.text}, i32)", "i32", self.dims)
        return self._tracer.bind(f"cast(where(cast({whole.text}, f32) > {self.text}, "
                                 f"{whole.text} - 1, {whole.text}), f32)", "f32", self.dims)
    def bool(self): return self != 0 if self.kind != "bool" else self
    def clamp(self, min=None, max=None): return clamp(self, min, max)

    def _cast(self, kind):
        if kind == self.kind:
            return self
        if self.grad:
            self._tracer.fail(f"a cast of a value computed from the score to {kind} has no "
                              "derivative: its backward cannot be traced")
        return self._tracer.bind(f"cast({self.text}, {kind})", kind, self.dims)

    # NumPy and torch dispatch -----------------------------------------------
    _UFUNCS = {"add": "__add__", "subtract": "__sub__", "multiply": "__mul__",
               "true_divide": "__truediv__", "divide": "__truediv__",
               "floor_divide": "__floordiv__", "remainder": "__mod__",
               "less": "__lt__", "less_equal": "__le__", "greater": "__gt__",
               "greater_equal": "__ge__", "equal": "__eq__", "not_equal": "__ne__",
               "logical_and": "__and__", "bitwise_and": "__and__",
               "logical_or": "__or__", "bitwise_or": "__or__", "power": "__pow__"}

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        name = ufunc.__name__
        if method != "__call__" or kwargs:
            self._tracer.fail(f"numpy.{name}.{method} cannot be traced")
        return _dispatch(self._tracer, "numpy." + name, name, inputs)

    def __array_function__(self, func, types, args, kwargs):
        name = func.__name__
        if name in ("where", "clip", "minimum", "maximum") and not kwargs:
            return _FUNCTIONS[name](*args)
        self._tracer.fail(f"numpy.{name} cannot be traced")

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        name = getattr(func, "__name__", str(func))
        tracer = next(a._tracer for a in _flatten(args) if isinstance(a, _Value))
        if name == "__getitem__" and not isinstance(args[0], _Value):
            index = args[1] if isinstance(args[1], tuple) else (args[1],)
            return _gather(tracer, args[0], index)
        if kwargs:
            if name == "clamp":
                return clamp(*args, **kwargs)
            tracer.fail(f"torch.{name} with keywords {sorted(kwargs)} cannot be traced")
        aliases = {"sub": "subtract", "mul": "multiply", "div": "true_divide",
                   "__add__": "add", "__radd__": "radd", "__sub__": "subtract",
                   "__rsub__": "rsub", "__mul__": "multiply", "__rmul__": "rmul",
                   "__truediv__": "true_divide", "__rtruediv__": "rtruediv",
                   "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                   "eq": "equal", "ne": "not_equal", "__lt__": "less", "__le__": "less_equal",
                   "__gt__": "greater", "__ge__": "greater_equal", "__eq__": "equal",
                   "__ne__": "not_equal", "__and__": "logical_and", "__or__": "logical_or",
                   "__invert__": "logical_not", "__neg__": "negative", "neg": "negative",
                   "__abs__": "absolute", "abs": "absolute"}
        if name in ("where", "clamp", "minimum", "maximum"):
            return _FUNCTIONS[name](*args)
        return _dispatch(tracer, "torch." + name, aliases.get(name, name), args)


def _flatten(args):
    for a in args:
        if isinstance(a, (tuple, list)):
            yield from _flatten(a)
        else:
            yield a


def _dispatch(tracer, full_name, name, inputs):
    """A NumPy ufunc or torch function of that (NumPy) name on `inputs`."""
    if name in _Value._UFUNCS and len(inputs) == 2:
        a, b = inputs
        if isinstance(a, _Value):
            return getattr(a, _Value._UFUNCS[name])(b)
        reflected = {"__add__": "__radd__", "__sub__": "__rsub__", "__mul__": "__rmul__",
                     "__truediv__": "__rtruediv__", "__and__": "__rand__",
                     "__or__": "__ror__", "__lt__": "__gt__", "__le__": "__ge__",
                     "__gt__": "__lt__", "__ge__": "__le__", "__eq__": "__eq__",
                     "__ne__": "__ne__"}.get(_Value._UFUNCS[name])
        if reflected is None:
            tracer.fail(f"{full_name} with a traced right operand cannot be traced")
        return getattr(b, reflected)(a)
    if name in ("radd", "rsub", "rmul", "rtruediv") and len(inputs) == 2:
        return getattr(inputs[0], f"__{name}__")(inputs[1])
    if len(inputs) == 1 and isinstance(inputs[0], _Value):
        x = inputs[0]
        if name in _UNARY:
            return _math(name, x)
        if name == "floor":
            return x.floor()
        if name == "negative":
            return -x
        if name == "absolute":
            return abs(x)
        if name in ("logical_not", "invert", "bitwise_not"):
            return ~x
    if name in ("minimum", "maximum", "fmin", "fmax") and len(inputs) == 2:
        return _FUNCTIONS[name.replace("fmin", "minimum").replace("fmax", "maximum")](*inputs)
    tracer.fail(f"{full_name} cannot be traced")


# d f(x) / dx of the unary functions, in x and r = f(x).
_UNARY_GRADS = {"exp": "{r}", "exp2": "{r} * 0.6931471805599453", "log": "1.0 / {x}",
                "log2": "1.4426950408889634 / {x}", "sqrt": "0.5 / {r}",
                "tanh": "(1.0 - {r} * {r})", "sigmoid": "{r} * (1.0 - {r})"}


def _math(name, x):
    if not isinstance(x, _Value):
        return getattr(np, name)(x) if name != "sigmoid" else 1.0 / (1.0 + np.exp(-x))
    if x.kind == "bool":
        x._tracer.fail(f"{name} of a mask cannot be traced")
    result = x._tracer.bind(f"{_UNARY[name]}({x._as(x.text, x.kind, 'f32')})", "f32", x.dims)
    if x.grad:
        slope = _UNARY_GRADS[name].format(x=x.text, r=result.text)
        result.grad = x._tracer.derive(f"{slope} * {x.grad[0]}", x.dims, x.grad[1])
    return result


def _f32_text(x):
    """A traced value or a number as an f32 operand."""
    if isinstance(x, _Value):
        return x._as(x.text, x.kind, "f32")
    return _literal(_number(x), "f32")


def _dims(x):
    return x.dims if isinstance(x, _Value) else frozenset()


def _grad(x):
    return x.grad if isinstance(x, _Value) else None


def _arith_grad(tracer, op, a, b, result):
    """The derivative of `a op b` (result) from those of a and b: None when
    neither has one."""
    ga, gb = _grad(a), _grad(b)
    if ga is None and gb is None:
        return None
    ta, tb = _f32_text(a), _f32_text(b)
    if op in ("+", "-"):
        if ga and gb:
            return tracer.derive(f"{ga[0]} {op} {gb[0]}", ga[1], gb[1])
        if ga:
            return ga
        return tracer.derive(f"-{gb[0]}", gb[1]) if op == "-" else gb
    if op == "*":
        terms, dims = [], []
        if ga:
            terms.append(f"{ga[0]} * {tb}")
            dims += [ga[1], _dims(b)]
        if gb:
            terms.append(f"{ta} * {gb[0]}")
            dims += [_dims(a), gb[1]]
        return tracer.derive(" + ".join(terms), *dims)
    # a / b: (da - r db) / b.
    if gb is None:
        return tracer.derive(f"{ga[0]} / {tb}", ga[1], _dims(b))
    top = f"{ga[0]} - {result.text} * {gb[0]}" if ga else f"-{result.text} * {gb[0]}"
    return tracer.derive(f"({top}) / {tb}", result.dims, gb[1], ga[1] if ga else frozenset())


def _traced(*args):
    return next((a for a in args if isinstance(a, _Value)), None)


def where(condition, x, y):
    """torch.where / np.where: x where condition, else y; traced on tile
    values, NumPy's on arrays."""
    first = _traced(condition, x, y)
    if first is None:
        return np.where(condition, x, y)
    tracer = first._tracer
    if not isinstance(condition, _Value):
        number = _number(condition)
        if not isinstance(number, bool):
            tracer.fail("where's condition must be traced or a bool")
        return x if number else y
    if condition.kind != "bool":
        tracer.fail("where's condition must be a mask (bool)")
    parts = []
    for v in (x, y):
        if isinstance(v, _Value):
            parts.append((v.text, v.kind, v.dims))
        else:
            number = _number(v)
            if number is None:
                tracer.fail(f"where with {type(v).__name__} cannot be traced")
            parts.append((number, _kind_of(number), frozenset()))
    kinds = {k for _, k, _ in parts}
    common = "f32" if "f32" in kinds else "i32" if "i32" in kinds else "bool"
    texts = []
    for text, kind, _ in parts:
        if isinstance(text, str):
            texts.append(first._as(text, kind, common))
        else:
            texts.append(_literal(text, common))
    dims = condition.dims | parts[0][2] | parts[1][2]
    result = tracer.bind(f"where({condition.text}, {texts[0]}, {texts[1]})", common, dims)
    gx, gy = _grad(x), _grad(y)
    if gx or gy:
        result.grad = tracer.derive(f"where({condition.text}, {gx[0] if gx else '0.0'}, "
                                    f"{gy[0] if gy else '0.0'})", condition.dims,
                                    *(g[1] for g in (gx, gy) if g))
    return result


def _extreme(name):
    def extreme(a, b):
        if _traced(a, b) is None:
            return getattr(np, name)(a, b)
        x = _traced(a, b)
        other = b if x is a else a
        text, kind, dims = x._operand(other, name)
        common = "f32" if "f32" in (x.kind, kind) else x.kind
        result = x._tracer.bind(f"{name[:3]}({x._as(x.text, x.kind, common)}, "
                                f"{x._as(text, kind, common)})", common, x.dims | dims)
        ga, gb = _grad(a), _grad(b)
        if ga or gb:
            # The derivative of the operand it picks (a where they tie).
            order = "<=" if name == "minimum" else ">="
            result.grad = x._tracer.derive(
                f"where({_f32_text(a)} {order} {_f32_text(b)}, {ga[0] if ga else '0.0'}, "
                f"{gb[0] if gb else '0.0'})", x.dims | dims, *(g[1] for g in (ga, gb) if g))
        return result
    extreme.__name__ = name
    extreme.__doc__ = f"torch.{name} / np.{name}, element-wise; traced on tile values."
    return extreme


minimum = _extreme("minimum")
maximum = _extreme("maximum")


def clamp(x, min=None, max=None):
    """torch.clamp / np.clip."""
    if min is not None:
        x = maximum(x, min)
    if max is not None:
        x = minimum(x, max)
    return x


def exp(x): return _math("exp", x)
def exp2(x): return _math("exp2", x)
def log(x): return _math("log", x)
def log2(x): return _math("log2", x)
def sqrt(x): return _math("sqrt", x)
def tanh(x): return _math("tanh", x)
def sigmoid(x): return _math("sigmoid", x)


def floor(x):
    """torch.floor / np.floor; traced on tile values."""
    return x.floor() if isinstance(x, _Value) else np.floor(x)


for _function in (exp, exp2, log, log2, sqrt, tanh, sigmoid):
    setattr(_Value, _function.__name__, _function)


_FUNCTIONS = {"where": where, "clamp": clamp, "clip": clamp, "minimum": minimum,
              "maximum": maximum}


def _describe(fn):
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__qualname__", None) or type(fn).__name__
    if code is not None:
        return f"'{name}' ({code.co_filename}:{code.co_firstlineno})"
    return f"'{name}'"


class Captured:
    """An array or tensor a modifier reads by index: `doc = Captured(ids)`,
    then `doc[q_idx] == doc[kv_idx]` in a mask_mod. Indexed by b, h, q_idx,
    kv_idx or int constants (one entry per dim, at most one of q_idx and
    kv_idx), it is a gather of the kernel's tensor parameter ModTensor when
    traced, and the array's own indexing otherwise (a NumPy reference)."""

    def __init__(self, array):
        self.array = array
        self.shape = tuple(array.shape)

    def __getitem__(self, index):
        entries = index if isinstance(index, tuple) else (index,)
        first = _traced(*entries)
        if first is None:
            return self.array[index]
        return _gather(first._tracer, self.array, entries)


def _element(array):
    """The element type of ModTensor for a captured array or tensor."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(array, torch.Tensor):
        if array.dtype == torch.bool:
            return "bool"
        return "f32" if array.dtype.is_floating_point else "i32"
    return {"b": "bool", "i": "i32", "u": "i32", "f": "f32"}.get(np.asarray(array).dtype.kind)


def _gather(tracer, array, entries):
    shape = tuple(array.shape)
    if len(entries) != len(shape):
        tracer.fail(f"a captured tensor of shape {shape} is indexed by {len(entries)} "
                    f"entries: one per dim is traced")
    texts, tile_dim, looked_up = [], None, None
    for position, entry in enumerate(entries):
        if isinstance(entry, _Value) and entry.source is None:
            if looked_up is not None:
                tracer.fail("a captured tensor is indexed by one value computed from b, h, "
                            "q_idx and kv_idx at most")
            looked_up = position
            texts.append(None)
            continue
        if isinstance(entry, _Value):
            text, dim = entry.source
            if dim is not None:
                if tile_dim is not None:
                    tracer.fail("a captured tensor indexed by both q_idx and kv_idx (a "
                                "gather of [M, N] elements) cannot be traced")
                tile_dim = dim
            texts.append(text)
        else:
            number = _number(entry)
            if not isinstance(number, int) or isinstance(number, bool) or number < 0:
                tracer.fail(f"a captured tensor's index {entry!r} is not a traced index or "
                            "an int >= 0")
            texts.append(str(number))
    kind = _element(array)
    if kind is None:
        tracer.fail(f"a captured tensor of dtype {array.dtype} cannot be read: bool, int "
                    "or float")
    if looked_up is not None:
        return _lookup(tracer, array, entries[looked_up], looked_up, texts, tile_dim, kind)
    tracer.capture(array)
    expand = {"M": "[:, None]", "N": "[None, :]", None: ""}[tile_dim]
    if tracer.transposed and tile_dim is not None:
        expand = {"M": "[None, :]", "N": "[:, None]"}[tile_dim]
    return tracer.bind(f"load(ModTensor[{', '.join(texts)}]){expand}", kind,
                       () if tile_dim is None else (tile_dim,))


# The most entries a lookup by a computed index reads (a bucket table).
LOOKUP_ENTRIES = 64


def _lookup(tracer, array, index, position, texts, tile_dim, kind):
    """array[..., index, ...] for an index computed from the arguments (T5's
    bucket of q_idx - kv_idx): a gather of a tile of indices, which the tile
    language has for rows only, is a chain of selects over the dim's
    entries, each a scalar read of ModTensor; 0 (false) outside the dim, as a
    load's pad."""
    size = array.shape[position]
    if index.kind != "i32":
        tracer.fail(f"a captured tensor is indexed by {index.kind} values: an index is an "
                    "integer (cast it with .int())")
    if tile_dim is not None:
        tracer.fail("a captured tensor indexed by a computed value and by q_idx or kv_idx "
                    "cannot be traced")
    if size > LOOKUP_ENTRIES:
        tracer.fail(f"a captured tensor is indexed by a value computed from b, h, q_idx and "
                    f"kv_idx along a dim of {size} entries: such a lookup reads at most "
                    f"{LOOKUP_ENTRIES} (a bucket table)")
    tracer.capture(array)
    tracer.lookup = True
    value = _literal(0, kind)
    for entry in reversed(range(size)):
        at = ", ".join(str(entry) if t is None else t for t in texts)
        value = tracer.bind(f"where({index.text} == {entry}, load(ModTensor[{at}]), "
                            f"{value if isinstance(value, str) else value.text})", kind,
                            index.dims)
    return value


def _call(tracer, fn, arity):
    rows, cols = ("rows[None, :]", "cols[:, None]") if tracer.transposed else \
        ("rows[:, None]", "cols[None, :]")
    args = [_Value(tracer, "b", "i32", (), ("b", None)),
            _Value(tracer, "h", "i32", (), ("h", None)),
            _Value(tracer, rows, "i32", ("M",), ("rows", "M")),
            _Value(tracer, cols, "i32", ("N",), ("cols", "N"))]
    if arity == 5:
        grad = ("1.0", frozenset()) if tracer.differentiate else None
        args.insert(0, _Value(tracer, "score", "f32", ("M", "N"), grad=grad))
    try:
        return fn(*args)
    except TraceError:
        raise
    except IndexError as e:
        # NumPy refuses a traced index before asking it for an int.
        tracer.fail(f"indexing a captured array by a traced index cannot be traced: wrap "
                    f"the array as flashc.flex.Captured(array) ({e})")
    except (TypeError, ValueError, AttributeError) as e:
        tracer.fail(f"cannot be traced: {type(e).__name__}: {e}")


def _trace(fn, kind, differentiate=False, transposed=False):
    """(tracer, return expression) of a Python score_mod or mask_mod; with
    `differentiate` (a score_mod), the expression is the pair (modified
    score, its derivative with respect to the score)."""
    tracer = _Tracer(f"{kind} {_describe(fn)}", differentiate, transposed)
    shape = tracer.shape()
    result = _call(tracer, fn, 5 if kind == "score_mod" else 4)
    if kind == "score_mod":
        if not isinstance(result, _Value):
            number = _number(result)
            if number is None or isinstance(number, bool):
                tracer.fail(f"returns {type(result).__name__}, not a score")
            body = f"full({shape}, {_literal(number, 'f32')}, f32)"
            return tracer, f"{body}, zeros({shape}, f32)" if differentiate else body
        if result.kind == "bool":
            tracer.fail("returns a mask, not a score (a mask belongs in mask_mod)")
        body = result._as(result.text, result.kind, "f32")
        if result.dims != {"M", "N"}:
            body = f"{body} + zeros({shape}, f32)"
        if not differentiate:
            return tracer, body
        if result.grad is None:
            return tracer, f"{body}, zeros({shape}, f32)"
        grad, dims = result.grad
        if dims != {"M", "N"}:
            grad = f"{grad} + zeros({shape}, f32)"
        return tracer, f"{body}, {grad}"
    if not isinstance(result, _Value):
        number = _number(result)
        if not isinstance(number, bool):
            tracer.fail(f"returns {type(result).__name__}, not a mask (bool)")
        return tracer, _literal(number, "bool")
    if result.kind != "bool":
        tracer.fail(f"returns {result.kind} values, not a mask (bool): compare them")
    if result.dims != {"M", "N"}:
        return tracer, f"full({shape}, true, bool) && {result.text}"
    return tracer, result.text


def _function(kind, name, lines, body, tensor, differentiate=False, transposed=False):
    """A traced modifier as a tile function; `differentiate`: a score_mod
    returning (score, derivative); `transposed`: of blocks [N, M]."""
    extra = ", ModTensor: tensor" if tensor else ""
    shape = "[N, M]" if transposed else "[M, N]"
    if kind == "score_mod":
        result = f"(f32{shape}, f32{shape})" if differentiate else f"f32{shape}"
        head = (f"fn {name}(score: f32{shape}, b: int, h: int, rows: i32[M], cols: i32[N]"
                f"{extra}) -> {result}")
    else:
        head = f"fn {name}(b: int, h: int, rows: i32[M], cols: i32[N]{extra})"
    return head + " {\n" + "".join(line + "\n" for line in lines) + f"  return {body};\n}}\n"


def trace_score_mod(fn, name="flex_score_mod"):
    """The tile function `name(score, b, h, rows, cols)` (and ModTensor when
    it reads a Captured array) computing fn(score, b, h, q_idx, kv_idx) on a
    block of scores [M, N]."""
    tracer, body = _trace(fn, "score_mod")
    return _function("score_mod", name, tracer.lines, body, tracer.tensor is not None)


def trace_mask_mod(fn, name="flex_mask_mod"):
    """The tile function `name(b, h, rows, cols)` (and ModTensor) computing
    fn(b, h, q_idx, kv_idx): a bool [M, N], or a constant."""
    tracer, body = _trace(fn, "mask_mod")
    return _function("mask_mod", name, tracer.lines, body, tracer.tensor is not None)


def _program(score_mod=None, mask_mod=None, return_lse=False, block_mask=False):
    """(source, captured tensor or None, whether a modifier has a lookup by a
    computed index) of the kernel flex_attention runs: with block_mask,
    attention_blocks() over a BlockMask's tables."""
    traced, sources = {}, {}
    for mod, kind in ((score_mod, "score_mod"), (mask_mod, "mask_mod")):
        if mod is None:
            continue
        if isinstance(mod, str):
            if not re.search(rf"\bfn\s+{kind}\s*\(", mod):
                raise ValueError(f"{kind} as tile source must define 'fn {kind}(...)'")
            sources[kind] = mod
        elif callable(mod):
            traced[kind] = _trace(mod, kind)
        else:
            raise TypeError(f"{kind} must be a Python function or tile source, "
                            f"not {type(mod).__name__}")
    tensors = [t.tensor for t, _ in traced.values() if t.tensor is not None]
    if len(tensors) == 2 and tensors[0] is not tensors[1]:
        raise TraceError("score_mod and mask_mod read two captured tensors: attention() "
                         "passes its modifiers one (ModTensor)")
    tensor = tensors[0] if tensors else None
    if tensor is not None and sources:
        raise TraceError(f"{' and '.join(sources)} as tile source cannot be combined with a "
                         "traced modifier that reads a captured tensor")
    parts = ['import "lib/attention.tile";\n']
    keywords = ""
    for kind in ("score_mod", "mask_mod"):
        name = "flex_" + kind
        if kind in sources:
            if sources[kind] not in parts:
                parts.append(sources[kind])
            name = kind
        elif kind in traced:
            tracer, body = traced[kind]
            parts.append(_function(kind, name, tracer.lines, body, tensor is not None))
        elif tensor is not None:
            # With ModTensor both modifiers take it: the default, spelled out.
            body = "score" if kind == "score_mod" else "true"
            parts.append(_function(kind, name, [], body, True))
        else:
            continue
        keywords += f",\n                            {kind} = {name}"
    params = ""
    if return_lse:
        params += "LSE: f32[B, H, Nq], "
    if tensor is not None:
        dims = ", ".join(f"MT{i}" for i in range(len(tensor.shape)))
        params += f"ModTensor: {_element(tensor)}[{dims}], "
        keywords += ",\n                            mod_tensor = true, ModTensor = ModTensor"
    call = "attention"
    if block_mask:
        params += ("KvNum: i32[TB, TH, QB], KvIdx: i32[TB, TH, QB, KB], "
                   "FullKvNum: i32[TB, TH, QB],\n    FullKvIdx: i32[TB, TH, QB, KB], ")
        call = "attention_blocks"
    lse_store = ("\n  store(LSE[b, h, start_m : start_m + BLOCK_M], log_sum_exp(m, l));"
                 if return_lse else "")
    arguments = "-1, -1, 0.0"
    extra_constants = ""
    if block_mask:
        arguments = ("KvNum, KvIdx, FullKvNum, FullKvIdx, TB, TH,\n"
                     "                            Q_BLOCK, KV_BLOCK")
        extra_constants = ",\n                      Q_BLOCK: int = 128, KV_BLOCK: int = 128"
    parts.append(f"""
kernel flex_attention<T: type = f16, HEAD_DIM: int = 64, HEAD_DIM_V: int = HEAD_DIM,
                      BLOCK_M: int = 64, BLOCK_N: int = 64, STAGES: int = 2{extra_constants}>(
    Q: T[B, H, Nq, HEAD_DIM], K: T[B, H_KV, Nk, HEAD_DIM], V: T[B, H_KV, Nk, HEAD_DIM_V],
    O: T[B, H, Nq, HEAD_DIM_V], {params}sm_scale: f32)
{{
  grid(cdiv(Nq, BLOCK_M), B * H);
  let b = program_id(1) / H;
  let h = program_id(1) % H;
  let start_m = program_id(0) * BLOCK_M;
  let m, l, acc = {call}(Q, K, V, start_m, b, h, H, H_KV, Nq, Nk, sm_scale, HEAD_DIM_V,
                            BLOCK_M, BLOCK_N, STAGES, {arguments}{keywords});
  store(O[b, h, start_m : start_m + BLOCK_M, :], cast(finalize(acc, l), T));{lse_store}
}}
""")
    lookup = any(tracer.lookup for tracer, _ in traced.values())
    return "\n".join(parts), tensor, lookup


def kernel_source(score_mod=None, mask_mod=None, return_lse=False, block_mask=False):
    """The tile program flex_attention compiles: kernels/lib/attention.tile's
    attention() with the modifiers, or (block_mask) attention_blocks()."""
    return _program(score_mod, mask_mod, return_lse, block_mask)[0]


def _tensor_argument(arrays, tensor):
    """A captured array or tensor as ModTensor: bool, int32 or float32,
    contiguous."""
    kind = _element(tensor)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(tensor, torch.Tensor):
        dtype = {"bool": torch.bool, "i32": torch.int32, "f32": torch.float32}[kind]
        converted = tensor.detach().to(dtype).contiguous()
        if kind == "i32" and tensor.numel() and not bool((converted == tensor).all()):
            raise OverflowError("a captured int tensor does not fit int32")
        return converted
    array = np.asarray(tensor)
    dtype = {"bool": np.bool_, "i32": np.int32, "f32": np.float32}[kind]
    converted = np.ascontiguousarray(array, dtype=dtype)
    if kind == "i32" and not np.array_equal(converted, array):
        raise OverflowError("a captured int array does not fit int32")
    return converted


@functools.lru_cache(maxsize=64)
def _kernel(source, arch, constants):
    return _compile(source, arch=arch, import_dirs=(_attention.kernels_dir(),),
                    **dict(constants))


def _blocks(head_dim, lookup=False):
    """BLOCK_M, BLOCK_N by the padded head dim (registers beside the
    accumulator); a lookup by a computed index (_lookup) holds its table's
    entries too: 64 x 32 above head dim 64."""
    return (64, 64) if head_dim <= (64 if lookup else 128) else (64, 32)


def default_blocks(head_dim, score_mod=None, mask_mod=None):
    """The (BLOCK_M, BLOCK_N) flex_attention takes for these modifiers at a
    padded head dim."""
    return _blocks(head_dim, _program(score_mod, mask_mod)[2])


def _name(mod):
    return "(tile source)" if isinstance(mod, str) else _describe(mod)


def _resolve_block_mask(mask_mod, block_mask, q, k):
    """(mask_mod, block_mask) as the kernels take them: a BlockMask passed
    as mask_mod is the block_mask, mask_mod defaults to the BlockMask's own,
    and the BlockMask is checked against q's and k's shapes."""
    from .block_mask import BlockMask
    if isinstance(mask_mod, BlockMask) and block_mask is None:
        block_mask, mask_mod = mask_mod, None
    if block_mask is not None:
        if not isinstance(block_mask, BlockMask):
            raise TypeError(f"block_mask must be a BlockMask, not {type(block_mask).__name__}")
        if mask_mod is None:
            mask_mod = block_mask.mask_mod
        _check_block_mask(block_mask, q.shape[0], q.shape[1], q.shape[2], k.shape[2])
    return mask_mod, block_mask


def flex_attention(q, k, v, score_mod=None, mask_mod=None, *, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, target=None,
                   arch=DEFAULT_ARCH):
    """torch.nn.attention.flex_attention's forward: q [B, H, Nq, D], k [B,
    H_KV, Nk, D], v [B, H_KV, Nk, DV] (f16 or bf16 NumPy arrays or torch
    tensors); score_mod(score, b, h, q_idx, kv_idx) modifies the scaled
    scores, mask_mod(b, h, q_idx, kv_idx) is true where query q_idx sees key
    kv_idx (FlexAttention's mask_mod, which it takes through a BlockMask;
    here also as it is).
    Each is a Python function (traced) or tile source. Returns out [B, H,
    Nq, DV], and with return_lse also lse f32 [B, H, Nq] (natural log; -inf
    for a row that sees no key, whose output is 0).

    block_mask: a BlockMask (flashc.create_block_mask, BlockMask.from_kv_blocks;
    also taken in mask_mod's place, as torch's fifth argument): only the key
    blocks it lists are visited, mask_mod (default: the BlockMask's) is
    evaluated in its partial blocks only; a BlockMask of one batch or head
    serves them all.

    kernel_options: the kernel's constants (BLOCK_M, BLOCK_N, STAGES).
    `target`: interp, emulate or cuda (default: cuda for arrays on the GPU,
    else interp). Compiled once per (modifier source, constants, arch).
    """
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise ValueError("flex_attention takes q, k, v of shape [B, H, S, D]")
    if q.shape[0] != k.shape[0] or k.shape[:3] != v.shape[:3] or q.shape[3] != k.shape[3]:
        raise ValueError(f"q {tuple(q.shape)}, k {tuple(k.shape)} and v {tuple(v.shape)} "
                         "do not agree: q [B, H, Nq, D], k [B, H_KV, Nk, D], v [B, H_KV, Nk, DV]")
    mask_mod, block_mask = _resolve_block_mask(mask_mod, block_mask, q, k)
    heads, kv_heads = q.shape[1], k.shape[1]
    if heads != kv_heads and not enable_gqa:
        raise ValueError(f"q has {heads} heads and k {kv_heads}: pass enable_gqa=True")
    if heads % kv_heads:
        raise ValueError(f"k's {kv_heads} heads do not divide q's {heads}")
    if _attention.wants_grad(q, k, v):
        if score_mod is not None or mask_mod is not None or block_mask is not None:
            return _with_grad(q, k, v, score_mod, mask_mod, block_mask, scale, enable_gqa,
                              return_lse, kernel_options, target, arch)
        out = _attention.attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                                   softmax_scale=scale, return_lse=return_lse, target=target,
                                   arch=arch)
        if return_lse:
            return out[0].transpose(1, 2), out[1]
        return out.transpose(1, 2)
    arrays = _attention.backend(q)
    head_dim, head_dim_v = q.shape[-1], v.shape[-1]
    padded, padded_v = (_attention.padded_head_dim(d) for d in (head_dim, head_dim_v))
    source, tensor, lookup = _program(score_mod, mask_mod, return_lse, block_mask is not None)
    block_m, block_n = _blocks(max(padded, padded_v), lookup)
    constants = {"T": _attention.element_type(arrays.dtype_name(q)), "HEAD_DIM": padded,
                 "HEAD_DIM_V": padded_v, "BLOCK_M": block_m, "BLOCK_N": block_n}
    if block_mask is not None:
        q_block, kv_block = block_mask.BLOCK_SIZE
        # The kernel's blocks tile the BlockMask's.
        constants.update(BLOCK_M=math.gcd(block_m, q_block), BLOCK_N=math.gcd(block_n, kv_block),
                         Q_BLOCK=q_block, KV_BLOCK=kv_block)
    constants.update(kernel_options or {})
    compiled = _kernel(source, arch, tuple(sorted(constants.items())))
    Q = arrays.contiguous(arrays.pad_last(q, padded))
    K = arrays.contiguous(arrays.pad_last(k, padded))
    V = arrays.contiguous(arrays.pad_last(v, padded_v))
    O = arrays.empty(Q, tuple(Q.shape[:3]) + (padded_v,))
    args = {"Q": Q, "K": K, "V": V, "O": O}
    if return_lse:
        args["LSE"] = arrays.empty(Q, tuple(Q.shape[:3]), float32=True)
    if tensor is not None:
        args["ModTensor"] = _tensor_argument(arrays, tensor)
    if block_mask is not None:
        args.update(_table_arguments(Q, {
            "KvNum": block_mask.kv_num_blocks, "KvIdx": block_mask.kv_indices,
            "FullKvNum": block_mask.full_kv_num_blocks,
            "FullKvIdx": block_mask.full_kv_indices}))
    sm_scale = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    _attention.run(compiled, arrays, target, args, sm_scale=sm_scale)
    out = arrays.take_last(O, head_dim_v)
    if not return_lse:
        return out
    lse = args["LSE"]
    # attention() gives +inf (FlashAttention-2's) for a row that sees no key;
    # FlexAttention gives -inf.
    lse[lse == float("inf")] = float("-inf")
    return out, lse


def _backward_program(score_mod=None, mask_mod=None, block_mask=False):
    """(source, captured tensor or None) of flex_attention_bwd, the dK/dV
    kernel of flex_attention's backward (kernels/lib/attention_bwd.tile's
    key_block_grads, adding dQ's sums into DQaccum; with block_mask,
    key_block_grads_blocks over a BlockMask's transposed tables): score_mod
    traced with its derivative, both modifiers over blocks laid out keys
    first."""
    traced = {}
    for mod, kind in ((score_mod, "score_mod"), (mask_mod, "mask_mod")):
        if mod is None:
            continue
        if isinstance(mod, str):
            raise NotImplementedError(f"{kind} as tile source has no backward: flashc traces "
                                      "the derivative of a Python modifier only")
        if not callable(mod):
            raise TypeError(f"{kind} must be a Python function, not {type(mod).__name__}")
        traced[kind] = _trace(mod, kind, differentiate=kind == "score_mod", transposed=True)
    tensors = [t.tensor for t, _ in traced.values() if t.tensor is not None]
    if len(tensors) == 2 and tensors[0] is not tensors[1]:
        raise TraceError("score_mod and mask_mod read two captured tensors: attention() "
                         "passes its modifiers one (ModTensor)")
    tensor = tensors[0] if tensors else None
    parts = ['import "lib/attention_bwd.tile";\n']
    keywords, params = "", ""
    for kind, (tracer, body) in traced.items():
        name = f"flex_{kind}_bwd"
        parts.append(_function(kind, name, tracer.lines, body, tensor is not None,
                               differentiate=kind == "score_mod", transposed=True))
        keywords += f", {kind} = {name}"
    if tensor is not None:
        dims = ", ".join(f"MT{i}" for i in range(len(tensor.shape)))
        params = f"ModTensor: {_element(tensor)}[{dims}], "
        keywords += ", mod_tensor = true, ModTensor = ModTensor"
    call = "key_block_grads"
    arguments = "-1, -1, false"
    extra_constants = ""
    block_m = "where(max(HEAD_DIM, HEAD_DIM_V) <= 64, 64, 32)"
    if block_mask:
        params += ("QNum: i32[TB, TH, KB], QIdx: i32[TB, TH, KB, QB], "
                   "FullQNum: i32[TB, TH, KB],\n    FullQIdx: i32[TB, TH, KB, QB], ")
        call = "key_block_grads_blocks"
        arguments = "QNum, QIdx, FullQNum, FullQIdx, TB, TH, Q_BLOCK, KV_BLOCK"
        extra_constants = ",\n                          Q_BLOCK: int = 128, KV_BLOCK: int = 128"
        block_m = "32"  # as _backward_blocks says
    parts.append(f"""
kernel flex_attention_bwd<T: type = f16, HEAD_DIM: int = 64, HEAD_DIM_V: int = HEAD_DIM,
                          BLOCK_M: int = {block_m},
                          BLOCK_N: int = where(max(HEAD_DIM, HEAD_DIM_V) <= 128, 64, 32),
                          WARPS: int = 8, STAGES: int = 2{extra_constants}>(
    Q: T[B, H, Nq, HEAD_DIM], K: T[B, H_KV, Nk, HEAD_DIM], V: T[B, H_KV, Nk, HEAD_DIM_V],
    DO: T[B, H, Nq, HEAD_DIM_V], LSE: f32[B, H, Nq], Delta: f32[B, H, Nq],
    DQaccum: f32[B, H, Nq, HEAD_DIM], {params}DK: T[B, H_KV, Nk, HEAD_DIM],
    DV: T[B, H_KV, Nk, HEAD_DIM_V], sm_scale: f32)
{{
  grid(cdiv(Nk, BLOCK_N), B * H_KV);
  warps(WARPS);
  let b = program_id(1) / H_KV;
  let hk = program_id(1) % H_KV;
  let start_n = program_id(0) * BLOCK_N;
  let dk, dv = {call}(Q, K, V, DO, LSE, Delta, DQaccum, b, hk, start_n, H, H_KV,
                               Nq, Nk, sm_scale, HEAD_DIM, HEAD_DIM_V, BLOCK_M, BLOCK_N,
                               STAGES, {arguments}{keywords});
  store(DK[b, hk, start_n : start_n + BLOCK_N, :], cast(dk * sm_scale, T));
  store(DV[b, hk, start_n : start_n + BLOCK_N, :], cast(dv, T));
}}
""")
    return "\n".join(parts), tensor


def backward_kernel_source(score_mod=None, mask_mod=None, block_mask=False):
    """The dK/dV kernel flex_attention_backward compiles for the modifiers
    (with block_mask: over a BlockMask's transposed tables)."""
    return _backward_program(score_mod, mask_mod, block_mask)[0]


def _backward_blocks(head_dim):
    """The default (BLOCK_M, BLOCK_N) of flex_attention_bwd over a
    BlockMask at a padded head dim (the kernel's own, which a BlockMask's
    blocks re-tile): 32 query rows at every head dim, since the table
    lookups and the mask's loads beside a heavy score_mod derivative spill
    at 64 x 64."""
    return 32, (64 if head_dim <= 128 else 32)


def _table_arguments(Q, tables):
    """The BlockMask's tables as kernel arguments: device tensors beside
    torch ones."""
    if isinstance(Q, np.ndarray):
        return tables
    torch = sys.modules["torch"]
    return {name: torch.as_tensor(table, device=Q.device) for name, table in tables.items()}


def flex_attention_backward(dout, q, k, v, out, lse, score_mod=None, mask_mod=None, *,
                            block_mask=None, scale=None, kernel_options=None, target=None,
                            arch=DEFAULT_ARCH):
    """The gradients (dq, dk, dv) of flex_attention(q, k, v, score_mod,
    mask_mod, block_mask=block_mask, scale=scale) given dout, its out and
    lse (return_lse=True; layouts as flex_attention's; dk and dv summed over
    each KV head's group). score_mod and mask_mod are Python functions:
    score_mod's derivative with respect to the score is traced with it (a
    comparison or int cast of the score has none: TraceError naming the
    modifier); captured arrays are constants (no gradient of their own).
    block_mask: a BlockMask (mask_mod defaults to its own); each key block
    visits only the query blocks its transposed tables list, mask_mod
    evaluated in the partial ones, and dQ gets only those blocks' shares.
    kernel_options: the dK/dV kernel's constants (BLOCK_M, BLOCK_N, WARPS,
    STAGES)."""
    mask_mod, block_mask = _resolve_block_mask(mask_mod, block_mask, q, k)
    arrays = _attention.backend(q)
    head_dim, head_dim_v = q.shape[-1], v.shape[-1]
    padded, padded_v = (_attention.padded_head_dim(d) for d in (head_dim, head_dim_v))
    source, tensor = _backward_program(score_mod, mask_mod, block_mask is not None)
    dtype = arrays.dtype_name(q)
    Q = arrays.contiguous(arrays.pad_last(q, padded))
    K = arrays.contiguous(arrays.pad_last(k, padded))
    V = arrays.contiguous(arrays.pad_last(v, padded_v))
    O = arrays.contiguous(arrays.pad_last(out, padded_v))
    DO = arrays.contiguous(arrays.pad_last(dout, padded_v))
    # The kernels read +inf (p = 0) for a row that sees no key; flex_attention
    # gives -inf.
    LSE = arrays.empty(Q, tuple(Q.shape[:3]), float32=True)
    LSE[...] = lse
    LSE[LSE == float("-inf")] = float("inf")
    work = {"Delta": arrays.empty(Q, tuple(Q.shape[:3]), float32=True),
            "DQaccum": arrays.empty(Q, tuple(Q.shape), float32=True)}
    head_dim_v_constant = (("HEAD_DIM_V", padded_v),) if padded_v != padded else ()
    rows = (("HEAD_DIM", padded),)
    _attention.run(_attention.kernel("flash_attn_bwd_preprocess", arch,
                                     rows + head_dim_v_constant, dtype),
                   arrays, target, {"O": O, "DO": DO, **work})
    constants = {"T": _attention.element_type(dtype), "HEAD_DIM": padded,
                 "HEAD_DIM_V": padded_v}
    if block_mask is not None:
        q_block, kv_block = block_mask.BLOCK_SIZE
        block_m, block_n = _backward_blocks(max(padded, padded_v))
        # The kernel's blocks tile the BlockMask's, as the forward's do.
        constants.update(BLOCK_M=math.gcd(block_m, q_block), BLOCK_N=math.gcd(block_n, kv_block),
                         Q_BLOCK=q_block, KV_BLOCK=kv_block)
    constants.update(kernel_options or {})
    compiled = _kernel(source, arch, tuple(sorted(constants.items())))
    DQ, DK, DV = (arrays.empty(x, tuple(x.shape)) for x in (Q, K, V))
    args = {"Q": Q, "K": K, "V": V, "DO": DO, "LSE": LSE, **work, "DK": DK, "DV": DV}
    if tensor is not None:
        args["ModTensor"] = _tensor_argument(arrays, tensor)
    if block_mask is not None:
        args.update(_table_arguments(Q, {
            "QNum": block_mask.q_num_blocks, "QIdx": block_mask.q_indices,
            "FullQNum": block_mask.full_q_num_blocks, "FullQIdx": block_mask.full_q_indices}))
    sm_scale = 1.0 / math.sqrt(head_dim) if scale is None else float(scale)
    _attention.run(compiled, arrays, target, args, sm_scale=sm_scale)
    _attention.run(_attention.kernel("flash_attn_bwd_dq_convert", arch, rows, dtype), arrays,
                   target, {"DQaccum": work["DQaccum"], "DQ": DQ}, sm_scale=sm_scale)
    return (arrays.take_last(DQ, head_dim), arrays.take_last(DK, head_dim),
            arrays.take_last(DV, head_dim_v))


def _with_grad(q, k, v, score_mod, mask_mod, block_mask, scale, enable_gqa, return_lse,
               kernel_options, target, arch):
    """flex_attention recorded by autograd (autograd.flex_attention_function):
    the modifiers' backward traced first, so that one without a derivative
    fails before the forward runs."""
    _, tensor = _backward_program(score_mod, mask_mod, block_mask is not None)
    if getattr(tensor, "requires_grad", False):
        raise NotImplementedError("flex_attention has no gradient for a captured tensor (a "
                                  "learnable bias): detach it; q, k and v get theirs")
    from .autograd import flex_attention_function
    out, lse = flex_attention_function().apply(q, k, v, score_mod, mask_mod, block_mask, scale,
                                                enable_gqa, kernel_options, target, arch)
    return (out, lse) if return_lse else out


def _check_block_mask(block_mask, batches, heads, q_len, kv_len):
    """A BlockMask's tables cover attention of [batches, heads, q_len,
    kv_len]: batches and heads it serves, its query blocks all of q_len."""
    tb, th, q_blocks, kv_blocks = block_mask.kv_indices.shape
    if tb not in (1, batches) or th not in (1, heads):
        raise ValueError(f"the BlockMask is of {tb} batches and {th} heads: attention of "
                         f"{batches} and {heads} takes 1 or as many")
    q_block, kv_block = block_mask.BLOCK_SIZE
    if q_blocks * q_block < q_len or kv_blocks * kv_block < kv_len:
        raise ValueError(f"the BlockMask's {q_blocks} x {kv_blocks} blocks of {q_block} x "
                         f"{kv_block} do not cover {q_len} queries and {kv_len} keys")
