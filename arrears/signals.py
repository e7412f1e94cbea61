"""What the payment plans announce, sent once the transaction that made it true has committed."""

from django.dispatch import Signal

# kwargs: plan_id: int — a plan defaulted by the nightly review (an installment unpaid past its grace): it no
# longer holds a shut-off.
plan_defaulted = Signal()
# kwargs: plan_id: int — a plan ended because its account closed: what it covered is on the final bill.
plan_ended = Signal()
