"""The Celery app, configured from Django settings (CELERY_* names)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")

# The apps' tasks are found by autodiscovery; the project's own (ping, a probe for health checks) are named.
app = Celery("waterbilling", include=["waterbilling.tasks"])
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
