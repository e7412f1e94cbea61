"""The client's address, for throttles and lockouts.

Behind the documented TLS proxy every request arrives from the proxy's address, so ``REMOTE_ADDR`` alone
would put every customer in one bucket: one person's wrong guesses would lock everyone out. With
``TRUSTED_PROXY_COUNT`` set to the number of proxies in front of the site (each appends the address it saw
to ``X-Forwarded-For``), the client is the entry that many places from the right: what the outermost
trusted proxy saw. Entries further left were written by the client and are never trusted. Off (0) by
default, where ``REMOTE_ADDR`` is the client.
"""

import ipaddress

from django.conf import settings


def client_ip(request) -> str | None:
    remote = request.META.get("REMOTE_ADDR") or None
    count = settings.TRUSTED_PROXY_COUNT
    if count <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < count:
        return remote  # did not come through every trusted proxy
    candidate = hops[-count]
    try:
        return str(ipaddress.ip_address(candidate))
    except ValueError:
        return remote
