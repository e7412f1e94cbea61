from celery import shared_task

from .services import notices_send_waiting


@shared_task
def notices_send_waiting_task() -> int:
    """Every ten minutes: send the notices that waited out the quiet hours."""
    return notices_send_waiting()


SEND_WAITING_TASK = "notices.tasks.notices_send_waiting_task"


def notices_schedule_install() -> bool:
    """Schedule the sender of waiting notices every ten minutes, once (a supervisor's edit in the admin stays)."""
    from django_celery_beat.models import IntervalSchedule, PeriodicTask

    if PeriodicTask.objects.filter(task=SEND_WAITING_TASK).exists():
        return False
    every, _ = IntervalSchedule.objects.get_or_create(every=10, period=IntervalSchedule.MINUTES)
    PeriodicTask.objects.create(name="Notices waiting out the quiet hours", task=SEND_WAITING_TASK, interval=every,
                                description="Sends the e-mail and text notices decided between 9 pm and 8 am.")
    return True
