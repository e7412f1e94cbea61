"""``{{ amount|dollars }}``: $1,234.56, and a credit as −$30.00 (a Decimal, Money or two-decimal string)."""

from decimal import Decimal, InvalidOperation

from django import template

register = template.Library()


@register.filter
def dollars(value) -> str:
    amount = getattr(value, "amount", value)
    try:
        amount = Decimal(str(amount))
    except InvalidOperation:
        return ""
    text = f"${abs(amount):,.2f}"
    return f"−{text}" if amount < 0 else text
