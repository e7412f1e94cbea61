"""The OpenAPI schema of ``/api/v1/`` (``REST_FRAMEWORK["DEFAULT_SCHEMA_CLASS"]``).

Every operation answers errors as ``{"errors": [{"field", "message"}]}``; ``ApiSchema`` documents that
body under each error status an operation can give, so a view declares only its successes (and a 409
where it has one): 400 for bad input (every operation takes some, if only its query string), 401
without credentials, 403 when the caller's role does not allow it, 404 where the path names something.
"""

from drf_spectacular.openapi import AutoSchema
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, inline_serializer
from rest_framework import serializers

from .api import MAX_OFFSET, PAGE


class FieldErrorSerializer(serializers.Serializer):
    field = serializers.CharField(
        read_only=True, help_text="The field, query parameter or path part at fault (`[2].amount` for the third "
                                  "item of a list); blank when it is the request as a whole.")
    message = serializers.CharField(read_only=True, help_text="The rule broken, in words.")
    line = serializers.IntegerField(required=False, help_text="The line of a file, when the input was one.")


class ErrorsSerializer(serializers.Serializer):
    errors = FieldErrorSerializer(many=True, read_only=True)


def errors_response(description: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorsSerializer, description=description)


ERROR_RESPONSES = {
    400: errors_response("Bad input: each error names the field and the rule."),
    401: errors_response("No credentials: sign in (session) or send `Authorization: Token …`."),
    403: errors_response("The caller's staff role does not allow this."),
}
NOT_FOUND = {404: errors_response("Nothing by that name.")}
CONFLICT = {409: errors_response("Someone else recorded the same thing at the same moment; send it again.")}

OFFSET = OpenApiParameter("offset", {"type": "integer", "minimum": 0, "maximum": MAX_OFFSET},
                          description=f"Rows to skip; pages hold {PAGE}.")
DATE_PARAMETER = {"type": "string", "format": "date"}


def paged(item: type[serializers.Serializer], name: str) -> serializers.Serializer:
    """What ``core.api.page_of`` answers: a page of ``item``s with where it starts, its size and the whole count."""
    return inline_serializer(name=name, fields={
        "offset": serializers.IntegerField(read_only=True),
        "limit": serializers.IntegerField(read_only=True),
        "count": serializers.IntegerField(read_only=True, help_text="Rows in all pages."),
        "results": item(many=True, read_only=True),
    })


class ApiSchema(AutoSchema):
    def _get_response_bodies(self, direction="response"):
        # Extended here rather than in get_response_serializers, which @extend_schema(responses=…) replaces.
        responses = super()._get_response_bodies(direction)
        errors = {**ERROR_RESPONSES, **(NOT_FOUND if "{" in self.path else {})}
        for code, response in errors.items():
            if str(code) not in responses:
                responses[str(code)] = self._get_response_for_code(response, str(code), direction=direction)
        return responses
