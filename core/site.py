"""The site's own address for links that leave the page (the processor's return pages, the test checkout).

In production it is ``SITE_URL``, the public https address, and readiness checks it against the host the office's
browser reached (``waterbilling.readiness``). In development (``DEBUG``) it is the address the request came in on, so
the demo's pay button works wherever the demo runs (another port, another machine's name) without a setting."""

from django.conf import settings


def site_url(request=None) -> str:
    """The address links back to this site start with, without a trailing slash."""
    if settings.DEBUG and request is not None:
        return request.build_absolute_uri("/").rstrip("/")
    return settings.SITE_URL.rstrip("/")


def site_url_problem(request) -> str:
    """Why ``SITE_URL`` is not the address ``request`` reached this site by, or "" when it is."""
    from urllib.parse import urlparse

    configured = urlparse(settings.SITE_URL)
    reached = request.get_host().lower()
    if configured.netloc.lower() != reached:
        return (f"SITE_URL is {settings.SITE_URL}, but this page was reached at {request.scheme}://{reached}: "
                "links in bills, e-mails and the pay button would lead elsewhere")
    return ""
