"""REST endpoints for accounts, readings, payments, statements, bills, billing and penalty runs, fees.

Views are thin: they validate the shape of a request with a serializer and call a service or selector.
Services raise ``ApplicationError``s, which the project's exception handler turns into 400/404/409 JSON.
"""

from datetime import date

from django.db.models import Q
from django.http import HttpResponse
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import Account
from meters.services import REQUEST, readings_record
from waterbilling.csvimport import CsvRow, dollars
from waterbilling.errors import ApplicationError, FieldError, NotFound

from .fees import fee_in_force, fee_quote
from .models import Bill, BillingRun, Fee, Payment
from .selectors import account_get, account_statement
from .services.payments import PAYMENTS_LAYOUT, payments_post
from .services.penalties import penalties_assess_due
from .services.runs import billing_run_start

PAGE = 100
API_SOURCE = "api"


def _as_of(request, name="as_of") -> date:
    value = request.query_params.get(name)
    if not value:
        return timezone.localdate()
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ApplicationError(f"'{value}' is not a date; use YYYY-MM-DD", field=name) from None


def _page(request, queryset):
    try:
        offset = max(int(request.query_params.get("offset", 0)), 0)
    except ValueError:
        raise ApplicationError("must be a whole number", field="offset") from None
    return queryset[offset:offset + PAGE], {"offset": offset, "limit": PAGE, "count": queryset.count()}


# --- serializers ------------------------------------------------------------------------------------

class AccountSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.name")
    owner_address = serializers.CharField(source="owner.mailing_address")
    occupant = serializers.CharField(source="occupant.name", default=None)
    service_address = serializers.CharField(source="premises.service_address")
    sbl = serializers.CharField(source="premises.sbl")
    meters = serializers.SerializerMethodField()

    class Meta:
        model = Account
        fields = ("account_no", "book", "category", "status", "paperless", "owner", "owner_address", "occupant",
                  "service_address", "sbl", "meters")

    def get_meters(self, obj) -> list[dict]:
        return [{"serial": i.meter.serial, "size": i.meter.size, "unit": i.meter.unit,
                 "installed_on": i.installed_on, "removed_on": i.removed_on}
                for i in obj.installations.select_related("meter").order_by("installed_on")]


class BillSerializer(serializers.ModelSerializer):
    account_no = serializers.CharField(source="account.account_no")
    total = serializers.SerializerMethodField()
    lines = serializers.SerializerMethodField()

    class Meta:
        model = Bill
        fields = ("number", "account_no", "status", "frequency", "bill_date", "due_date", "period_start",
                  "period_end", "gallons", "estimated", "total", "lines")

    def get_total(self, obj) -> str:
        return f"{obj.total.amount:.2f}"

    def get_lines(self, obj) -> list[dict]:
        return [{"kind": line.kind, "description": line.description, "citation": line.citation,
                 "quantity": f"{line.quantity.normalize():f}", "rate": f"{line.rate.normalize():f}",
                 "amount": f"{line.amount.amount:.2f}"} for line in obj.lines.all()]


class BillingRunSerializer(serializers.ModelSerializer):
    total_billed = serializers.SerializerMethodField()
    progress_percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = BillingRun
        fields = ("id", "run_on", "status", "progress_percent", "accounts_due", "chunks_total", "chunks_done",
                  "bills_created", "already_billed", "exceptions_count", "total_billed", "accept_sample_rates",
                  "created_at", "finished_at", "error")

    def get_total_billed(self, obj) -> str:
        return f"{obj.total_billed.amount:.2f}"


class ReadingIn(serializers.Serializer):
    meter_serial = serializers.CharField(max_length=40)
    read_date = serializers.CharField()
    reading = serializers.CharField()
    read_type = serializers.CharField(required=False, allow_blank=True, default="actual")


class PaymentIn(serializers.Serializer):
    account_no = serializers.CharField(max_length=20)
    amount = serializers.CharField(max_length=20)
    paid_on = serializers.CharField()
    reference = serializers.CharField(max_length=80)


class RunIn(serializers.Serializer):
    run_on = serializers.DateField()
    accept_sample_rates = serializers.BooleanField(
        required=False, default=False,
        help_text="Bill even though the rate schedule in force is the preset's sample one (recorded on the run); "
                  "not needed on a demo/training site.")


class PenaltyRunIn(serializers.Serializer):
    as_of = serializers.DateField()


# --- views ------------------------------------------------------------------------------------------

class AccountList(APIView):
    @extend_schema(responses=AccountSerializer(many=True),
                   parameters=[OpenApiParameter("q", str, description="number, name, address or SBL")])
    def get(self, request):
        rows = Account.objects.select_related("owner", "occupant", "premises").order_by("account_no")
        if q := request.query_params.get("q"):
            rows = rows.filter(Q(account_no__icontains=q) | Q(owner__name__icontains=q)
                               | Q(occupant__name__icontains=q) | Q(premises__service_address__icontains=q)
                               | Q(premises__sbl__icontains=q))
        page, meta = _page(request, rows)
        return Response({**meta, "results": AccountSerializer(page, many=True).data})


class AccountDetail(APIView):
    @extend_schema(responses=AccountSerializer)
    def get(self, request, account_no):
        return Response(AccountSerializer(account_get(account_no=account_no)).data)


class StatementView(APIView):
    @extend_schema(parameters=[OpenApiParameter("as_of", date)], responses=dict)
    def get(self, request, account_no):
        return Response(account_statement(account=account_get(account_no=account_no), as_of=_as_of(request)))


def _readings_save(request, items: list[dict]):
    """Readings arrive as JSON and go through the same writer, all or nothing, as an imported file."""
    rows = [CsvRow(line=i, values={"meter_serial": item["meter_serial"], "read_date": item["read_date"],
                                   "reading": item["reading"], "read_type": item.get("read_type") or ""})
            for i, item in enumerate(items)]
    try:
        result = readings_record(rows=rows, as_of=timezone.localdate(), actor=request.user, source=API_SOURCE,
                                 reason=f"api {request.path}"[:100], words=REQUEST)
    except ApplicationError as exc:
        exc.errors = [FieldError(field=f"[{e.line}].{e.field}" if e.line is not None else e.field,
                                 message=e.message) for e in exc.errors]
        raise
    return Response({"created": result.created, "skipped": result.skipped}, status=status.HTTP_201_CREATED)


class ReadingCreate(APIView):
    @extend_schema(request=ReadingIn, responses=dict)
    def post(self, request):
        data = ReadingIn(data=request.data)
        data.is_valid(raise_exception=True)
        return _readings_save(request, [data.validated_data])


class ReadingBulkCreate(APIView):
    @extend_schema(request=ReadingIn(many=True), responses=dict)
    def post(self, request):
        data = ReadingIn(data=request.data, many=True)
        data.is_valid(raise_exception=True)
        return _readings_save(request, data.validated_data)


class PaymentListCreate(APIView):
    @extend_schema(parameters=[OpenApiParameter("account_no", str)], responses=dict)
    def get(self, request):
        rows = Payment.objects.select_related("account").order_by("-paid_on", "-id")
        if account_no := request.query_params.get("account_no"):
            rows = rows.filter(account__account_no=account_no)
        page, meta = _page(request, rows)
        return Response({**meta, "results": [
            {"account_no": p.account.account_no, "amount": f"{p.amount.amount:.2f}", "paid_on": p.paid_on,
             "reference": p.reference, "source": p.source} for p in page]})

    @extend_schema(request=PaymentIn(many=True), responses=dict)
    def post(self, request):
        many = isinstance(request.data, list)
        data = PaymentIn(data=request.data, many=many)
        data.is_valid(raise_exception=True)
        items = data.validated_data if many else [data.validated_data]
        rows = [CsvRow(line=i, values={k: str(item[k]) for k in PAYMENTS_LAYOUT.columns})
                for i, item in enumerate(items)]
        try:
            result = payments_post(rows=rows, as_of=timezone.localdate(), actor=request.user, source="api")
        except ApplicationError as exc:
            exc.errors = [FieldError(field=f"[{e.line}].{e.field}" if many else e.field, message=e.message)
                          for e in exc.errors]
            raise
        return Response({"posted": result.created, "skipped": result.skipped}, status=status.HTTP_201_CREATED)


class BillList(APIView):
    @extend_schema(parameters=[OpenApiParameter("account_no", str), OpenApiParameter("bill_date", date)],
                   responses=BillSerializer(many=True))
    def get(self, request):
        rows = Bill.objects.select_related("account").prefetch_related("lines").order_by("-bill_date", "number")
        if account_no := request.query_params.get("account_no"):
            rows = rows.filter(account__account_no=account_no)
        if request.query_params.get("bill_date"):
            rows = rows.filter(bill_date=_as_of(request, "bill_date"))
        page, meta = _page(request, rows)
        return Response({**meta, "results": BillSerializer(page, many=True).data})


def _bill(number: str) -> Bill:
    bill = Bill.objects.select_related("account").prefetch_related("lines").filter(number=number).first()
    if bill is None:
        raise NotFound(f"no bill '{number}'", field="number")
    return bill


class BillDetail(APIView):
    @extend_schema(responses=BillSerializer)
    def get(self, request, number):
        return Response(BillSerializer(_bill(number)).data)


class BillPdf(APIView):
    @extend_schema(responses={(200, "application/pdf"): bytes})
    def get(self, request, number):
        from .pdf import bill_pdf_bytes

        bill = _bill(number)
        response = HttpResponse(bill_pdf_bytes(bill=bill), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="bill-{bill.number}.pdf"'
        return response


class BillingRunListCreate(APIView):
    @extend_schema(responses=BillingRunSerializer(many=True))
    def get(self, request):
        page, meta = _page(request, BillingRun.objects.order_by("-created_at"))
        return Response({**meta, "results": BillingRunSerializer(page, many=True).data})

    @extend_schema(request=RunIn, responses={202: BillingRunSerializer})
    def post(self, request):
        data = RunIn(data=request.data)
        data.is_valid(raise_exception=True)
        run = billing_run_start(run_on=data.validated_data["run_on"], actor=request.user,
                                accept_sample_rates=data.validated_data["accept_sample_rates"])
        run.refresh_from_db()
        return Response(BillingRunSerializer(run).data, status=status.HTTP_202_ACCEPTED)


class BillingRunDetail(APIView):
    @extend_schema(responses=BillingRunSerializer)
    def get(self, request, pk):
        run = BillingRun.objects.filter(pk=pk).first()
        if run is None:
            raise NotFound(f"no billing run {pk}", field="id")
        return Response(BillingRunSerializer(run).data)


class PenaltyRunCreate(APIView):
    @extend_schema(request=PenaltyRunIn, responses=dict)
    def post(self, request):
        data = PenaltyRunIn(data=request.data)
        data.is_valid(raise_exception=True)
        result = penalties_assess_due(as_of=data.validated_data["as_of"])
        return Response({"as_of": data.validated_data["as_of"], "posted": result.posted,
                         "accounts": result.accounts, "total": f"{result.total:.2f}"}, status=status.HTTP_201_CREATED)


class FeeList(APIView):
    @extend_schema(parameters=[OpenApiParameter("code", str), OpenApiParameter("basis", str),
                               OpenApiParameter("as_of", date)], responses=dict)
    def get(self, request):
        """The fee schedule in force; with ``code`` (and ``basis`` for pro-rata fees) a quote."""
        as_of = _as_of(request)
        if code := request.query_params.get("code"):
            fee = fee_in_force(code=code, on=as_of)
            basis = request.query_params.get("basis")
            try:
                basis_value = dollars(basis) if basis else None
            except ValueError as exc:
                raise ApplicationError(str(exc), field="basis") from None
            return Response({"code": fee.code, "description": fee.description, "citation": fee.citation,
                             "basis": basis, "amount": f"{fee_quote(fee, basis=basis_value):.2f}"})
        codes = sorted(set(Fee.objects.values_list("code", flat=True)))
        fees = [fee_in_force(code=c, on=as_of) for c in codes]
        return Response({"as_of": as_of, "results": [
            {"code": f.code, "description": f.description, "citation": f.citation, "effective_on": f.effective_on,
             "amount": f"{f.amount.amount:.2f}" if f.amount is not None else None,
             "rate": f"{f.rate.normalize():f}" if f.rate is not None else None, "note": f.note} for f in fees]})
