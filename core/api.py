"""API router and the exception handler that maps errors to ``{"errors": [{"field", "message"}]}``."""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from django.views import defaults
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import ApplicationError
from .middleware import API_PREFIX


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
