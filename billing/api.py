"""REST endpoints for statements, payments, bills, billing and penalty runs, fees, and the fees and fines
charged to an account for its next bill.

Everything here shows or changes what accounts owe; accounts and readings are served by their own apps
(``accounts/api.py``, ``meters/api.py``). Amounts are printed with ``core.money.fmt_amount`` and rates with
``fmt_rate``, as in the statement JSON.

Views are thin: they validate the shape of a request with a serializer and call a service or selector.
Services raise ``ApplicationError``s, which the project's exception handler turns into 400/404/409 JSON.

Each view names, per method, the Django model permissions it needs (``required_permissions``, checked by
``core.permissions.StaffModelPermissions``): the ones the admin asks for the same work, so a staff role
(``accounts/roles.py``) does through the API what it may do in the admin and nothing more.
"""

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.selectors import account_get
from core.api import DateText, DollarsText, page_of, query_as_of, query_date
from core.clock import today
from core.csvimport import CsvRow, iso_date
from core.errors import ApplicationError, FieldError, NotFound
from core.money import fmt_amount, fmt_rate
from core.schema import CONFLICT, DATE_PARAMETER, OFFSET, errors_response, paged

from .fees import fee_in_force, fee_rule, fees_in_force
from .models import Bill, BillingRun, Payment, PendingCharge
from .runs.lifecycle import billing_run_start
from .selectors import account_statement, bill_line_data
from .services.bill_pdfs import bill_pdf_bytes
from .services.charges import charge_create, charge_figures_parse
from .services.payments import PAYMENT_FIELDS, payments_rows_post
from .services.penalties import penalties_assess_due

VIEW_ACCOUNT = ("accounts.view_account",)
VIEW_BILL = ("billing.view_bill", "billing.view_billline")
# A statement shows the account's bills, penalties and payments: what the ledger holds.
VIEW_STATEMENT = (*VIEW_ACCOUNT, *VIEW_BILL, "billing.view_ledgerentry", "billing.view_payment")
# A penalty run posts what the ordinance makes owed on a date, as the nightly job does; it is a run of
# the books like a billing run, so it asks what starting a billing run asks (roles.py gives no one
# the right to add ledger entries directly).
START_RUN = ("billing.add_billingrun",)
VIEW_CHARGES = (*VIEW_ACCOUNT, "billing.view_pendingcharge")
CHARGE_STATUSES = ("pending", "billed", "cancelled", "all")


# --- response shapes: what the views return, as the OpenAPI schema describes it ---------------------
# Output only (every field read-only, so the schema marks each one present); test_schema.py holds real
# responses to these shapes, closed, so a field added to a response must be added here too.

class LineOut(serializers.Serializer):
    kind = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    citation = serializers.CharField(read_only=True, help_text="The ordinance section behind the line.")
    quantity = serializers.CharField(read_only=True)
    rate = serializers.CharField(read_only=True)
    amount = serializers.CharField(read_only=True, help_text="Dollars, two decimals.")


class BillSerializer(serializers.ModelSerializer):
    account_no = serializers.CharField(source="account.account_no", read_only=True)
    total = serializers.SerializerMethodField(help_text="Dollars, two decimals.")
    lines = serializers.SerializerMethodField()
    district = serializers.CharField(source="district_id", read_only=True, allow_null=True,
                                     help_text="A town's water district whose rules billed it (its code); null "
                                               "where the installation names no districts.")

    class Meta:
        model = Bill
        fields = ("number", "account_no", "status", "frequency", "bill_date", "due_date", "period_start",
                  "period_end", "gallons", "estimated", "total", "district", "lines")
        read_only_fields = fields

    def get_total(self, obj) -> str:
        return fmt_amount(obj.total)

    @extend_schema_field(LineOut(many=True))
    def get_lines(self, obj) -> list[dict]:
        return [bill_line_data(line) for line in obj.lines.all()]


class BillingRunSerializer(serializers.ModelSerializer):
    total_billed = serializers.SerializerMethodField(help_text="Dollars, two decimals.")
    progress_percent = serializers.IntegerField(read_only=True)

    class Meta:
        model = BillingRun
        fields = ("id", "run_on", "status", "progress_percent", "accounts_due", "chunks_total", "chunks_done",
                  "bills_created", "already_billed", "exceptions_count", "total_billed", "accept_sample_rates",
                  "created_at", "finished_at", "error")
        read_only_fields = fields

    def get_total_billed(self, obj) -> str:
        return fmt_amount(obj.total_billed)


class StatementBillOut(serializers.Serializer):
    number = serializers.CharField(read_only=True)
    bill_date = serializers.DateField(read_only=True)
    due_date = serializers.DateField(read_only=True)
    period_start = serializers.DateField(read_only=True)
    period_end = serializers.DateField(read_only=True)
    gallons = serializers.IntegerField(read_only=True)
    total = serializers.CharField(read_only=True)
    balance = serializers.CharField(read_only=True, help_text="This bill's own charges still unpaid.")
    estimated = serializers.BooleanField(read_only=True)
    lines = LineOut(many=True, read_only=True)


class StatementChargeOut(serializers.Serializer):
    kind = serializers.CharField(read_only=True)
    date = serializers.DateField(read_only=True)
    amount = serializers.CharField(read_only=True)
    citation = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    bill = serializers.CharField(read_only=True, allow_null=True, help_text="The bill's number, if on one.")


class StatementPaymentOut(serializers.Serializer):
    paid_on = serializers.DateField(read_only=True)
    amount = serializers.CharField(read_only=True)
    reference = serializers.CharField(read_only=True)


class StatementOut(serializers.Serializer):
    account_no = serializers.CharField(read_only=True)
    as_of = serializers.DateField(read_only=True)
    balance = serializers.CharField(read_only=True, help_text="Everything unpaid less any unapplied credit.")
    bills = StatementBillOut(many=True, read_only=True)
    charges = StatementChargeOut(many=True, read_only=True)
    payments = StatementPaymentOut(many=True, read_only=True)


class PaymentOut(serializers.Serializer):
    account_no = serializers.CharField(read_only=True)
    amount = serializers.CharField(read_only=True)
    paid_on = serializers.DateField(read_only=True)
    reference = serializers.CharField(read_only=True)
    source = serializers.CharField(read_only=True)
    tender = serializers.ChoiceField(choices=Payment.Tender.values, read_only=True)
    check_number = serializers.CharField(read_only=True)
    reversed_on = serializers.DateField(read_only=True, allow_null=True,
                                        help_text="When the payment was reversed (a returned check…); null if not.")


class PaymentsPostedOut(serializers.Serializer):
    posted = serializers.IntegerField(read_only=True)
    skipped = serializers.IntegerField(read_only=True, help_text="References already posted with the same payment.")


class PenaltyRunOut(serializers.Serializer):
    as_of = serializers.DateField(read_only=True)
    posted = serializers.IntegerField(read_only=True)
    accounts = serializers.IntegerField(read_only=True)
    total = serializers.CharField(read_only=True)


class FeeSizeOut(serializers.Serializer):
    size = serializers.CharField(read_only=True, help_text="Inches.")
    amount = serializers.CharField(read_only=True)


class FeeOut(serializers.Serializer):
    code = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    citation = serializers.CharField(read_only=True)
    effective_on = serializers.DateField(read_only=True)
    rule = serializers.CharField(read_only=True, help_text="flat, pro_rata, by_size or clerk: how the fee is quoted.")
    terms = serializers.CharField(read_only=True, help_text='The charge in words: "$50.00", "0.0015 × base".')
    amount = serializers.CharField(read_only=True, allow_null=True, help_text="A flat fee's dollars.")
    rate = serializers.CharField(read_only=True, allow_null=True, help_text="A pro-rata fee's rate on its basis.")
    sizes = FeeSizeOut(many=True, read_only=True, help_text="A fee by size: its amount for each size listed.")
    note = serializers.CharField(read_only=True)


class FeeScheduleOut(serializers.Serializer):
    as_of = serializers.DateField(read_only=True)
    results = FeeOut(many=True, read_only=True)


class FeeQuoteOut(serializers.Serializer):
    code = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    citation = serializers.CharField(read_only=True)
    basis = serializers.CharField(read_only=True, allow_null=True)
    size = serializers.CharField(read_only=True, allow_null=True)
    amount = serializers.CharField(read_only=True)


class ChargeOut(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    account_no = serializers.CharField(read_only=True)
    code = serializers.CharField(read_only=True)
    kind = serializers.CharField(read_only=True, help_text="fee or fine")
    description = serializers.CharField(read_only=True)
    citation = serializers.CharField(read_only=True)
    amount = serializers.CharField(read_only=True)
    quantity = serializers.CharField(read_only=True, help_text="The bill line's quantity: 1, or the base.")
    rate = serializers.CharField(read_only=True, help_text="The bill line's rate.")
    base = serializers.CharField(read_only=True, allow_null=True)
    size = serializers.CharField(read_only=True, help_text="Inches, for a fee by size; blank otherwise.")
    note = serializers.CharField(read_only=True)
    charged_on = serializers.DateField(read_only=True)
    earliest_bill_on = serializers.DateField(read_only=True, help_text="The earliest bill date it may go on.")
    status = serializers.CharField(read_only=True, help_text="pending, billed or cancelled")
    bill = serializers.CharField(read_only=True, allow_null=True, help_text="The number of the bill carrying it.")


# --- request shapes ----------------------------------------------------------------------------------
class PaymentIn(serializers.Serializer):
    account_no = serializers.CharField(max_length=20)
    amount = DollarsText(max_length=20)
    paid_on = DateText()
    reference = serializers.CharField(max_length=80)
    tender = serializers.ChoiceField(choices=Payment.Tender.values, required=False,
                                     help_text="How it was paid: cash, check, card or bank_file. Default: check.")
    check_number = serializers.CharField(max_length=40, required=False, allow_blank=True,
                                         help_text="For a check: its number (optional). Only a check has one.")


class ChargeIn(serializers.Serializer):
    code = serializers.CharField(max_length=40, help_text="The fee's code in the preset's fee schedule.")
    amount = DollarsText(max_length=20, required=False, allow_blank=True,
                         help_text="Only for a fee whose amount the ordinance leaves open.")
    base = DollarsText(max_length=20, required=False, allow_blank=True,
                       help_text="Only for a fee computed from a cost (construction cost).")
    size = serializers.CharField(max_length=20, required=False, allow_blank=True,
                                 help_text="Only for a fee by size: inches.")
    note = serializers.CharField(max_length=2000, required=False, allow_blank=True,
                                 help_text="Internal note, never shown to the customer.")
    charged_on = DateText(required=False, help_text="Default: today. Never after today.")


class RunIn(serializers.Serializer):
    run_on = serializers.DateField()
    accept_sample_rates = serializers.BooleanField(
        required=False, default=False,
        help_text="Bill even though the rate schedule in force is the preset's sample one (recorded on the run); "
                  "not needed on a demo/training site.")


class PenaltyRunIn(serializers.Serializer):
    as_of = serializers.DateField()


# --- views ------------------------------------------------------------------------------------------

class StatementView(APIView):
    required_permissions = {"GET": VIEW_STATEMENT}

    @extend_schema(parameters=[OpenApiParameter("as_of", DATE_PARAMETER, description="Default: today.")],
                   responses={200: StatementOut})
    def get(self, request, account_no):
        return Response(account_statement(account=account_get(account_no=account_no), as_of=query_as_of(request)))


class PaymentListCreate(APIView):
    required_permissions = {"GET": ("billing.view_payment",), "POST": ("billing.add_payment",)}

    @extend_schema(operation_id="v1_payments_list", parameters=[OpenApiParameter("account_no", str), OFFSET],
                   responses={200: paged(PaymentOut, "PaginatedPaymentList")})
    def get(self, request):
        rows = Payment.objects.select_related("account", "reversal").order_by("-paid_on", "-id")
        if account_no := request.query_params.get("account_no"):
            rows = rows.filter(account__account_no=account_no)
        page, meta = page_of(request, rows)
        return Response({**meta, "results": [
            {"account_no": p.account.account_no, "amount": fmt_amount(p.amount), "paid_on": p.paid_on,
             "reference": p.reference, "source": p.source, "tender": p.tender, "check_number": p.check_number,
             "reversed_on": p.reversal.reversed_on if hasattr(p, "reversal") else None} for p in page]})

    @extend_schema(request=PolymorphicProxySerializer(component_name="PaymentOrPayments",
                                                      serializers=[PaymentIn, PaymentIn(many=True)],
                                                      resource_type_field_name=None, many=False),
                   responses={201: PaymentsPostedOut, **CONFLICT})
    def post(self, request):
        many = isinstance(request.data, list)
        data = PaymentIn(data=request.data, many=many)
        data.is_valid(raise_exception=True)
        items = data.validated_data if many else [data.validated_data]
        rows = [CsvRow(line=i, values={k: str(item[k]) for k in PAYMENT_FIELDS if k in item})
                for i, item in enumerate(items)]
        try:
            result = payments_rows_post(rows=rows, as_of=today(), actor=request.user, source="api")
        except ApplicationError as exc:
            exc.errors = [FieldError(field=f"[{e.line}].{e.field}" if many else e.field, message=e.message)
                          for e in exc.errors]
            raise
        return Response({"posted": result.created, "skipped": result.skipped}, status=status.HTTP_201_CREATED)


class BillList(APIView):
    required_permissions = {"GET": VIEW_BILL}

    @extend_schema(operation_id="v1_bills_list",
                   parameters=[OpenApiParameter("account_no", str), OpenApiParameter("bill_date", DATE_PARAMETER),
                               OFFSET],
                   responses={200: paged(BillSerializer, "PaginatedBillList")})
    def get(self, request):
        rows = Bill.objects.select_related("account").prefetch_related("lines").order_by("-bill_date", "number")
        if account_no := request.query_params.get("account_no"):
            rows = rows.filter(account__account_no=account_no)
        if (bill_date := query_date(request, "bill_date")) is not None:
            rows = rows.filter(bill_date=bill_date)
        page, meta = page_of(request, rows)
        return Response({**meta, "results": BillSerializer(page, many=True).data})


def _bill(number: str) -> Bill:
    bill = Bill.objects.select_related("account").prefetch_related("lines").filter(number=number).first()
    if bill is None:
        raise NotFound(f"no bill '{number}'", field="number")
    return bill


class BillDetail(APIView):
    required_permissions = {"GET": VIEW_BILL}

    @extend_schema(responses={200: BillSerializer})
    def get(self, request, number):
        return Response(BillSerializer(_bill(number)).data)


class BillPdf(APIView):
    required_permissions = {"GET": VIEW_BILL}

    @extend_schema(responses={(200, "application/pdf"): OpenApiResponse(OpenApiTypes.BINARY, description="The bill.")})
    def get(self, request, number):
        bill = _bill(number)
        response = HttpResponse(bill_pdf_bytes(bill=bill), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="bill-{bill.number}.pdf"'
        return response


class BillingRunListCreate(APIView):
    required_permissions = {"GET": ("billing.view_billingrun",), "POST": ("billing.add_billingrun",)}

    @extend_schema(operation_id="v1_billing_runs_list", parameters=[OFFSET],
                   responses={200: paged(BillingRunSerializer, "PaginatedBillingRunList")})
    def get(self, request):
        page, meta = page_of(request, BillingRun.objects.order_by("-created_at"))
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
    required_permissions = {"GET": ("billing.view_billingrun",)}

    @extend_schema(responses={200: BillingRunSerializer})
    def get(self, request, pk):
        run = BillingRun.objects.filter(pk=pk).first()
        if run is None:
            raise NotFound(f"no billing run {pk}", field="id")
        return Response(BillingRunSerializer(run).data)


class PenaltyRunCreate(APIView):
    required_permissions = {"POST": START_RUN}

    @extend_schema(request=PenaltyRunIn, responses={201: PenaltyRunOut})
    def post(self, request):
        data = PenaltyRunIn(data=request.data)
        data.is_valid(raise_exception=True)
        result = penalties_assess_due(as_of=data.validated_data["as_of"])
        return Response({"as_of": data.validated_data["as_of"], "posted": result.posted,
                         "accounts": result.accounts, "total": fmt_amount(result.total)},
                        status=status.HTTP_201_CREATED)


def _fee_out(fee) -> dict:
    rule = fee_rule(fee)
    return {"code": fee.code, "description": fee.description, "citation": fee.citation,
            "effective_on": fee.effective_on, "rule": fee.rule, "terms": rule.terms(),
            "amount": fmt_amount(fee.amount) if fee.amount is not None else None,
            "rate": fmt_rate(fee.rate) if fee.rate is not None else None,
            "sizes": [{"size": size, "amount": fmt_amount(amount)} for size, amount in rule.sizes()],
            "note": fee.note}


class FeeList(APIView):
    required_permissions = {"GET": ("billing.view_fee",)}

    @extend_schema(
        parameters=[OpenApiParameter("code", str, description="A fee's code: answer a quote for it."),
                    OpenApiParameter("basis", str, description="Dollars a pro-rata fee is computed from."),
                    OpenApiParameter("size", str, description="Inches, for a fee by size."),
                    OpenApiParameter("amount", str, description="Dollars, for a fee the ordinance leaves open."),
                    OpenApiParameter("as_of", DATE_PARAMETER, description="Default: today.")],
        responses={200: PolymorphicProxySerializer(component_name="FeeScheduleOrQuote",
                                                   serializers=[FeeScheduleOut, FeeQuoteOut],
                                                   resource_type_field_name=None, many=False),
                   **{404: errors_response("No fee by that code in force on the date.")}})
    def get(self, request):
        """The fee schedule in force; with ``code`` (and ``basis``, ``size`` or ``amount`` as the fee asks) a
        quote, by the same rule a charge is made with."""
        as_of = query_as_of(request)
        if code := request.query_params.get("code"):
            fee = fee_in_force(code=code, on=as_of)
            basis, size = request.query_params.get("basis"), request.query_params.get("size")
            try:
                amount, base = charge_figures_parse(amount=request.query_params.get("amount"), base=basis)
                quoted = fee_rule(fee).quote(amount=amount, base=base, size=size)
            except ApplicationError as exc:
                # The query names the base "basis".
                exc.errors = [FieldError(field="basis" if e.field == "base" else e.field, message=e.message)
                              for e in exc.errors]
                raise
            return Response({"code": fee.code, "description": fee.description, "citation": fee.citation,
                             "basis": basis, "size": size, "amount": fmt_amount(quoted)})
        return Response({"as_of": as_of, "results": [_fee_out(f) for f in fees_in_force(on=as_of)]})


def _charge_out(charge: PendingCharge, account_no: str) -> dict:
    return {"id": charge.pk, "account_no": account_no, "code": charge.code, "kind": charge.kind,
            "description": charge.description, "citation": charge.citation, "amount": fmt_amount(charge.amount),
            "quantity": f"{charge.quantity.normalize():f}", "rate": fmt_rate(charge.rate),
            "base": fmt_amount(charge.base) if charge.base is not None else None, "size": charge.size,
            "note": charge.note, "charged_on": charge.charged_on, "earliest_bill_on": charge.earliest_bill_on,
            "status": charge.status, "bill": charge.bill.number if charge.bill_id else None}


class AccountCharges(APIView):
    """Fees and fines charged to the account for its next bill (``charge_fee`` does the same)."""

    required_permissions = {"GET": VIEW_CHARGES, "POST": ("billing.add_pendingcharge",)}

    @extend_schema(operation_id="v1_accounts_charges_list",
                   parameters=[OpenApiParameter("status", {"type": "string", "enum": list(CHARGE_STATUSES)},
                                                description="Default: pending (waiting for the next bill)."),
                               OFFSET],
                   responses={200: paged(ChargeOut, "PaginatedChargeList")})
    def get(self, request, account_no):
        account = account_get(account_no=account_no)
        status_ = request.query_params.get("status", "pending")
        if status_ not in CHARGE_STATUSES:
            raise ApplicationError(f"'{status_}' is not one of {', '.join(CHARGE_STATUSES)}", field="status")
        rows = account.pending_charges.select_related("bill").order_by("charged_on", "id")
        rows = {"pending": rows.filter(bill__isnull=True, cancelled_at__isnull=True),
                "billed": rows.filter(bill__isnull=False),
                "cancelled": rows.filter(cancelled_at__isnull=False)}.get(status_, rows)
        page, meta = page_of(request, rows)
        return Response({**meta, "results": [_charge_out(c, account.account_no) for c in page]})

    @extend_schema(operation_id="v1_accounts_charges_create", request=ChargeIn, responses={201: ChargeOut})
    def post(self, request, account_no):
        account = account_get(account_no=account_no)
        data = ChargeIn(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        errors = []
        charged_on = today()
        if values.get("charged_on"):
            try:
                charged_on = iso_date(values["charged_on"])
            except ValueError as exc:
                errors.append(FieldError(field="charged_on", message=str(exc)))
        try:
            amount, base = charge_figures_parse(amount=values.get("amount"), base=values.get("base"))
        except ApplicationError as exc:
            errors.extend(exc.errors)
        if errors:
            raise ApplicationError(errors=errors)
        charge = charge_create(account=account, code=values["code"], as_of=charged_on, actor=request.user,
                               amount=amount, base=base, size=values.get("size") or None, note=values.get("note", ""))
        return Response(_charge_out(charge, account.account_no), status=status.HTTP_201_CREATED)
