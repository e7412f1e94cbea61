"""What termination announces, sent once the transaction that made it true has committed."""

from django.dispatch import Signal

# kwargs: case_id: int, event_id: int — a case closed as paid reopened (the payment that paid it was reversed).
case_reopened = Signal()
