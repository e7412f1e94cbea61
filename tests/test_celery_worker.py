"""A task sent through Redis is taken and run by a real Celery worker process."""

import os

import pytest

from waterbilling.celery import app as celery_app
from waterbilling.tasks import ping


@pytest.mark.skipif(not os.environ.get("REDIS_URL"),
                    reason="needs REDIS_URL (redis://127.0.0.1:6379/0): a real worker takes tasks from Redis")
@pytest.mark.celery_worker
def test_a_task_sent_through_the_broker_is_run_by_a_worker(transactional_db, celery_worker_process):
    assert not celery_app.conf.task_always_eager  # sent through the broker, not run here

    sent = ping.delay()

    assert celery_worker_process.result(sent, timeout=30) == "pong"
