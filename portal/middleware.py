"""The language of a page. The admin and the API are in English (the office's language). A customer's pages — the
portal, paying a bill — are in the language the visitor chose with the page's language link (a cookie), else the
language of the first account they linked (``Account.language``, which their bills are printed in), else the one
their browser asks for, else English.

The linked account's language is looked up when the customer signs in or links an account, and kept in the
session (``remember_account_language``), so a page costs no query for it."""

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers

from accounts.models import PortalLink

OFFICE_PATHS = ("/admin/", "/api/")
SESSION_KEY = "portal_language"


def remember_account_language(request, user) -> None:
    """Keep the language of the first account ``user`` linked in the session ("" when none is linked)."""
    language = (PortalLink.objects.filter(user=user).order_by("linked_at", "pk")
                .values_list("account__language", flat=True).first())
    request.session[SESSION_KEY] = language or ""


def signed_in(sender, request, user, **kwargs) -> None:  # the user_logged_in receiver (portal.apps)
    if request is not None and hasattr(request, "session"):
        remember_account_language(request, user)


def page_language(request) -> str:
    if request.path.startswith(OFFICE_PATHS):
        return settings.LANGUAGE_CODE
    known = dict(settings.LANGUAGES)
    chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
    if chosen in known:
        return chosen
    session = getattr(request, "session", None)
    linked = session.get(SESSION_KEY) if session is not None else None
    if linked in known:
        return linked
    return translation.get_language_from_request(request)


class CustomerLanguageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        language = page_language(request)
        request.LANGUAGE_CODE = language
        with translation.override(language):  # the thread's language is put back after the page
            response = self.get_response(request)
        if not request.path.startswith(OFFICE_PATHS):
            patch_vary_headers(response, ("Accept-Language", "Cookie"))
            response.headers.setdefault("Content-Language", language)
        return response
