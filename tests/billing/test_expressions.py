"""The formula language of rate files: exact, and nothing but arithmetic."""

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from billing.expressions import ExpressionError, evaluate, names


def test_arithmetic_is_exact():
    assert evaluate("0.7 * irrigable_area * et_amount * 0.62 * (1/748)",
                    {"irrigable_area": Fraction(4500), "et_amount": Fraction(24, 5)}) == Fraction(117180, 9350)
    assert evaluate("0.1 + 0.2", {}) == Fraction(3, 10)
    assert evaluate(".5 * 4", {}) == Fraction(2)
    assert evaluate("12", {}) == Fraction(12)


def test_precedence_unary_minus_and_parentheses():
    assert evaluate("2 + 3 * 4", {}) == 14
    assert evaluate("(2 + 3) * 4", {}) == 20
    assert evaluate("10 - 4 - 3", {}) == 3
    assert evaluate("12 / 3 / 2", {}) == 2
    assert evaluate("-2 * -3", {}) == 6
    assert evaluate("a * (1 - b)", {"a": Fraction(480), "b": Fraction(1)}) == 0


def test_min_and_max():
    values = {"year_usage_gal": Fraction(90000), "usage_gal": Fraction(60000), "allowance_gal": Fraction(125000)}
    formula = "max(0, year_usage_gal + usage_gal - allowance_gal) - max(0, year_usage_gal - allowance_gal)"
    assert evaluate(formula, values) == 25000
    assert evaluate("min(3, 1, 2)", {}) == 1
    assert evaluate("max(-1)", {}) == -1


def test_names_in_order_of_first_appearance():
    assert names("commodity_charge + service_charge - commodity_charge * sewer_charge") == [
        "commodity_charge", "service_charge", "sewer_charge"]
    assert names("max(0, a - b) + min(c, 2)") == ["a", "b", "c"]
    assert names("2.1*usage_ccf") == ["usage_ccf"]


@pytest.mark.parametrize(("text", "column"), [
    ("2**3", 3),
    ("__import__('os')", 12),
    ("a; b", 2),
    ("'x'", 1),
    ("1, 2", 2),
    ("min(1, 2", 9),
    ("", 1),
    ("3 +", 4),
    ("1.2.3", 4),
    ("2 3", 3),
    ("min + 1", 1),
    ("a @ b", 3),
])
def test_refusals_name_the_column(text, column):
    with pytest.raises(ExpressionError) as caught:
        evaluate(text, {"a": Fraction(1), "b": Fraction(1)})
    assert str(caught.value).startswith(f"column {column}:")


def test_unknown_function_and_division_by_zero():
    with pytest.raises(ExpressionError, match=r"column 1: __import__\(\) is not a function"):
        names("__import__(1)")
    with pytest.raises(ExpressionError, match="column 3: division by zero"):
        evaluate("1 / (a - a)", {"a": Fraction(2)})
    with pytest.raises(ExpressionError, match="column 1: b has no value"):
        evaluate("b + 1", {})


_leaf = st.fractions(min_value=-1000, max_value=1000, max_denominator=50)


def _render(value: Fraction) -> str:
    text = f"({abs(value.numerator)}/{value.denominator})"
    return f"-{text}" if value < 0 else text


@st.composite
def _expressions(draw, depth=3):
    if depth == 0 or draw(st.booleans()):
        value = draw(_leaf)
        return _render(value), value
    left_text, left = draw(_expressions(depth - 1))
    right_text, right = draw(_expressions(depth - 1))
    op = draw(st.sampled_from("+-*"))
    value = {"+": left + right, "-": left - right, "*": left * right}[op]
    return f"({left_text} {op} {right_text})", value


@given(_expressions())
def test_agrees_with_exact_fraction_arithmetic(case):
    text, expected = case
    assert evaluate(text, {}) == expected
