"""What remittance announces, sent once the transaction that made it true has committed."""

from django.dispatch import Signal

# kwargs: enrolment_id: int, code: str, reason: str — a debit came back with a code that ends the authorization
# (closed account, unauthorized…): the enrolment is suspended and nothing more is debited.
autopay_suspended = Signal()

# kwargs: enrolment_id: int, why: str — the office ended an enrolment the customer did not cancel (the account
# closed): nothing more is debited, and the customer is to be told how to pay what is left.
autopay_ended = Signal()
