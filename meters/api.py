"""REST endpoints for meter readings, one or many at once.

Readings arrive as JSON text and go through ``meters.services.readings_record``, all or nothing, the same
writer as an imported file, so the API's messages are the file's; an error names the item as ``[2].reading``.
"""

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import DateText
from core.clock import today
from core.csvimport import CsvRow
from core.errors import ApplicationError, FieldError
from core.schema import CONFLICT

from .services import REQUEST, readings_record

API_SOURCE = "api"
ADD_READING = ("meters.add_reading",)


@extend_schema_field({"type": "string", "pattern": "^[0-9]{1,15}$",
                      "description": "The register as read, a whole number in the meter's unit."})
class RegisterText(serializers.CharField):
    pass


class ReadingIn(serializers.Serializer):
    meter_serial = serializers.CharField(max_length=40)
    read_date = DateText()
    reading = RegisterText()
    read_type = serializers.CharField(required=False, allow_blank=True, default="actual",
                                      help_text="actual (the default), estimated or final")


class ReadingsRecordedOut(serializers.Serializer):
    created = serializers.IntegerField(read_only=True)
    skipped = serializers.IntegerField(read_only=True, help_text="Readings already recorded.")


def _readings_save(request, items: list[dict]):
    rows = [CsvRow(line=i, values={"meter_serial": item["meter_serial"], "read_date": item["read_date"],
                                   "reading": item["reading"], "read_type": item.get("read_type") or ""})
            for i, item in enumerate(items)]
    try:
        result = readings_record(rows=rows, as_of=today(), actor=request.user, source=API_SOURCE,
                                 reason=f"api {request.path}"[:100], words=REQUEST)
    except ApplicationError as exc:
        exc.errors = [FieldError(field=f"[{e.line}].{e.field}" if e.line is not None else e.field,
                                 message=e.message) for e in exc.errors]
        raise
    return Response({"created": result.created, "skipped": result.skipped}, status=status.HTTP_201_CREATED)


class ReadingCreate(APIView):
    required_permissions = {"POST": ADD_READING}

    @extend_schema(request=ReadingIn, responses={201: ReadingsRecordedOut, **CONFLICT})
    def post(self, request):
        data = ReadingIn(data=request.data)
        data.is_valid(raise_exception=True)
        return _readings_save(request, [data.validated_data])


class ReadingBulkCreate(APIView):
    required_permissions = {"POST": ADD_READING}

    @extend_schema(request=ReadingIn(many=True), responses={201: ReadingsRecordedOut, **CONFLICT})
    def post(self, request):
        data = ReadingIn(data=request.data, many=True)
        data.is_valid(raise_exception=True)
        return _readings_save(request, data.validated_data)
