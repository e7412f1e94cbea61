"""``{{ amount|dollars }}``: $1,234.56, and a credit as −$30.00 (a Decimal, Money or two-decimal string);
``{{ rate|rate }}``: 3.10, 0.0015. The same formatters as the bill PDF, the statement and the API."""

from decimal import InvalidOperation

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
def rate(value) -> str:
    try:
        return fmt_rate(value)
    except (InvalidOperation, ValueError, TypeError):
        return ""
