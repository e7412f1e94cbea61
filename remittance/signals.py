"""What remittance announces, sent once the transaction that made it true has committed."""

from django.dispatch import Signal

# kwargs: enrolment_id: int, code: str, reason: str — a debit came back with a code that ends the authorization
# (closed account, unauthorized…): the enrolment is suspended and nothing more is debited.
autopay_suspended = Signal()
