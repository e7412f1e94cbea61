"""Formulas in rate files: a small, safe arithmetic language evaluated exactly.

Design overview
---------------
An OWRS rate file writes some charges as formulas (``commodity_charge + service_charge``,
``et_factor * irrigable_area * et_amount * 0.62 * (1/748)``). A formula is read by a hand-written tokenizer
and a recursive-descent parser into a small tree of tuples; nothing here hands text to Python's own
``eval``, ``exec`` or ``compile``, so a rate file can only ever compute a number.

Grammar (``*`` and ``/`` bind tighter than ``+`` and ``-``; all are left-associative)::

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/") unary)*
    unary  := "-" unary | "+" unary | atom
    atom   := NUMBER | NAME | ("min" | "max") "(" expr ("," expr)* ")" | "(" expr ")"
    NUMBER := 12 | 0.62 | .5          NAME := [A-Za-z_][A-Za-z0-9_]*

Every number is read from its text as a ``Fraction`` (``0.62`` is exactly 62/100) and every operation is
exact, so ``1/748`` loses nothing; rounding to the cent happens once per bill line, elsewhere. Parsed
formulas are cached: rating evaluates the same few formulas for every bill of a run.
"""

from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

__all__ = ["ExpressionError", "evaluate", "names"]

FUNCTIONS = ("min", "max")


class ExpressionError(ValueError):
    """A formula that cannot be read or computed; the message says what is wrong and at which column."""


# Tree nodes (tuples, hashable and immutable, so a parse can be cached):
#   ("num", Fraction)  ("name", str, column)  ("neg", node)  ("bin", op, left, right, column)
#   ("call", function, (args...), column)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, 1-based column) for each token, ending with ("end", "", column)."""
    tokens = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        column = i + 1
        if ch.isspace():
            i += 1
        elif ch.isascii() and (ch.isdigit() or (ch == "." and i + 1 < n and text[i + 1].isascii()
                                                 and text[i + 1].isdigit())):
            j = i
            while j < n and text[j].isascii() and text[j].isdigit():
                j += 1
            if j < n and text[j] == ".":
                j += 1
                while j < n and text[j].isascii() and text[j].isdigit():
                    j += 1
            if j < n and (text[j].isalpha() or text[j] == "_" or text[j] == "."):
                raise ExpressionError(f"column {j + 1}: {text[i:j + 1]!r} is not a number")
            tokens.append(("num", text[i:j], column))
            i = j
        elif ch.isascii() and (ch.isalpha() or ch == "_"):
            j = i
            while j < n and text[j].isascii() and (text[j].isalnum() or text[j] == "_"):
                j += 1
            tokens.append(("name", text[i:j], column))
            i = j
        elif ch in "+-*/(),":
            tokens.append(("op", ch, column))
            i += 1
        else:
            raise ExpressionError(f"column {column}: {ch!r} is not allowed in a formula (numbers, names, "
                                  f"+ - * /, parentheses, min() and max() are)")
    tokens.append(("end", "", n + 1))
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.at]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def expect(self, op: str) -> None:
        kind, text, column = self.take()
        if (kind, text) != ("op", op):
            found = "the end of the formula" if kind == "end" else repr(text)
            raise ExpressionError(f"column {column}: expected {op!r}, found {found}")

    def formula(self):
        if self.peek()[0] == "end":
            raise ExpressionError("column 1: the formula is empty")
        node = self.expr()
        kind, text, column = self.peek()
        if kind != "end":
            if text == ",":
                raise ExpressionError(f"column {column}: a comma is allowed only between the arguments of "
                                      f"min() or max()")
            raise ExpressionError(f"column {column}: unexpected {text!r}")
        return node

    def expr(self):
        node = self.term()
        while self.peek()[:2] in (("op", "+"), ("op", "-")):
            _, op, column = self.take()
            node = ("bin", op, node, self.term(), column)
        return node

    def term(self):
        node = self.unary()
        while self.peek()[:2] in (("op", "*"), ("op", "/")):
            _, op, column = self.take()
            node = ("bin", op, node, self.unary(), column)
        return node

    def unary(self):
        if self.peek()[:2] == ("op", "-"):
            self.take()
            return ("neg", self.unary())
        if self.peek()[:2] == ("op", "+"):
            self.take()
            return self.unary()
        return self.atom()

    def atom(self):
        kind, text, column = self.take()
        if kind == "num":
            return ("num", Fraction(Decimal(text)))
        if kind == "name":
            is_call = self.peek()[:2] == ("op", "(")
            if text in FUNCTIONS:
                if not is_call:
                    raise ExpressionError(f"column {column}: {text} is a function; write {text}(a, b, ...)")
                self.take()
                args = [self.expr()]
                while self.peek()[:2] == ("op", ","):
                    self.take()
                    args.append(self.expr())
                self.expect(")")
                return ("call", text, tuple(args), column)
            if is_call:
                raise ExpressionError(f"column {column}: {text}() is not a function a formula may call "
                                      f"(only min() and max())")
            return ("name", text, column)
        if (kind, text) == ("op", "("):
            node = self.expr()
            self.expect(")")
            return node
        if kind == "end":
            raise ExpressionError(f"column {column}: the formula ends where a number or a name is expected")
        raise ExpressionError(f"column {column}: unexpected {text!r} where a number or a name is expected")


# How deep a formula's tree may go (parentheses, signs, a chain of operators): far past any rate formula, and well
# inside what the recursive parser and evaluator can follow.
MAX_DEPTH = 100


def _depth(node) -> int:
    deepest, stack = 0, [(node, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        tag = node[0]
        if tag == "neg":
            stack.append((node[1], depth + 1))
        elif tag == "bin":
            stack.extend(((node[2], depth + 1), (node[3], depth + 1)))
        elif tag == "call":
            stack.extend((arg, depth + 1) for arg in node[2])
    return deepest


@lru_cache(maxsize=4096)
def _parse(text: str):
    if not isinstance(text, str):
        raise ExpressionError(f"column 1: a formula is text, not {type(text).__name__}")
    too_deep = ExpressionError(f"column 1: the formula nests more than {MAX_DEPTH} levels deep (parentheses, signs "
                               "or a chain of operators); write it more simply")
    try:
        node = _Parser(text).formula()
    except RecursionError:
        raise too_deep from None
    if _depth(node) > MAX_DEPTH:
        raise too_deep
    return node


def _names(node, found: dict[str, None]) -> None:
    tag = node[0]
    if tag == "name":
        found.setdefault(node[1], None)
    elif tag == "neg":
        _names(node[1], found)
    elif tag == "bin":
        _names(node[2], found)
        _names(node[3], found)
    elif tag == "call":
        for arg in node[2]:
            _names(arg, found)


@lru_cache(maxsize=4096)
def _names_of(text: str) -> tuple[str, ...]:
    found: dict[str, None] = {}
    _names(_parse(text), found)
    return tuple(found)


def names(text: str) -> list[str]:
    """The names ``text`` reads, in order of first appearance (``min``/``max`` are not names)."""
    return list(_names_of(text))


def tree(text: str):
    """The parsed formula (cached), for callers that look at its shape (a bill that is a sum of parts)."""
    return _parse(text)


def _value(node, values: Mapping[str, Fraction]) -> Fraction:
    tag = node[0]
    if tag == "num":
        return node[1]
    if tag == "name":
        try:
            value = values[node[1]]
        except KeyError:
            raise ExpressionError(f"column {node[2]}: {node[1]} has no value") from None
        if isinstance(value, bool) or not isinstance(value, (Fraction, int)):
            raise ExpressionError(f"column {node[2]}: {node[1]} is {value!r}, not a number")
        return Fraction(value)
    if tag == "neg":
        return -_value(node[1], values)
    if tag == "bin":
        left, right = _value(node[2], values), _value(node[3], values)
        op = node[1]
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "*":
            return left * right
        if right == 0:
            raise ExpressionError(f"column {node[4]}: division by zero")
        return left / right
    args = [_value(arg, values) for arg in node[2]]
    return min(args) if node[1] == "min" else max(args)


def evaluate(text: str, values: Mapping[str, Fraction]) -> Fraction:
    """The exact value of the formula ``text`` with ``values`` for its names."""
    return _value(_parse(text), values)
