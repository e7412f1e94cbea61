from django.dispatch import Signal

# Sent on commit when notices were written to be sent by a worker (e-mails and texts): no arguments.
notices_queued = Signal()
