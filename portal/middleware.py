"""The language of a page. The admin and the API are in English (the office's language). A customer's pages — the
portal, paying a bill — are in the language the visitor chose with the page's language link (a cookie), else the
language of the first account they linked (``Account.language``, which their bills are printed in), else the one
their browser asks for, else English."""

from django.conf import settings
from django.utils import translation
from django.utils.cache import patch_vary_headers

from accounts.models import PortalLink

OFFICE_PATHS = ("/admin/", "/api/")


def customer_language(request) -> str:
    if request.path.startswith(OFFICE_PATHS):
        return settings.LANGUAGE_CODE
    known = dict(settings.LANGUAGES)
    chosen = request.COOKIES.get(settings.LANGUAGE_COOKIE_NAME)
    if chosen in known:
        return chosen
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        linked = (PortalLink.objects.filter(user=user).order_by("linked_at", "pk")
                  .values_list("account__language", flat=True).first())
        if linked in known:
            return linked
    return translation.get_language_from_request(request)


class CustomerLanguageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        language = customer_language(request)
        translation.activate(language)
        request.LANGUAGE_CODE = language
        response = self.get_response(request)
        if not request.path.startswith(OFFICE_PATHS):
            patch_vary_headers(response, ("Accept-Language", "Cookie"))
            response.headers.setdefault("Content-Language", language)
        return response
