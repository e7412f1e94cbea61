"""``{{ amount|dollars }}``: $1,234.56, and a credit as −$30.00 (a Decimal, Money or two-decimal string);
``{{ balance|credit }}``: a balance below zero as the credit it is, $30.00, for a "Credit" heading;
``{{ rate|rate }}``: 3.10, 0.0015. The same formatters as the bill PDF, the statement and the API."""

from decimal import Decimal, InvalidOperation

from django import template

from core.money import fmt_dollars, fmt_rate

register = template.Library()


@register.filter
def dollars(value) -> str:
    try:
        return fmt_dollars(value)
    except (InvalidOperation, ValueError, TypeError):
        return ""


@register.filter
def credit(value) -> str:
    """A balance below zero as the credit it is: −7.00 → $7.00 (shown under "Credit", never as a negative)."""
    try:
        return fmt_dollars(-Decimal(str(getattr(value, "amount", value))))
    except (InvalidOperation, ValueError, TypeError):
        return ""


@register.filter
def rate(value) -> str:
    try:
        return fmt_rate(value)
    except (InvalidOperation, ValueError, TypeError):
        return ""
