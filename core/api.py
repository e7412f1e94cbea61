"""What every app's API shares: query-string dates and pages, the text fields requests arrive in, and the
exception handler that maps errors to ``{"errors": [{"field", "message"}]}``.

Each app serves its own endpoints (``<app>/api.py``, routed by ``<app>/api_urls.py``); ``waterbilling``
only includes them under ``/api/v1/``. The OpenAPI side of these helpers is ``core.schema``.
"""

from datetime import date

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from django.views import defaults
from drf_spectacular.utils import extend_schema_field
from rest_framework import exceptions, parsers, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .clock import today
from .dates import iso_date
from .errors import ApplicationError
from .middleware import API_PREFIX

PAGE = 100
MAX_OFFSET = 1_000_000_000


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, refusing a body nested deeper than Python's decoder can follow (a 5,000-deep array)
    with a 400 that says so, instead of the RecursionError a 500 would be."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise exceptions.ParseError("JSON parse error - the body is nested too deeply") from None


def query_date(request, name: str) -> date | None:
    """A date query parameter; None when it is left out (a blank one is a mistake, not a default)."""
    value = request.query_params.get(name)
    if value is None:
        return None
    if not value:
        raise ApplicationError("is blank; give a date (YYYY-MM-DD) or leave it out", field=name)
    try:
        return iso_date(value)
    except ValueError as exc:
        raise ApplicationError(str(exc), field=name) from None


def query_as_of(request) -> date:
    """``?as_of=``, today when it is left out."""
    return query_date(request, "as_of") or today()


def page_of(request, queryset):
    """One page of ``queryset`` from ``?offset=`` and what the answer says about it (offset, limit, count)."""
    # Bounded: the database's OFFSET is a 64-bit integer, and no list here comes near a billion rows.
    value = request.query_params.get("offset", "0")
    if not (value.isascii() and value.isdigit() and len(value) <= 10 and int(value) <= MAX_OFFSET):
        raise ApplicationError(f"must be a whole number from 0 to {MAX_OFFSET}", field="offset")
    offset = int(value)
    return queryset[offset:offset + PAGE], {"offset": offset, "limit": PAGE, "count": queryset.count()}


# Readings and payments arrive as text and are parsed, with every other rule, by the same writer as an
# imported file (so its messages are the file's); the schema says what text each field takes.

@extend_schema_field({"type": "string", "format": "date"})
class DateText(serializers.CharField):
    pass


@extend_schema_field({"type": "string", "pattern": r"^\$?[0-9][0-9,]*(\.[0-9]{1,2})?$", "maxLength": 20,
                      "description": "Dollars and cents, more than zero: 12, 12.5, 1234.56 or $1,234.56."})
class DollarsText(serializers.CharField):
    pass


def _flatten(detail, field="") -> list[dict]:
    """DRF's nested error detail as a flat list; the items of a list are named as ``[2].amount``."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            if key == "non_field_errors":
                name = field
            elif isinstance(key, int) or str(key).isdigit():
                name = f"{field}[{key}]"
            else:
                name = f"{field}.{key}" if field else str(key)
            out.extend(_flatten(value, name))
        return out
    if isinstance(detail, list):
        out = []
        for index, item in enumerate(detail):
            out.extend(_flatten(item, f"{field}[{index}]" if isinstance(item, dict) else field))
        return out
    return [{"field": field, "message": str(detail)}]


def _listed(errors: list[dict]) -> dict:
    """The first ``IMPORT_ERRORS_LISTED`` errors, and how many more there are: a bulk request of a hundred
    thousand bad rows is answered with a few hundred, like an imported file."""
    limit = settings.IMPORT_ERRORS_LISTED
    data: dict = {"errors": errors[:limit]}
    if len(errors) > limit:
        data["errors_not_listed"] = len(errors) - limit
    return data


def exception_handler(exc, context):
    if isinstance(exc, ApplicationError):
        return Response(exc.as_dict(), status=exc.status_code)
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        return Response(_listed(_flatten(detail)), status=status.HTTP_400_BAD_REQUEST)
    if isinstance(exc, Http404):
        return Response({"errors": [{"field": "", "message": "Not found."}]}, status=404)
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return Response({"errors": [{"field": "", "message": f"the request is larger than {limit:,} bytes, the most "
                                                             "one request may send; send the rows in smaller "
                                                             "batches"}]},
                        status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
    response = drf_exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        response.data = _listed(_flatten(exc.detail))
    return response


def page_not_found(request, exception):
    """``handler404``: an unknown URL under ``/api/`` answers the API's JSON, elsewhere the usual page."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"errors": [{"field": "", "message": "Not found."}]}, status=404)
    return defaults.page_not_found(request, exception)
