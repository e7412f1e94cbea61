"""What accounts announce, sent once the transaction that made it true has committed."""

from django.dispatch import Signal

# kwargs: account_id: int, closed_on: date — the account closed (its final bill issued): no more service, no more
# bills, nothing more debited.
account_closed = Signal()
