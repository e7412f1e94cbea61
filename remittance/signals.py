"""What remittance announces, sent once the transaction that made it true has committed (``autopay_notice_due``:
when the notice is to be sent, which may be inside the transaction that made it)."""

from django.dispatch import Signal

# kwargs: enrolment_id: int, code: str, reason: str — a debit came back with a code that ends the authorization
# (closed account, unauthorized…): the enrolment is suspended and nothing more is debited.
autopay_suspended = Signal()

# kwargs: enrolment_id: int, why: str — the office ended an enrolment the customer did not cancel (the account
# closed): nothing more is debited, and the customer is to be told how to pay what is left.
autopay_ended = Signal()

# kwargs: notice_id: int — a notice before a debit (``AutopayNotice``) is to be sent to the customer: the notices
# app sends it on the customer's chosen ways, and marks it sent (``autopay_notice_sent``) when the e-mail has gone,
# which is what lets its debit be made. Sent synchronously: a notice not sent debits nothing.
autopay_notice_due = Signal()
