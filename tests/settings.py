"""The settings the test suite runs with: the project's settings in development mode, asked for by name.

``waterbilling.settings`` is production unless ``DJANGO_DEBUG`` says otherwise — and production wants a
real ``SECRET_KEY`` and redirects every plain-HTTP request to HTTPS. The suite asks for development mode
before those settings are read, in the environment, so the processes it starts (a Celery worker, the
production-settings checks, which set their own) inherit it. While tests run, pytest-django still turns
``DEBUG`` itself off, as in production.
"""

import os

os.environ["DJANGO_DEBUG"] = "1"

from waterbilling.settings import *  # noqa: E402, F403

# Tests count in this process's memory, never in a Redis other test runs share (the cache is cleared for
# each test); the Redis counters have a test of their own.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
