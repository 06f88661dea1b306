"""The data a Python program spells out, without running it: string and number constants, and what constant
expressions build from them (`'ZR' + '-8841'`, `chr(90)`, `''.join(map(chr, [90, 82]))`, `'RZ'[::-1]`,
`bytes.fromhex('5a52').decode()`, `base64.b64decode('WlI=')`, f-strings and `%`/`format` of known values,
names bound to such values earlier in the program). Identifiers are code, not data, and are not returned."""

from __future__ import annotations

import ast
import base64
import binascii
import codecs
import contextlib
from collections.abc import Callable
from typing import Any

MAX_LEN = 10_000  # a folded value longer than this is not a value worth comparing (and bounds the work)
MAX_INT = 10**30


class _Unknown(Exception):
    """The expression cannot be folded to a constant."""


def _check(value: Any) -> Any:
    if isinstance(value, str | bytes | list | tuple) and len(value) > MAX_LEN:
        raise _Unknown
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INT:
        raise _Unknown
    return value


def _as_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list | tuple):
        return "".join(_as_text(v) for v in value)
    return str(value)


def _percent(fmt: str, args: Any) -> str:
    """printf-style `%` for %s %d %i %c %x %o %% only (no widths: they could ask for huge strings)."""
    values = list(args) if isinstance(args, tuple) else [args]
    out, i = [], 0
    while i < len(fmt):
        ch = fmt[i]
        if ch != "%" or i + 1 >= len(fmt):
            out.append(ch)
            i += 1
            continue
        spec = fmt[i + 1]
        i += 2
        if spec == "%":
            out.append("%")
            continue
        if not values or spec not in "sdicxo":
            raise _Unknown
        v = values.pop(0)
        conv: dict[str, Callable[[Any], str]] = {
            "s": _as_text,
            "d": lambda x: str(int(x)),
            "i": lambda x: str(int(x)),
            "c": lambda x: chr(x) if isinstance(x, int) else str(x),
            "x": lambda x: format(int(x), "x"),
            "o": lambda x: format(int(x), "o"),
        }
        out.append(conv[spec](v))
    return "".join(out)


def _decode_call(name: str, args: list[Any]) -> Any:
    data = args[0].encode() if isinstance(args[0], str) else args[0]
    try:
        if name in ("b64decode", "standard_b64decode", "decodebytes"):
            return base64.b64decode(data)
        if name == "urlsafe_b64decode":
            return base64.urlsafe_b64decode(data)
        if name == "b32decode":
            return base64.b32decode(data)
        if name in ("b16decode", "unhexlify", "a2b_hex"):
            return binascii.unhexlify(data)
    except (binascii.Error, ValueError) as exc:
        raise _Unknown from exc
    raise _Unknown


class _Folder:
    def __init__(self) -> None:
        self.env: dict[str, Any] = {}

    def fold(self, node: ast.AST) -> Any:
        return _check(self._fold(node))

    def _fold(self, node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes | int | float):
            if isinstance(node.value, bool):
                raise _Unknown
            return node.value
        if isinstance(node, ast.Name):
            if node.id in self.env:
                return self.env[node.id]
            raise _Unknown
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            value = self.fold(node.operand)
            if isinstance(value, int | float):
                return -value
            raise _Unknown
        if isinstance(node, ast.List | ast.Tuple):
            return [self.fold(e) for e in node.elts]
        if isinstance(node, ast.JoinedStr):
            return "".join(
                _as_text(self.fold(v.value)) if isinstance(v, ast.FormattedValue) else _as_text(self.fold(v))
                for v in node.values
            )
        if isinstance(node, ast.BinOp):
            return self._binop(node)
        if isinstance(node, ast.Subscript):
            return self._subscript(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.ListComp | ast.GeneratorExp):
            return self._comprehension(node)
        raise _Unknown

    def _binop(self, node: ast.BinOp) -> Any:
        left, right = self.fold(node.left), self.fold(node.right)
        if isinstance(node.op, ast.Add) and type(left) is type(right):
            return left + right
        if isinstance(node.op, ast.Mult) and isinstance(right, int) and not isinstance(left, float):
            if isinstance(left, int) or 0 <= right <= 100:  # bounds str * n before it is built
                return left * right
            raise _Unknown
        if isinstance(node.op, ast.Mod) and isinstance(left, str):
            return _percent(left, tuple(right) if isinstance(right, list) else right)
        if isinstance(left, int) and isinstance(right, int):
            ops: dict[type, Callable[[int, int], int]] = {
                ast.Sub: lambda a, b: a - b,
                ast.Add: lambda a, b: a + b,
                ast.FloorDiv: lambda a, b: a // b,
                ast.Mod: lambda a, b: a % b,
                ast.BitXor: lambda a, b: a ^ b,
            }
            if type(node.op) in ops and not (isinstance(node.op, ast.FloorDiv | ast.Mod) and right == 0):
                return ops[type(node.op)](left, right)
        raise _Unknown

    def _subscript(self, node: ast.Subscript) -> Any:
        value = self.fold(node.value)
        if not isinstance(value, str | bytes | list):
            raise _Unknown
        if isinstance(node.slice, ast.Slice):
            parts = [None if p is None else self.fold(p) for p in (node.slice.lower, node.slice.upper)]
            step = None if node.slice.step is None else self.fold(node.slice.step)
            if step == 0:
                raise _Unknown
            return value[slice(parts[0], parts[1], step)]
        index = self.fold(node.slice)
        try:
            return value[index]
        except (IndexError, TypeError) as exc:
            raise _Unknown from exc

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> list[Any]:
        if len(node.generators) != 1 or node.generators[0].ifs:
            raise _Unknown
        gen = node.generators[0]
        if not isinstance(gen.target, ast.Name):
            raise _Unknown
        items, saved = self.fold(gen.iter), dict(self.env)
        try:
            out = []
            for item in items if isinstance(items, str | list) else _as_text(items):
                self.env[gen.target.id] = item
                out.append(self.fold(node.elt))
            return out
        finally:
            self.env = saved

    def _call(self, node: ast.Call) -> Any:
        func = node.func
        if isinstance(func, ast.Name) and func.id == "map" and len(node.args) == 2:
            if not isinstance(node.args[0], ast.Name):
                raise _Unknown
            items = self.fold(node.args[1])
            items = items if isinstance(items, list | str) else _raise()
            return [self._builtin(node.args[0].id, [i], node) for i in items]
        args = [self.fold(a) for a in node.args]
        if isinstance(func, ast.Name):
            return self._builtin(func.id, args, node)
        if not isinstance(func, ast.Attribute):
            raise _Unknown
        if isinstance(func.value, ast.Name) and func.value.id in ("base64", "binascii") and args:
            return _decode_call(func.attr, args)
        if func.attr == "fromhex" and args and isinstance(args[0], str):
            try:
                return bytes.fromhex(args[0])
            except ValueError as exc:
                raise _Unknown from exc
        if isinstance(func.value, ast.Name) and func.value.id == "codecs" and func.attr == "decode":
            if len(args) == 2 and str(args[1]).replace("_", "") == "rot13":
                return codecs.decode(_as_text(args[0]), "rot13")
            raise _Unknown
        return self._method(self.fold(func.value), func.attr, args)

    def _builtin(self, name: str, args: list[Any], node: ast.Call) -> Any:
        if name == "chr" and len(args) == 1 and isinstance(args[0], int) and 0 <= args[0] <= 0x10FFFF:
            return chr(args[0])
        if name == "str" and len(args) == 1:
            return _as_text(args[0])
        if name in ("bytes", "bytearray") and len(args) == 1 and isinstance(args[0], list):
            return bytes(args[0]) if all(isinstance(i, int) and 0 <= i < 256 for i in args[0]) else _raise()
        if name == "int" and args and isinstance(args[0], str):
            try:
                return int(args[0], args[1] if len(args) > 1 else 10)
            except (ValueError, TypeError) as exc:
                raise _Unknown from exc
        if name in ("reversed", "list") and len(args) == 1:
            seq = list(args[0]) if isinstance(args[0], str | bytes | list) else _raise()
            return seq[::-1] if name == "reversed" else seq
        raise _Unknown

    def _method(self, target: Any, name: str, args: list[Any]) -> Any:
        if isinstance(target, str | bytes) and name == "join" and len(args) == 1:
            items = args[0] if isinstance(args[0], list) else list(args[0])
            sep = _as_text(target)
            return sep.join(_as_text(i) for i in items)
        if isinstance(target, bytes) and name == "decode":
            return target.decode("utf-8", "replace")
        if isinstance(target, str) and name == "encode":
            return target.encode()
        if isinstance(target, str) and name == "format":
            if any(":" in part or "!" in part for part in target.split("{")[1:]):
                raise _Unknown  # format specs could ask for huge widths
            try:
                return target.format(*[_as_text(a) for a in args])
            except (IndexError, KeyError, ValueError) as exc:
                raise _Unknown from exc
        if isinstance(target, str) and name in ("upper", "lower", "swapcase", "title", "capitalize", "strip"):
            return getattr(target, name)()
        if isinstance(target, str) and name == "replace" and len(args) == 2:
            return target.replace(_as_text(args[0]), _as_text(args[1]))
        raise _Unknown


def _raise() -> Any:
    raise _Unknown


class _Walker(ast.NodeVisitor):
    """Visits in source order, binding simple assignments, and collects every foldable expression's value."""

    def __init__(self) -> None:
        self.folder = _Folder()
        self.found: list[str] = []

    def _record(self, node: ast.AST) -> bool:
        try:
            value = self.folder.fold(node)
        except (_Unknown, TypeError, ValueError, OverflowError, RecursionError):
            return False
        self.found.append(_as_text(value) if not isinstance(value, list) else " ".join(map(_as_text, value)))
        return True

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        try:
            value = self.folder.fold(node.value)
        except (_Unknown, TypeError, ValueError, OverflowError, RecursionError):
            value = None
        for target in node.targets:
            if isinstance(target, ast.Name):
                self._bind(target.id, value)
            elif isinstance(target, ast.Tuple | ast.List) and isinstance(value, list):
                for t, v in zip(target.elts, value, strict=False):
                    if isinstance(t, ast.Name):
                        self._bind(t.id, v)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        if isinstance(node.target, ast.Name):
            fake = ast.BinOp(left=ast.Name(id=node.target.id), op=node.op, right=node.value)
            try:
                self._bind(node.target.id, self.folder.fold(fake))
            except (_Unknown, TypeError, ValueError, OverflowError, RecursionError):
                self._bind(node.target.id, None)

    def _bind(self, name: str, value: Any) -> None:
        if value is None:
            self.folder.env.pop(name, None)
        else:
            self.folder.env[name] = value

    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.expr) and not isinstance(node, ast.Name):
            self._record(node)
        super().generic_visit(node)


def python_data(code: str) -> list[str] | None:
    """The data values `code` spells out, or None when it is not Python."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    walker = _Walker()
    with contextlib.suppress(RecursionError):  # very deep code: keep what was found
        walker.visit(tree)
    return [v for v in walker.found if v.strip()]


def arithmetic(expr: str) -> str | None:
    """A shell `$(( … ))` of integer literals (`/` is integer division there), or None."""
    try:
        tree = ast.parse(expr.replace("/", "//").replace("////", "//"), mode="eval")
        value = _Folder().fold(tree.body)
    except (SyntaxError, ValueError, _Unknown, TypeError, OverflowError, RecursionError, ZeroDivisionError):
        return None
    return str(value) if isinstance(value, int) else None
