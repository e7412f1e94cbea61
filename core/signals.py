"""``import_job_stored`` is sent with a job's id once the transaction that stored its file has committed."""

from django.dispatch import Signal

import_job_stored = Signal()  # kwargs: job_id: int
