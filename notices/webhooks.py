"""The providers' webhooks answer only when they can be told from a forgery.

The mail provider's tracking webhooks (django-anymail: a bounce or a complaint stops e-mail to an address) are on only
with ``ANYMAIL_WEBHOOK_SECRET``, which anymail then requires of every call (HTTP basic auth); Twilio's callbacks (a
STOP stops texts to a number) only with ``TWILIO_AUTH_TOKEN``, whose signature each call must carry — an empty token
is a key anyone can sign with. Without its secret a webhook answers 404 and changes nothing; ``readiness`` and
``check --deploy`` name the missing secret (``waterbilling.checks``).
"""

from functools import wraps

from django.conf import settings
from django.http import Http404
from django.urls import URLPattern


def mail_webhooks_on() -> bool:
    return bool(getattr(settings, "ANYMAIL", {}).get("WEBHOOK_SECRET"))


def text_webhooks_on() -> bool:
    return bool(settings.TWILIO_AUTH_TOKEN)


def only_when(on, secret: str):
    """A view that answers 404 while ``on()`` is false (its provider's ``secret`` is not set)."""
    def wrap(view):
        @wraps(view)
        def guarded(request, *args, **kwargs):
            if not on():
                raise Http404(f"this webhook is off: {secret} is not set")
            return view(request, *args, **kwargs)
        return guarded
    return wrap


def mail_webhook_urls() -> list[URLPattern]:
    """django-anymail's tracking webhooks, each off without ``ANYMAIL_WEBHOOK_SECRET``."""
    from anymail import urls

    guard = only_when(mail_webhooks_on, "ANYMAIL_WEBHOOK_SECRET")
    return [URLPattern(p.pattern, guard(p.callback), p.default_args, p.name) for p in urls.urlpatterns]
