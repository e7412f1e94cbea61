"""Rate limits: a count of hits per key in fixed windows, kept in the cache.

One atomic increment a hit (Redis ``INCR`` in production, where every web process shares the count;
without Redis, each process's memory counts on its own). Windows are aligned to the clock, so the wait
until the next one is known exactly; a burst across a window's end may get up to twice the limit, which
is what a simple limit gives up to stay one increment.
"""

import logging
import math
import time

from django.core.cache import cache

logger = logging.getLogger(__name__)


def rate_limit_hit(*, scope: str, key: str, limit: int, window_seconds: int) -> int | None:
    """Count one hit of ``key`` in ``scope``. None while within ``limit`` hits this window; past it, the
    seconds until the next window."""
    now = time.time()
    window = int(now // window_seconds)
    left = (window + 1) * window_seconds - now
    name = f"ratelimit:{scope}:{key}:{window}"
    try:
        cache.add(name, 0, timeout=math.ceil(left) + 1)
        try:
            hits = cache.incr(name)
        except ValueError:  # evicted between add and incr: this hit starts the count again
            cache.add(name, 1, timeout=math.ceil(left) + 1)
            hits = 1
    except Exception:  # noqa: BLE001 - whatever the cache backend raises when it is unreachable
        # A limit that cannot count lets the hit through: a customer's bill matters more than the limit
        # while Redis is down, and the log says so.
        logger.warning("rate limit %s not counted: the cache is unavailable", scope, exc_info=True)
        return None
    return None if hits <= limit else max(1, math.ceil(left))
