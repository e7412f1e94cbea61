"""Project-wide Celery tasks that belong to no app."""

from celery import shared_task


@shared_task
def ping() -> str:
    """Answer "pong": proves a worker takes tasks from the broker and can report back."""
    return "pong"
