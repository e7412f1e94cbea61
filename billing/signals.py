"""What billing announces, sent once the transaction that made it true has committed.

Billing does not know who listens: ``billing.receivers`` hands the work to Celery tasks (services never
import tasks, so there is no import circle), and the portal emails paperless customers.
"""

from django.dispatch import Signal

bills_issued = Signal()  # kwargs: bill_ids: list[int] — new bills
bill_pdfs_wanted = Signal()  # kwargs: bill_ids: list[int] — bills whose PDF is to be rendered and stored
billing_run_started = Signal()  # kwargs: run_id: int — a new run whose chunks are to be handed out
billing_chunk_due = Signal()  # kwargs: chunk_id: int — a chunk to hand to a worker (new, or its worker is gone)
payment_posted = Signal()  # kwargs: payment_ids: list[int], account_ids: list[int] — payments now on the books
# kwargs: reversal_id: int, payment_id: int, account_id: int, reason: str — a payment taken back (returned, refunded,
# disputed, misposted, entered in error); what it paid is owed again from the day it was reversed.
payment_reversed = Signal()
# kwargs: bill_id: int, account_id: int, voided_on: date — a bill voided on that day (its period may be billed again)
bill_voided = Signal()
charge_posted = Signal()  # kwargs: charge_id: int — a fee or fine charged, waiting for the account's next bill
mail_file_requested = Signal()  # kwargs: mail_file_id: int — a run's print file for the mail house to make
