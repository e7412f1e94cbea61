"""Autopay by ACH debit: enrolment, the notice before each debit, the debit file for the bank, and its returns.

Design overview:

* **Enrolment** (``autopay_enrol``): the routing number passes its ABA check digit; the bank account number is
  sealed (``vault``) with its last four digits beside it; the authorization wording, the moment, the address it
  came from and who agreed are kept as given. One active enrolment per account (a database key): a new one
  replaces the old.
* **The notice before the debit** (``autopay_notices_send``): when a bill of an enrolled account is issued, an
  email says how much will be debited, from which account (its last four digits) and on which day (the bill's
  due date); once per bill.
* **The debit file** (``ach_export``): on its date, every active enrolment whose account has something due that
  day or before is debited the amount due; each debit is posted at once as a payment (tender "ach", reference
  ``ACH-<file>-<sequence>``) through billing's one payment service, so the account shows it paid and a second
  file that day debits nothing again. The NACHA text goes to the operator (``nacha.debit_file``); the database
  keeps the file's controls, never the account numbers in clear.
* **Returns** (``ach_returns``): each returned debit's payment is reversed with its R-code, the returned-payment
  fee is charged (the preset's, or the office's policy: ``billing.services.returned``), and autopay is
  suspended after a return that says the account is closed or the debit unauthorized. A return already applied
  is skipped; a trace number that is none of ours refuses the whole file, naming its line.
"""

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Account
from billing.models import Bill, Payment, PaymentReversal
from billing.ordinance import ordinance_on
from billing.selectors import account_amounts_due
from billing.services.payments import PaymentIn, payments_post
from billing.services.reversals import payment_reverse
from core.dates import fmt_long_day
from core.errors import ApplicationError, FieldError
from core.i18n import customer_language
from core.money import fmt_dollars

from .models import AchFile, AutopayDebit, AutopayEnrolment, AutopayNotice
from .nacha import RETURN_REASONS, Debit, NachaError, Originator, aba_valid, debit_file, returns_read, trace_number
from .vault import seal, unseal

# Returns after which the account is not debited again until the customer enrols anew.
SUSPEND_CODES = {"R02", "R03", "R04", "R05", "R07", "R08", "R10", "R16", "R20", "R29"}
CENTS = 100


def authorization_text(*, account: Account, bank_account: str = "") -> str:
    """The wording the customer agrees to, in the language they read it in: as shown before (the bank account
    "given above"), and as kept (the account's kind, last four digits and routing number)."""
    return _("I authorize %(utility)s to debit %(bank_account)s for the amount due on each water bill of account "
             "%(account_no)s, on or after its due date, by ACH. I will be emailed the amount and the date before each "
             "debit. This authorization stays in force until I cancel it online or by telling the office, in time "
             "for the office to act on it.") % {
        "utility": ordinance_on(timezone.localdate()).utility.name,
        "bank_account": bank_account or _("the bank account given above"), "account_no": account.account_no}


def autopay_enrol(*, account: Account, holder_name: str, routing: str, account_number: str, account_type: str,
                  email: str, agreed: bool, user=None, ip_address: str | None = None) -> AutopayEnrolment:
    """Enrol ``account`` in autopay; every refusal names its field."""
    routing, account_number, holder_name = routing.strip(), account_number.strip().replace(" ", ""), \
        " ".join(holder_name.split())
    errors = []
    if not aba_valid(routing):
        errors.append(FieldError(field="routing_number", message=_("is not a routing number: 9 digits whose "
                                                                   "last is the ABA check digit of the others")))
    if not (account_number.isascii() and account_number.isdigit() and 4 <= len(account_number) <= 17):
        errors.append(FieldError(field="account_number", message=_("is 4 to 17 digits, as on your checks")))
    if not holder_name:
        errors.append(FieldError(field="holder_name", message=_("is required: the name on the bank account")))
    if account_type not in AutopayEnrolment.AccountType.values:
        errors.append(FieldError(field="account_type", message=_("is checking or savings")))
    if not agreed:
        errors.append(FieldError(field="agree", message=_("is required: autopay debits only with your "
                                                         "authorization")))
    if errors:
        raise ApplicationError(errors=errors)
    last4 = account_number[-4:]
    words = (_("the savings account ending %(last4)s at the bank with routing number %(routing)s")
             if account_type == "savings" else
             _("the checking account ending %(last4)s at the bank with routing number %(routing)s"))
    wording = authorization_text(account=account, bank_account=words % {"last4": last4, "routing": routing})
    with transaction.atomic():
        now = timezone.now()
        AutopayEnrolment.objects.select_for_update().filter(account=account, status=AutopayEnrolment.Status.ACTIVE) \
            .update(status=AutopayEnrolment.Status.CANCELLED, status_note="replaced by a new enrolment",
                    status_changed_at=now)
        return AutopayEnrolment.objects.create(
            account=account, holder_name=holder_name[:100], routing_number=routing, account_type=account_type,
            account_number_sealed=seal(account_number), account_last4=last4, email=email, authorization=wording,
            authorized_at=now, authorized_from=ip_address, authorized_by=user if getattr(user, "pk", None) else None)


def autopay_cancel(*, enrolment: AutopayEnrolment, why: str) -> AutopayEnrolment:
    AutopayEnrolment.objects.filter(pk=enrolment.pk, status=AutopayEnrolment.Status.ACTIVE).update(
        status=AutopayEnrolment.Status.CANCELLED, status_note=why[:200], status_changed_at=timezone.now())
    enrolment.refresh_from_db()
    return enrolment


def autopay_notices_send(bill_ids) -> int:
    """Email the notice before the debit for each new bill of an enrolled account, once."""
    bills = {b.account_id: b for b in Bill.objects.filter(pk__in=list(bill_ids)).exclude(status=Bill.Status.VOID)
             .select_related("account__premises")}
    sent = 0
    for enrolment in AutopayEnrolment.objects.filter(account_id__in=list(bills), status=AutopayEnrolment.Status.ACTIVE):
        bill = bills[enrolment.account_id]
        try:
            with transaction.atomic():
                notice = AutopayNotice.objects.create(enrolment=enrolment, bill=bill, sent_at=timezone.now())
        except IntegrityError:
            continue
        due = account_amounts_due(account_ids=[bill.account_id], as_of=bill.bill_date)[bill.account_id]
        with customer_language(bill.account):
            body = render_to_string("remittance/email/autopay_notice.txt", {
                "account": bill.account, "bill": bill, "enrolment": enrolment, "amount": fmt_dollars(due.amount),
                "on": fmt_long_day(bill.due_date),
                "utility": ordinance_on(bill.bill_date).utility})
            subject = _("Autopay: %(amount)s will be debited for water account %(number)s") % {
                "amount": fmt_dollars(due.amount), "number": bill.account.account_no}
        try:
            EmailMessage(subject=subject, body=body, to=[enrolment.email]).send()
        except Exception:
            notice.delete()
            raise
        sent += 1
    return sent


def originator() -> Originator:
    """The village's bank and company from the settings; refused naming the first one missing."""
    for name in ("ACH_ODFI_ROUTING", "ACH_ODFI_NAME", "ACH_COMPANY_ID"):
        if not getattr(settings, name):
            raise ApplicationError(f"{name} is not set: the debit file needs the village's bank and the company id "
                                   "its bank assigned", field=name.lower())
    if not aba_valid(settings.ACH_ODFI_ROUTING):
        raise ApplicationError(f"ACH_ODFI_ROUTING {settings.ACH_ODFI_ROUTING!r} fails the ABA check digit",
                               field="ach_odfi_routing")
    return Originator(odfi_routing=settings.ACH_ODFI_ROUTING, odfi_name=settings.ACH_ODFI_NAME,
                      company_id=settings.ACH_COMPANY_ID,
                      company_name=settings.ACH_COMPANY_NAME or ordinance_on(timezone.localdate()).utility.name)


@dataclass(frozen=True)
class Exported:
    file: AchFile | None
    text: str  # the NACHA file ("" when nothing is due)


def ach_export(*, on: date, actor=None, now: datetime | None = None) -> Exported:
    """The debit file of ``on``: each active enrolment's amount due, for accounts with something due that day or
    before; every debit posted as a payment in the same transaction. Nothing due: no file."""
    origin = originator()
    with transaction.atomic(durable=True):
        enrolments = list(AutopayEnrolment.objects.select_for_update().filter(status=AutopayEnrolment.Status.ACTIVE)
                          .select_related("account").order_by("account__account_no"))
        dues = account_amounts_due(account_ids=[e.account_id for e in enrolments], as_of=on)
        wanted = [(e, dues[e.account_id].amount) for e in enrolments if e.account_id in dues
                  and dues[e.account_id].amount > 0 and (dues[e.account_id].past_due > 0
                                                         or dues[e.account_id].due_date == on)]
        if not wanted:
            return Exported(file=None, text="")
        used = set(AchFile.objects.filter(created_on=on).values_list("modifier", flat=True))
        modifier = next((m for m in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" if m not in used), None)
        if modifier is None:
            raise ApplicationError(f"36 debit files were made on {on} already; the bank takes no more that day",
                                   field="date")
        total = sum((amount for _, amount in wanted), Decimal("0"))
        file = AchFile.objects.create(created_on=on, modifier=modifier, effective_on=on, entries=len(wanted),
                                      total=total, entry_hash="", created_by=actor)
        debits, payments = [], []
        first = AutopayDebit.objects.count()  # trace numbers run on from file to file
        for sequence, (enrolment, amount) in enumerate(wanted, start=1):
            reference = f"ACH-{file.pk}-{sequence:07d}"
            payments.append(PaymentIn(enrolment.account.account_no, amount, on, reference, tender=Payment.Tender.ACH))
            debits.append(Debit(routing=enrolment.routing_number,
                                account_number=unseal(enrolment.account_number_sealed),
                                savings=enrolment.account_type == AutopayEnrolment.AccountType.SAVINGS,
                                amount_cents=int(amount * CENTS), individual_id=enrolment.account.account_no,
                                name=enrolment.holder_name, sequence=(first + sequence) % 10_000_000))
        try:
            text = debit_file(origin, debits, effective=on, created=now or timezone.localtime(), modifier=modifier)
        except NachaError as exc:
            raise ApplicationError(str(exc), field="file") from None
        payments_post(payments=payments, actor=actor, source="autopay")
        posted = {p.reference: p for p in Payment.objects.filter(reference__in=[p.reference for p in payments])}
        AutopayDebit.objects.bulk_create([AutopayDebit(
            file=file, enrolment=enrolment, account=enrolment.account, amount=amount,
            trace_number=trace_number(origin, debit.sequence), payment=posted[payment.reference])
            for (enrolment, amount), debit, payment in zip(wanted, debits, payments, strict=True)])
        file.entry_hash = text.splitlines()[-1 - _padding(text)][21:31]
        file.save(update_fields=["entry_hash"])
    return Exported(file=file, text=text)


def _padding(text: str) -> int:
    return sum(1 for line in text.splitlines() if set(line) == {"9"})


@dataclass(frozen=True)
class ReturnsApplied:
    reversed: int
    skipped: int  # applied before
    fees: int
    suspended: int

    def __str__(self) -> str:
        return (f"{self.reversed} debit(s) returned and reversed, {self.fees} returned-payment fee(s) charged, "
                f"{self.suspended} autopay enrolment(s) suspended, {self.skipped} already applied")


def ach_returns(text: str, *, as_of: date, actor=None) -> ReturnsApplied:
    """Apply the bank's returns file, all or nothing."""
    try:
        returns = returns_read(text)
    except NachaError as exc:
        raise ApplicationError(str(exc), field="file") from None
    with transaction.atomic(durable=True):
        debits = {d.trace_number: d for d in AutopayDebit.objects.select_for_update().filter(
            trace_number__in=[r.original_trace for r in returns]).select_related("payment", "enrolment", "account")}
        errors = [FieldError(field="trace_number", line=r.line, message=f"{r.original_trace} is the trace number of "
                                                                        "no debit of ours")
                  for r in returns if r.original_trace not in debits]
        errors += [FieldError(field="amount", line=r.line, message=(
            f"{fmt_dollars(Decimal(r.amount_cents) / CENTS)} is not the "
            f"{fmt_dollars(debits[r.original_trace].amount.amount)} debited under trace {r.original_trace}"))
            for r in returns
            if r.original_trace in debits and r.amount_cents != int(debits[r.original_trace].amount.amount * CENTS)]
        if errors:
            raise ApplicationError(errors=errors)
        reversed_count = skipped = fees = suspended = 0
        for ret in returns:
            debit = debits[ret.original_trace]
            if debit.returned_code or PaymentReversal.objects.filter(payment=debit.payment).exists():
                skipped += 1
                continue
            reason = RETURN_REASONS.get(ret.code, "returned")
            reversal = payment_reverse(payment=debit.payment, reversed_on=max(as_of, debit.payment.paid_on),
                                       reason=PaymentReversal.Reason.DEBIT_RETURNED, actor=actor,
                                       note=f"{ret.code}: {reason} (the bank's returns file)")
            debit.returned_code, debit.returned_on = ret.code, as_of
            debit.save(update_fields=["returned_code", "returned_on"])
            reversed_count += 1
            fees += reversal.fee is not None  # the returned-payment fee the reversal charged
            if ret.code in SUSPEND_CODES and debit.enrolment.status == AutopayEnrolment.Status.ACTIVE:
                AutopayEnrolment.objects.filter(pk=debit.enrolment_id).update(
                    status=AutopayEnrolment.Status.SUSPENDED, status_note=f"{ret.code}: {reason}",
                    status_changed_at=timezone.now())
                suspended += 1
    return ReturnsApplied(reversed=reversed_count, skipped=skipped, fees=fees, suspended=suspended)
