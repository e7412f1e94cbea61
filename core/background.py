"""Long work a page starts and then follows (a print file, a big report): on a worker where there is one (Celery
with a broker); in the embedded single-process setup (Celery eager, no broker) on a thread of its own, so the
request answers at once and the page shows the progress, as it does with a worker.

``LONG_WORK_IN_THREAD`` (default: on when tasks run eagerly) says which; the tests turn it off, so what a page
starts is done when its request returns.
"""

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)


def long_work_start(task, *args) -> threading.Thread | None:
    """Run the Celery task ``task`` with ``args``: queued to a worker, or eagerly on a thread of its own here (the
    thread is returned)."""
    if not (getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False) and getattr(settings, "LONG_WORK_IN_THREAD", False)):
        task.delay(*args)
        return None

    def work() -> None:
        close_old_connections()
        try:
            task.run(*args)
        except Exception:  # the task keeps its own failure on its row; this is for the log
            logger.exception("%s%r failed", task.name, args)
        finally:
            connection.close()

    thread = threading.Thread(target=work, name=f"long-work-{task.name}", daemon=True)
    thread.start()
    return thread
