"""A request carrying a NUL character is refused at the edge, with a 400 naming where it was.

PostgreSQL cannot store or compare text holding NUL (``\\x00``): one that reached a query would be a 500.
Form and serializer fields refuse it themselves (Django's and DRF's ``CharField``); this covers what no
form sees — the URL's path, the query string and the headers (a token, a cookie) — for the API, the
admin and the portal alike. The API answers ``{"errors": [{"field", "message"}]}``, other pages text.
"""

from django.http import HttpResponseBadRequest, JsonResponse

from .errors import NUL_MESSAGE

NUL = "\x00"
API_PREFIX = "/api/"


def _shown(name: str) -> str:
    return name.replace(NUL, "\\x00")


def _refusal(request, field: str):
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"errors": [{"field": field, "message": NUL_MESSAGE}]}, status=400)
    return HttpResponseBadRequest(f"{field}: {NUL_MESSAGE}", content_type="text/plain; charset=utf-8")


class RefuseNulMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        for key, value in request.META.items():
            if key.startswith("HTTP_") and isinstance(value, str) and NUL in value:
                return _refusal(request, key[5:].replace("_", "-").title())
        for name, values in request.GET.lists():
            if NUL in name or any(NUL in value for value in values):
                return _refusal(request, _shown(name))
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        for name, value in view_kwargs.items():
            if isinstance(value, str) and NUL in value:
                return _refusal(request, name)
        if NUL in request.path:
            return _refusal(request, "path")
        return None
