"""``bills_issued`` is sent with the ids of new bills once the transaction that wrote them has committed.

Billing does not know who listens: the PDF renderer (this app) and the paperless email (the portal).
"""

from django.dispatch import Signal

bills_issued = Signal()  # kwargs: bill_ids: list[int]
