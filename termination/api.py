"""REST endpoints for termination cases: the list by stage, one case as ``termination show --json`` prints
it, the accounts delinquent on a date, and two steps — a written hearing request received by the office, and
the shut-off order (refused with every unmet condition of the guard).

Views are thin: a serializer checks the shape of a request, then a selector or a service of
``termination.services.cases`` does the work; their ``ApplicationError``s become 400/404 JSON, and a refused
transition (``TransitionRefused``) a 409 listing every reason, through the project's exception handler. Each
view names the model permissions it needs per method, as in every app.
"""

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import DateText, page_of, query_as_of
from core.clock import refuse_future, today
from core.dates import iso_date
from core.errors import ApplicationError, FieldError, NotFound
from core.schema import DATE_PARAMETER, OFFSET, errors_response, paged

from .models import ACTIVE, TerminationCase, WorkOrder
from .policy import termination_policy
from .selectors import case_get, case_next_step, case_show, delinquencies
from .services.cases import hearing_request
from .services.events import TEXT_MAX
from .services.shutoff import shutoff_order

VIEW_CASE = ("termination.view_terminationcase",)
CHANGE_CASE = ("termination.change_terminationcase",)
ORDER_CASE = ("termination.order_terminationcase",)
# ``active``: every case not yet closed (the shut-off ones included), as the board shows them.
STATUS_FILTERS = ("active", *TerminationCase.Status.values)


# --- response shapes ---------------------------------------------------------------------------------

class CaseListItemOut(serializers.Serializer):
    number = serializers.CharField(read_only=True)
    account_no = serializers.CharField(read_only=True)
    status = serializers.CharField(read_only=True)
    grounds = serializers.CharField(read_only=True, help_text="nonpayment or violation")
    amount_delinquent = serializers.CharField(read_only=True, help_text="Dollars, two decimals.")
    opened_on = serializers.DateField(read_only=True)
    hearing_on = serializers.DateField(read_only=True, allow_null=True)
    next_step = serializers.CharField(read_only=True, help_text="What the calendar or someone must do next.")
    next_step_on = serializers.DateField(read_only=True, allow_null=True, help_text="By when, where it has a date.")


class RecipientOut(serializers.Serializer):
    role = serializers.CharField(read_only=True, help_text="owner or occupant")
    method = serializers.CharField(read_only=True)
    served_on = serializers.DateField(read_only=True)
    received_on = serializers.DateField(read_only=True, allow_null=True)


class DeadlinesOut(serializers.Serializer):
    hearing_earliest = serializers.DateField(read_only=True, allow_null=True)
    request_by = serializers.DateField(read_only=True, allow_null=True)
    appeal_by = serializers.DateField(read_only=True, allow_null=True)


class EventOut(serializers.Serializer):
    on = serializers.DateField(read_only=True)
    what = serializers.CharField(read_only=True)
    by = serializers.CharField(read_only=True)


class CaseShowOut(serializers.Serializer):
    """``termination show --json`` (docs/termination.md)."""

    number = serializers.CharField(read_only=True)
    account_no = serializers.CharField(read_only=True)
    status = serializers.CharField(read_only=True)
    grounds = serializers.CharField(read_only=True)
    amount_delinquent = serializers.CharField(read_only=True, help_text="Dollars, two decimals.")
    recipients = RecipientOut(many=True, read_only=True, help_text="The latest notice served on each recipient.")
    deadlines = DeadlinesOut(read_only=True)
    events = EventOut(many=True, read_only=True)


class DelinquentBillOut(serializers.Serializer):
    number = serializers.CharField(read_only=True)
    bill_date = serializers.DateField(read_only=True)
    due_date = serializers.DateField(read_only=True)
    delinquent_from = serializers.DateField(read_only=True)
    amount = serializers.CharField(read_only=True, help_text="Unpaid on the date: charges and late charges.")


class DelinquencyOut(serializers.Serializer):
    account_no = serializers.CharField(read_only=True)
    owner = serializers.CharField(read_only=True)
    service_address = serializers.CharField(read_only=True)
    amount = serializers.CharField(read_only=True, help_text="Unpaid on the delinquent bills.")
    case = serializers.CharField(read_only=True, allow_null=True, help_text="The account's open case, if any.")
    bills = DelinquentBillOut(many=True, read_only=True)


class DelinquenciesOut(serializers.Serializer):
    as_of = serializers.DateField(read_only=True)
    count = serializers.IntegerField(read_only=True)
    results = DelinquencyOut(many=True, read_only=True)


class WorkOrderOut(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    case = serializers.CharField(read_only=True, help_text="The case's number.")
    kind = serializers.CharField(read_only=True, help_text="shut_off")
    status = serializers.CharField(read_only=True, help_text="issued")
    issued_on = serializers.DateField(read_only=True)


# --- request shapes ----------------------------------------------------------------------------------

class HearingRequestIn(serializers.Serializer):
    received_on = DateText(help_text="The day the written request reached the office; never after today.")
    text = serializers.CharField(max_length=TEXT_MAX, required=False, allow_blank=True,
                                 help_text="The request as written, or a summary of it.")


class ShutoffIn(serializers.Serializer):
    as_of = DateText(required=False, help_text="The day of the order. Default: today. Never after today.")


def _day(value: str, field: str):
    try:
        return iso_date(value)
    except ValueError as exc:
        raise ApplicationError(str(exc), field=field) from None


def _case(number: str) -> TerminationCase:
    try:
        return case_get(number)
    except NotFound as exc:
        # The path names the case by its number.
        raise NotFound(errors=[FieldError("number", e.message) for e in exc.errors]) from None


def _order_out(order: WorkOrder) -> dict:
    return {"id": order.pk, "case": order.case.number, "kind": order.kind, "status": order.status,
            "issued_on": order.issued_on}


# --- views ---------------------------------------------------------------------------------------------

class CaseList(APIView):
    required_permissions = {"GET": VIEW_CASE}

    @extend_schema(operation_id="v1_termination_cases_list",
                   parameters=[OpenApiParameter("status", {"type": "string", "enum": list(STATUS_FILTERS)},
                                                description="Only cases at this stage; `active`: every case not "
                                                            "closed. Default: all."),
                               OpenApiParameter("account_no", str), OFFSET],
                   responses={200: paged(CaseListItemOut, "PaginatedTerminationCaseList")})
    def get(self, request):
        rows = (TerminationCase.objects.select_related("account", "account__owner", "account__occupant")
                .prefetch_related("notices").order_by("-opened_on", "-id"))
        if (status_ := request.query_params.get("status")) is not None:
            if status_ not in STATUS_FILTERS:
                raise ApplicationError(f"'{status_}' is not one of {', '.join(STATUS_FILTERS)}", field="status")
            rows = rows.filter(status__in=[*ACTIVE, "shut_off"]) if status_ == "active" else rows.filter(
                status=status_)
        if account_no := request.query_params.get("account_no"):
            rows = rows.filter(account__account_no=account_no)
        page, meta = page_of(request, rows)
        page = list(page)
        as_of = today()
        policy = termination_policy() if page else None
        results = []
        for case in page:
            step = case_next_step(case, as_of=as_of, policy=policy)
            results.append({"number": case.number, "account_no": case.account.account_no, "status": case.status,
                            "grounds": case.grounds, "amount_delinquent": f"{case.amount_delinquent:.2f}",
                            "opened_on": case.opened_on, "hearing_on": case.hearing_on,
                            "next_step": step.what, "next_step_on": step.on})
        return Response({**meta, "results": results})


class CaseDetail(APIView):
    required_permissions = {"GET": VIEW_CASE}

    @extend_schema(responses={200: CaseShowOut})
    def get(self, request, number):
        """The case exactly as ``termination show CASE --json`` prints it."""
        return Response(case_show(_case(number)))


class DelinquentList(APIView):
    required_permissions = {"GET": VIEW_CASE}

    @extend_schema(parameters=[OpenApiParameter("as_of", DATE_PARAMETER, description="Default: today.")],
                   responses={200: DelinquenciesOut})
    def get(self, request):
        """The accounts delinquent on the date under the preset's rule (the candidates for a nonpayment case)."""
        as_of = query_as_of(request)
        rows = delinquencies(as_of=as_of)
        return Response({"as_of": as_of, "count": len(rows), "results": [
            {"account_no": d.account_no, "owner": d.owner, "service_address": d.service_address,
             "amount": f"{d.amount:.2f}", "case": d.case_number,
             "bills": [{"number": b.number, "bill_date": b.bill_date, "due_date": b.due_date,
                        "delinquent_from": b.delinquent_from, "amount": f"{b.amount:.2f}"} for b in d.bills]}
            for d in rows]})


class CaseRequest(APIView):
    required_permissions = {"POST": CHANGE_CASE}

    @extend_schema(request=HearingRequestIn,
                   responses={201: CaseShowOut,
                              409: errors_response("The case's stage does not allow it, with every reason.")})
    def post(self, request, number):
        """Record a written request for the hearing received by the office. One received after the window
        closed is accepted and flagged for the hearing officer (the case's events say so)."""
        case = _case(number)
        data = HearingRequestIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        case = hearing_request(case=case, received_on=_day(values["received_on"], "received_on"),
                               actor=request.user, via=TerminationCase.RequestVia.CLERK, text=values.get("text", ""),
                               as_of=today())
        return Response(case_show(case), status=status.HTTP_201_CREATED)


class CaseShutoff(APIView):
    required_permissions = {"POST": ORDER_CASE}

    @extend_schema(request=ShutoffIn,
                   responses={201: WorkOrderOut,
                              200: OpenApiResponse(WorkOrderOut, description="The order already issued."),
                              409: errors_response("Refused: every unmet condition of the guard, each with its "
                                                   "citation.")})
    def post(self, request, number):
        """Issue the shut-off order, when every condition of the guard holds on the date."""
        case = _case(number)
        data = ShutoffIn(data=request.data)
        data.is_valid(raise_exception=True)
        as_of = _day(data.validated_data["as_of"], "as_of") if data.validated_data.get("as_of") else today()
        refuse_future(as_of, field="as_of", doing="ordered")
        already = case.status == "ordered"
        order = shutoff_order(case=case, as_of=as_of, actor=request.user)
        return Response(_order_out(order), status=status.HTTP_200_OK if already else status.HTTP_201_CREATED)
