"""What termination announces, sent once the transaction that made it true has committed."""

from django.dispatch import Signal

# kwargs: case_id: int, event_id: int — a case closed as paid reopened (the payment that paid it was reversed).
case_reopened = Signal()
# kwargs: case_id: int, notice_id: int — the termination notice served on one recipient (the papers the ordinance
# requires are served as before; the customer is told by the way they chose too).
notice_served = Signal()
# kwargs: case_id: int — service restored after a shut-off.
service_restored = Signal()
# kwargs: case_id: int — service shut off for the case: the customer hears the one amount that restores it.
service_shut_off = Signal()
