"""REST endpoints for backflow compliance: the device registry with each device's next test due, one device
with its tests and notices, the devices due on a date (``backflow due``), a test recorded by the office, the
fine accrued for an account's open notices (exactly ``backflow fine --json``), and a premises' assessment
(``backflow require --json``, with the trace of the condition that decided).

Views are thin: a serializer checks the shape of a request, then a selector of ``backflow.selectors`` or a
service of ``backflow.services.compliance`` does the work; their ``ApplicationError``s become 400/404 JSON
through the project's exception handler. Each view names the model permissions it needs per method.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.selectors import account_get
from core.api import DateText, page_of, query_as_of
from core.clock import today
from core.dates import iso_date
from core.errors import ApplicationError, FieldError, NotFound
from core.schema import DATE_PARAMETER, OFFSET, paged

from .models import Device, DeviceTest
from .selectors import device_list, device_row, device_show, device_test_row
from .services.compliance import (
    TEXT_MAX,
    assessment_record,
    device_due,
    device_get,
    devices_due,
    test_record,
    tester_get,
)
from .services.fines import fine_quote

VIEW_DEVICE = ("backflow.view_device",)
ADD_TEST = ("backflow.add_devicetest",)
ADD_ASSESSMENT = ("backflow.add_assessment",)
MAX_WITHIN_DAYS = 3660
BOOLEANS = {"true": True, "false": False}


# --- response shapes ---------------------------------------------------------------------------------

class DeviceListItemOut(serializers.Serializer):
    serial = serializers.CharField(read_only=True)
    type = serializers.ChoiceField(Device.Type.choices, read_only=True)
    size = serializers.CharField(read_only=True, help_text='Inches, as registered ("3/4", "1 1/2").')
    account_no = serializers.CharField(read_only=True)
    status = serializers.ChoiceField(Device.Status.choices, read_only=True)
    flagged = serializers.BooleanField(read_only=True, help_text="Its type is not one the premises' rule allows.")
    next_due = serializers.DateField(read_only=True, help_text="The day its next test is due (accepted tests "
                                                               "only; a failed last test is due at once).")
    overdue = serializers.BooleanField(read_only=True, help_text="next_due is before the date asked about.")


class DeviceTestOut(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    tested_on = serializers.DateField(read_only=True)
    tester = serializers.CharField(read_only=True, help_text="The tester's NYS certification number.")
    tester_name = serializers.CharField(read_only=True)
    result = serializers.ChoiceField(DeviceTest.Result.choices, read_only=True)
    check_valve_1_psid = serializers.CharField(read_only=True, allow_null=True)
    check_valve_2_psid = serializers.CharField(read_only=True, allow_null=True)
    relief_valve_opening_psid = serializers.CharField(read_only=True, allow_null=True)
    repairs = serializers.CharField(read_only=True)
    status = serializers.ChoiceField(DeviceTest.Status.choices, read_only=True,
                                     help_text="A test a tester submitted online waits for the clerk; only "
                                               "accepted tests count toward the next test due.")
    submitted_online = serializers.BooleanField(read_only=True)
    reviewed_on = serializers.DateField(read_only=True, allow_null=True)
    review_note = serializers.CharField(read_only=True)


class DeviceNoticeOut(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    kind = serializers.CharField(read_only=True)
    citation = serializers.CharField(read_only=True)
    served_on = serializers.DateField(read_only=True)
    method = serializers.CharField(read_only=True)
    received_on = serializers.DateField(read_only=True, allow_null=True)
    deadline = serializers.DateField(read_only=True, allow_null=True)
    cured_on = serializers.DateField(read_only=True, allow_null=True)


class DeviceOut(DeviceListItemOut):
    due_citation = serializers.CharField(read_only=True, help_text="Why next_due is that day.")
    service_address = serializers.CharField(read_only=True)
    make = serializers.CharField(read_only=True)
    model = serializers.CharField(read_only=True)
    location = serializers.CharField(read_only=True)
    installed_on = serializers.DateField(read_only=True)
    removed_on = serializers.DateField(read_only=True, allow_null=True)
    flag_reason = serializers.CharField(read_only=True)
    tests = DeviceTestOut(many=True, read_only=True, help_text="Newest first.")
    notices = DeviceNoticeOut(many=True, read_only=True, help_text="Compliance notices about this device.")


class DueOut(serializers.Serializer):
    """A row of ``backflow due --json``."""

    serial = serializers.CharField(read_only=True)
    type = serializers.CharField(read_only=True)
    account_no = serializers.CharField(read_only=True)
    due_on = serializers.DateField(read_only=True)
    overdue = serializers.BooleanField(read_only=True)
    citation = serializers.CharField(read_only=True)


class DueListOut(serializers.Serializer):
    as_of = serializers.DateField(read_only=True)
    within = serializers.IntegerField(read_only=True)
    count = serializers.IntegerField(read_only=True)
    results = DueOut(many=True, read_only=True)


class TestRecordedOut(DeviceTestOut):
    serial = serializers.CharField(read_only=True)
    next_due = serializers.DateField(read_only=True, help_text="The device's next test due, with this test.")


class FineLineOut(serializers.Serializer):
    notice = serializers.IntegerField(read_only=True)
    days = serializers.IntegerField(read_only=True)
    per_day = serializers.CharField(read_only=True, help_text="Dollars, two decimals.")
    inches = serializers.CharField(read_only=True, allow_null=True,
                                   help_text="The largest pipe's inches, where the fine is counted by them.")
    amount = serializers.CharField(read_only=True, help_text="Dollars, two decimals.")
    citation = serializers.CharField(read_only=True)


class FineQuoteOut(serializers.Serializer):
    """``backflow fine ACCOUNT_NO --json`` (docs/backflow.md)."""

    account_no = serializers.CharField(read_only=True)
    as_of = serializers.DateField(read_only=True)
    amount = serializers.CharField(read_only=True, help_text="Dollars, two decimals: the sum of the lines.")
    lines = FineLineOut(many=True, read_only=True)


class RequireOut(serializers.Serializer):
    """``backflow require ACCOUNT_NO --json`` (docs/backflow.md), and the trace of the rule's reasoning."""

    required = serializers.BooleanField(read_only=True)
    allowed = serializers.ListField(child=serializers.ChoiceField(Device.Type.choices), read_only=True,
                                    help_text="The device types the premises may have.")
    citation = serializers.CharField(read_only=True)
    trace = serializers.ListField(child=serializers.CharField(), read_only=True,
                                  help_text="How the preset's rule reached the answer, step by step.")


# --- request shapes ----------------------------------------------------------------------------------

@extend_schema_field({"type": "string", "pattern": r"^[0-9]{1,3}(\.[0-9])?$", "maxLength": 20,
                      "description": "psid as the gauge showed it, 0 to 200: 5.2."})
class PsidText(serializers.CharField):
    pass


class DeviceTestIn(serializers.Serializer):
    serial = serializers.CharField(max_length=60, help_text="The device's serial number.")
    tested_on = DateText(help_text="The day of the test; never after today.")
    tester = serializers.CharField(max_length=40, help_text="The tester's NYS certification number.")
    result = serializers.ChoiceField(DeviceTest.Result.choices)
    check_valve_1_psid = PsidText(required=False, allow_blank=True, allow_null=True)
    check_valve_2_psid = PsidText(required=False, allow_blank=True, allow_null=True)
    relief_valve_opening_psid = PsidText(required=False, allow_blank=True, allow_null=True)
    repairs = serializers.CharField(max_length=TEXT_MAX, required=False, allow_blank=True)


class RequireIn(serializers.Serializer):
    conditions = serializers.ListField(child=serializers.CharField(max_length=60), max_length=50,
                                       help_text="The condition codes found at the premises, as `backflow "
                                                 "conditions` lists them for the installed preset.")
    note = serializers.CharField(max_length=TEXT_MAX, required=False, allow_blank=True,
                                 help_text="The inspector's determination, where the rule needs one.")
    reason = serializers.CharField(max_length=TEXT_MAX, required=False, allow_blank=True,
                                   help_text="Why an air gap cannot reasonably be met, where the rule asks.")


def _device(serial: str) -> Device:
    try:
        return device_get(serial)
    except NotFound as exc:
        raise NotFound(errors=[FieldError("serial", e.message) for e in exc.errors]) from None


def _query_int(request, name: str, default: int, highest: int) -> int:
    value = request.query_params.get(name)
    if value is None:
        return default
    if not (value.isascii() and value.isdigit() and len(value) <= 5 and int(value) <= highest):
        raise ApplicationError(f"must be a whole number of days from 0 to {highest}", field=name)
    return int(value)


def _query_bool(request, name: str) -> bool | None:
    value = request.query_params.get(name)
    if value is None:
        return None
    if value not in BOOLEANS:
        raise ApplicationError(f"'{value}' is not true or false", field=name)
    return BOOLEANS[value]


# --- views ---------------------------------------------------------------------------------------------

AS_OF = OpenApiParameter("as_of", DATE_PARAMETER, description="The day next_due and overdue are about. "
                                                               "Default: today.")


class DeviceList(APIView):
    required_permissions = {"GET": VIEW_DEVICE}

    @extend_schema(operation_id="v1_backflow_devices_list",
                   parameters=[OpenApiParameter("account_no", str, description="Only the account's devices."),
                               OpenApiParameter("overdue", bool, description="Only devices whose test is "
                                                                             "(true) or is not (false) overdue."),
                               AS_OF, OFFSET],
                   responses={200: paged(DeviceListItemOut, "PaginatedBackflowDeviceList")})
    def get(self, request):
        """The registered devices, by account and serial, with each one's next test due."""
        as_of = query_as_of(request)
        rows = device_list(as_of=as_of, account_no=request.query_params.get("account_no") or "",
                           overdue=_query_bool(request, "overdue"))
        page, meta = page_of(request, rows)
        return Response({**meta, "results": [device_row(d, as_of=as_of) for d in page]})


class DeviceDetail(APIView):
    required_permissions = {"GET": VIEW_DEVICE}

    @extend_schema(parameters=[AS_OF], responses={200: DeviceOut})
    def get(self, request, serial):
        """One device: its details, its next test due, its tests and the notices about it."""
        as_of = query_as_of(request)
        return Response(device_show(_device(serial), as_of=as_of))


class DueList(APIView):
    required_permissions = {"GET": VIEW_DEVICE}

    @extend_schema(parameters=[OpenApiParameter("as_of", DATE_PARAMETER, description="Default: today."),
                               OpenApiParameter("within", {"type": "integer", "minimum": 0,
                                                           "maximum": MAX_WITHIN_DAYS},
                                                description="Days ahead of as_of. Default: 30.")],
                   responses={200: DueListOut})
    def get(self, request):
        """Devices in service whose test is overdue on the date or due within the days ahead, soonest first:
        the rows of ``backflow due --json``."""
        as_of = query_as_of(request)
        within = _query_int(request, "within", 30, MAX_WITHIN_DAYS)
        rows = devices_due(as_of=as_of, within_days=within)
        return Response({"as_of": as_of, "within": within, "count": len(rows), "results": [
            {"serial": d.device.serial, "type": d.device.type, "account_no": d.device.account.account_no,
             "due_on": d.due_on, "overdue": d.overdue, "citation": d.citation} for d in rows]})


class TestCreate(APIView):
    required_permissions = {"POST": ADD_TEST}

    @extend_schema(request=DeviceTestIn, responses={201: TestRecordedOut})
    def post(self, request):
        """Record a test done by a certified tester, as the office received it (accepted at once). A tester
        whose certification had lapsed on the test day is refused."""
        data = DeviceTestIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        errors, found = [], {}
        for field, lookup in (("tested_on", iso_date), ("serial", device_get), ("tester", tester_get)):
            try:
                found[field] = lookup(values[field])
            except ValueError as exc:
                errors.append(FieldError(field, str(exc)))
            except ApplicationError as exc:  # an unknown serial or tester in the body is bad input: 400
                errors.extend(FieldError(field, e.message) for e in exc.errors)
        if errors:
            raise ApplicationError(errors=errors)
        as_of = today()
        test = test_record(device=found["serial"], tester=found["tester"], tested_on=found["tested_on"],
                           result=values["result"], actor=request.user, as_of=as_of,
                           check_valve_1=values.get("check_valve_1_psid"),
                           check_valve_2=values.get("check_valve_2_psid"),
                           relief_valve=values.get("relief_valve_opening_psid"), repairs=values.get("repairs", ""))
        due = device_due(found["serial"], as_of=as_of)
        return Response({**device_test_row(test), "serial": test.device.serial, "next_due": due.due_on},
                        status=status.HTTP_201_CREATED)


class AccountFine(APIView):
    required_permissions = {"GET": VIEW_DEVICE}

    @extend_schema(parameters=[OpenApiParameter("as_of", DATE_PARAMETER, description="Default: today.")],
                   responses={200: FineQuoteOut})
    def get(self, request, account_no):
        """The fine accrued on the date for the account's open notices, exactly as ``backflow fine --json``
        prints it. Nothing is charged."""
        return Response(fine_quote(account=account_get(account_no=account_no), as_of=query_as_of(request)))


class AccountRequire(APIView):
    required_permissions = {"POST": ADD_ASSESSMENT}

    @extend_schema(request=RequireIn, responses={201: RequireOut})
    def post(self, request, account_no):
        """Record the conditions found at the account's premises today and answer which devices are allowed
        (``backflow require --json``); the account's devices are flagged again against the answer."""
        account = account_get(account_no=account_no)
        data = RequireIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            assessment = assessment_record(account=account, codes=values["conditions"], as_of=today(),
                                           actor=request.user, note=values.get("note", ""),
                                           reason=values.get("reason", ""))
        except ApplicationError as exc:
            # The rule names a condition code; the body names the list it came in.
            raise ApplicationError(errors=[FieldError("conditions" if e.field == "condition" else e.field,
                                                      e.message) for e in exc.errors]) from None
        return Response({"required": assessment.required, "allowed": assessment.allowed,
                         "citation": assessment.citation, "trace": assessment.trace},
                        status=status.HTTP_201_CREATED)
