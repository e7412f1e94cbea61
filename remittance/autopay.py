"""Autopay by ACH debit: enrolment, the notice before each debit, the debit file for the bank, and its returns.

Design overview:

* **Enrolment** (``autopay_enrol``): the routing number passes its ABA check digit; the bank account number is
  sealed (``vault``) with its last four digits beside it; the authorization wording, the moment, the address it
  came from and who agreed are kept as given. One active enrolment per account (a database key): a new one
  replaces the old.
* **The notice before the debit** (``autopay_notices_send``): when a bill of an enrolled account is issued, a
  notice (the notices app's, by ``autopay_notice_due``: e-mailed to the enrolment's address, and texted where the
  customer chose texts) says how much will be debited, from which account (its last four digits) and on
  which banking day (the bill's due date, or later so that the notice goes the office's notice period before:
  ``ACH_NOTICE_DAYS``, 10 by default, Reg E § 1005.10(d)); once per bill. What was already owed when the customer
  enrolled gets a notice of its own (arrears), and waits for it like any other debit.
* **The debit file** (``ach_export``): made on a day for a banking day ahead (the effective entry date: the next
  banking day by default, any later one with ``settle``; the same day only when asked). Each active enrolment
  is debited under its latest notice whose day has come by then and that was sent the notice period before:
  at most the notice's amount, and only what falls due by the settlement day. Each debit is posted as a payment
  (tender "ach", reference ``ACH-<file>-<sequence>``) through billing's one payment service, and the NACHA text
  is sealed with the bank key and kept with the file, all in one transaction: a write that fails (a bad path, a
  full disk, a kill) loses nothing, and ``ach_export_again`` gives the identical text. In the admin a file takes
  two people (``core.approval``): ``ach_file_prepare`` lists the debits and nothing is posted; a supervisor who
  did not prepare it approves it that day (``ach_file_decide``: the debits, checked again to be those listed,
  posted and the file sealed) or refuses it. From the server's command line (``ach_export``) it is made at once.
* **Presented again**: a debit returned for insufficient or uncollected funds (R01, R09) goes out again under its
  notice, for the same amount, in a batch described ``RETRY PYMT``, as the office's policy says
  (``ACH_REPRESENT_TIMES``, at most twice; ``ACH_REPRESENT_AFTER_DAYS`` after the return, never the day of it)
  and within 180 days of the first settlement (NACHA's rule), and only while the account still owes it.
* **Returns** (``ach_returns``): the whole file is checked (``nacha.returns_read``) before anything is applied;
  each returned debit's payment is reversed with its R-code, the returned-payment fee is charged (the preset's,
  or the office's policy: ``billing.services.returned``), and autopay is suspended after a return that says the
  account is closed or the debit unauthorized. A return already applied is skipped; a trace number that is none
  of ours refuses the whole file, naming its line.
"""

import contextlib
import os
import tempfile
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Account
from billing.models import Bill, Payment, PaymentReversal
from billing.ordinance import ordinance_on
from billing.selectors import account_amounts_due, account_amounts_due_by
from billing.services.payments import PaymentIn, payments_post
from billing.services.reversals import payment_reverse
from core.approval import approval_decide, approval_problems
from core.banking_days import banking_day_on_or_after, is_banking_day, next_banking_day, why_not_banking_day
from core.errors import ApplicationError, FieldError
from core.money import fmt_dollars
from core.workflow import transition

from .models import AchFile, AutopayDebit, AutopayEnrolment, AutopayNotice
from .nacha import RETURN_REASONS, Debit, NachaError, Originator, aba_valid, debit_file, returns_read, trace_number
from .signals import autopay_notice_due, autopay_suspended
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
        for replaced in AutopayEnrolment.objects.filter(account=account, status=AutopayEnrolment.Status.ACTIVE):
            transition(replaced, to=AutopayEnrolment.Status.CANCELLED, actor=user, note="replaced by a new enrolment",
                       changes={"status_note": "replaced by a new enrolment", "status_changed_at": now})
        enrolment = AutopayEnrolment.objects.create(
            account=account, holder_name=holder_name[:100], routing_number=routing, account_type=account_type,
            account_number_sealed=seal(account_number), account_last4=last4, email=email, authorization=wording,
            authorized_at=now, authorized_from=ip_address, authorized_by=user if getattr(user, "pk", None) else None)
        arrears = _arrears_notice(enrolment, on=timezone.localdate())
        if arrears is not None:
            transaction.on_commit(lambda: _notice_send(arrears))
    return enrolment


def autopay_active(account) -> AutopayEnrolment | None:
    """The account's enrolment in force, if any (one at a time: a new one replaces it)."""
    return AutopayEnrolment.objects.filter(account=account, status=AutopayEnrolment.Status.ACTIVE).first()


def autopay_cancel(*, enrolment: AutopayEnrolment, why: str, actor=None) -> AutopayEnrolment:
    return transition(enrolment, to=AutopayEnrolment.Status.CANCELLED, actor=actor, note=why,
                      changes={"status_note": why[:200], "status_changed_at": timezone.now()})


def notice_days() -> int:
    return settings.ACH_NOTICE_DAYS


def autopay_notices_send(bill_ids) -> int:
    """Email the notice before the debit for each new bill of an enrolled account, once: the amount owed on the
    bill's date and the banking day it will be debited (its due date, or the first banking day the notice period
    allows)."""
    bills = {b.account_id: b for b in Bill.objects.filter(pk__in=list(bill_ids)).exclude(status=Bill.Status.VOID)
             .select_related("account__premises")}
    sent = 0
    for enrolment in AutopayEnrolment.objects.filter(account_id__in=list(bills), status=AutopayEnrolment.Status.ACTIVE):
        bill = bills[enrolment.account_id]
        due = account_amounts_due(account_ids=[bill.account_id], as_of=bill.bill_date)[bill.account_id]
        debit_on = banking_day_on_or_after(max(bill.due_date, bill.bill_date + timedelta(days=notice_days())))
        try:
            with transaction.atomic():
                notice, _created = AutopayNotice.objects.get_or_create(
                    enrolment=enrolment, bill=bill,
                    defaults={"kind": AutopayNotice.Kind.BILL, "amount": due.amount, "debit_on": debit_on})
        except IntegrityError:  # made by a concurrent run of the same bills
            continue
        if notice.sent_at is None:  # new, or one whose email failed before: sent now
            sent += _notice_send(notice)
    return sent


def _arrears_notice(enrolment: AutopayEnrolment, *, on: date) -> AutopayNotice | None:
    """The notice of what the account already owes past due when it enrols: debited no sooner than the notice
    period after it is sent."""
    due = account_amounts_due(account_ids=[enrolment.account_id], as_of=on)[enrolment.account_id]
    if due.past_due <= 0:
        return None
    return AutopayNotice.objects.create(enrolment=enrolment, kind=AutopayNotice.Kind.ARREARS, amount=due.past_due,
                                        debit_on=banking_day_on_or_after(on + timedelta(days=notice_days())))


def _notice_send(notice: AutopayNotice) -> int:
    """Have the notices app tell the customer (``autopay_notice_due``: the enrolment's e-mail address always, and
    the ways they chose); 1 when it went now. A notice not sent (the mail server refused it, or the quiet hours hold
    it until morning) debits nothing until it goes: ``autopay_notice_sent`` marks it."""
    autopay_notice_due.send(sender=AutopayNotice, notice_id=notice.pk)
    return int(AutopayNotice.objects.filter(pk=notice.pk, sent_at__isnull=False).exists())


def autopay_notice_sent(*, notice_id: int, at: datetime) -> None:
    """The customer was told of the debit at ``at``: from then the notice period runs."""
    AutopayNotice.objects.filter(pk=notice_id, sent_at__isnull=True).update(sent_at=at)


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


REPRESENTABLE = {"R01", "R09"}  # insufficient or uncollected funds: NACHA lets the originator present again
REPRESENT_WITHIN_DAYS = 180
SETTLE_AHEAD_MOST_DAYS = 60


def settle_day_choose(*, on: date, settle: date | None, same_day: bool) -> date:
    """The effective entry date of a file made on ``on``: ``settle`` if given (a banking day after ``on``, or
    ``on`` itself for same-day ACH), else the next banking day (or ``on`` when same-day and a banking day)."""
    if settle is None:
        settle = on if same_day and is_banking_day(on) else next_banking_day(on)
    errors = []
    why = why_not_banking_day(settle)
    if why:
        errors.append(FieldError(field="settle", message=(
            f"{settle} is {why}: the Federal Reserve settles nothing that day; the next banking day is "
            f"{next_banking_day(settle)}")))
    if settle < on or (settle == on and not same_day):
        errors.append(FieldError(field="settle", message=(
            f"{settle} is not after the file's date ({on}): a debit settles on a banking day after the file is made "
            "(same-day ACH only when asked for)")))
    if settle > on + timedelta(days=SETTLE_AHEAD_MOST_DAYS):
        errors.append(FieldError(field="settle", message=(
            f"{settle} is more than {SETTLE_AHEAD_MOST_DAYS} days after the file's date ({on}); make the file nearer "
            "the day")))
    if errors:
        raise ApplicationError(errors=errors)
    return settle


@dataclass(frozen=True)
class _Wanted:
    enrolment: AutopayEnrolment
    notice: AutopayNotice
    amount: Decimal
    presentment: int


def _debits_wanted(enrolments, *, on: date, settle: date) -> list[_Wanted]:
    """Each enrolment's debit for a file made on ``on`` to settle on ``settle``: under its latest notice whose day
    has come and that was sent the notice period before; presented again after R01/R09 as the policy allows."""
    if not enrolments:
        return []
    latest_sent = timezone.make_aware(datetime.combine(settle - timedelta(days=notice_days()), time.max))
    notices: dict[int, AutopayNotice] = {}
    for notice in (AutopayNotice.objects.filter(enrolment__in=enrolments, debit_on__lte=settle,
                                                sent_at__isnull=False, sent_at__lte=latest_sent)
                   .order_by("enrolment_id", "debit_on", "id")):
        notices[notice.enrolment_id] = notice  # the latest wins
    presented: dict[int, list[AutopayDebit]] = {}
    for debit in AutopayDebit.objects.filter(notice__in=list(notices.values())).select_related("file") \
            .order_by("presentment"):
        presented.setdefault(debit.notice_id, []).append(debit)
    owed = account_amounts_due_by(account_ids=[e.account_id for e in enrolments if e.pk in notices], as_of=on,
                                  by=settle) if notices else {}
    wanted = []
    for enrolment in enrolments:
        notice = notices.get(enrolment.pk)
        if notice is None:
            continue
        due = owed.get(enrolment.account_id, Decimal("0"))
        before = presented.get(notice.pk, [])
        if not before:
            amount = min(due, notice.amount.amount) if notice.amount is not None else due
            if amount > 0:
                wanted.append(_Wanted(enrolment, notice, amount, 1))
            continue
        last = before[-1]
        if (last.returned_code in REPRESENTABLE and len(before) <= min(settings.ACH_REPRESENT_TIMES, 2)
                and last.returned_on is not None
                and on >= last.returned_on + timedelta(days=max(settings.ACH_REPRESENT_AFTER_DAYS, 1))
                and settle <= before[0].file.effective_on + timedelta(days=REPRESENT_WITHIN_DAYS)
                and due >= last.amount.amount):
            wanted.append(_Wanted(enrolment, notice, last.amount.amount, len(before) + 1))
    return wanted


def _file_start(*, on: date, settle: date, same_day: bool, actor, wanted: list[_Wanted], status: str) -> AchFile:
    used = set(AchFile.objects.filter(created_on=on).values_list("modifier", flat=True))
    modifier = next((m for m in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" if m not in used), None)
    if modifier is None:
        raise ApplicationError(f"36 debit files were made on {on} already; the bank takes no more that day",
                               field="date")
    decided = {} if status == AchFile.Status.PENDING else {
        "decided_at": timezone.now(), "decision_note": "made from the server's command line"}
    try:
        with transaction.atomic():
            return AchFile.objects.create(
                created_on=on, modifier=modifier, effective_on=settle, same_day=same_day, entries=len(wanted),
                total=sum((w.amount for w in wanted), Decimal("0")), entry_hash="", created_by=actor, status=status,
                proposed=_proposed(wanted), **decided)
    except IntegrityError:
        waiting = AchFile.objects.filter(status=AchFile.Status.PENDING).first()
        raise ApplicationError(f"debit file {waiting.pk if waiting else ''} (made on "
                               f"{waiting.created_on if waiting else on}) is already waiting for a supervisor: "
                               "approve or refuse it first", field="file") from None


def _proposed(wanted: list[_Wanted]) -> list[dict]:
    return [{"account_no": w.enrolment.account.account_no, "amount": str(w.amount), "presentment": w.presentment,
             "enrolment": w.enrolment.pk, "notice": w.notice.pk} for w in wanted]


def _wanted_now(file_on: date, settle: date) -> list[_Wanted]:
    """The debits due in a file made on ``file_on`` to settle on ``settle``, in the file's order (first
    presentments, then those presented again, each by account), their enrolments locked."""
    enrolments = list(AutopayEnrolment.objects.select_for_update().filter(status=AutopayEnrolment.Status.ACTIVE)
                      .select_related("account").order_by("pk"))
    enrolments.sort(key=lambda e: e.account.account_no)
    wanted = _debits_wanted(enrolments, on=file_on, settle=settle)
    # First presentments in the first batch, then those presented again: trace numbers ascend through the file.
    wanted.sort(key=lambda w: (w.presentment > 1, w.enrolment.account.account_no))
    return wanted


def _file_post(file: AchFile, wanted: list[_Wanted], *, origin: Originator, actor, now: datetime | None) -> str:
    """Post each debit of ``file`` as a payment, keep its debits and seal its NACHA text; the text."""
    on, settle = file.created_on, file.effective_on
    debits, payments = [], []
    first = AutopayDebit.objects.count()  # trace numbers run on from file to file
    for sequence, w in enumerate(wanted, start=1):
        reference = f"ACH-{file.pk}-{sequence:07d}"
        payments.append(PaymentIn(w.enrolment.account.account_no, w.amount, on, reference,
                                  tender=Payment.Tender.ACH))
        debits.append(Debit(routing=w.enrolment.routing_number,
                            account_number=unseal(w.enrolment.account_number_sealed),
                            savings=w.enrolment.account_type == AutopayEnrolment.AccountType.SAVINGS,
                            amount_cents=int(w.amount * CENTS), individual_id=w.enrolment.account.account_no,
                            name=w.enrolment.holder_name, sequence=(first + sequence) % 10_000_000))
    try:
        text = debit_file(origin, [d for d, w in zip(debits, wanted, strict=True) if w.presentment == 1],
                          retries=[d for d, w in zip(debits, wanted, strict=True) if w.presentment > 1],
                          effective=settle, created=now or timezone.localtime(), modifier=file.modifier)
    except NachaError as exc:
        raise ApplicationError(str(exc), field="file") from None
    payments_post(payments=payments, actor=actor, source="autopay")
    posted = {p.reference: p for p in Payment.objects.filter(reference__in=[p.reference for p in payments])}
    AutopayDebit.objects.bulk_create([AutopayDebit(
        file=file, enrolment=w.enrolment, account=w.enrolment.account, amount=w.amount, notice=w.notice,
        presentment=w.presentment, trace_number=trace_number(origin, debit.sequence),
        payment=posted[payment.reference])
        for w, debit, payment in zip(wanted, debits, payments, strict=True)])
    file.entry_hash = text.splitlines()[-1 - _padding(text)][21:31]
    file.sealed_text = seal(text)
    file.save(update_fields=["entry_hash", "sealed_text"])
    return text


def ach_export(*, on: date, settle: date | None = None, same_day: bool = False, actor=None,
               now: datetime | None = None) -> Exported:
    """The debit file made on ``on`` to settle on ``settle`` (``settle_day_choose``) from the server's command
    line, approved as it is made: each active enrolment's debit under its notice (``_debits_wanted``), every debit
    posted as a payment and the NACHA text sealed and kept, in one transaction. Nothing due: no file."""
    origin = originator()
    settle = settle_day_choose(on=on, settle=settle, same_day=same_day)
    with transaction.atomic(durable=True):
        wanted = _wanted_now(on, settle)
        if not wanted:
            return Exported(file=None, text="")
        file = _file_start(on=on, settle=settle, same_day=same_day, actor=actor, wanted=wanted,
                           status=AchFile.Status.APPROVED)
        text = _file_post(file, wanted, origin=origin, actor=actor, now=now)
    return Exported(file=file, text=text)


def ach_file_prepare(*, on: date, settle: date | None = None, same_day: bool = False, actor=None) -> AchFile | None:
    """The first person's half of a debit file made in the admin: the debits a file made on ``on`` would hold,
    listed and totalled, waiting for a supervisor; nothing posted. Nothing due: None."""
    originator()  # the bank's details missing are refused now, not at the approval
    settle = settle_day_choose(on=on, settle=settle, same_day=same_day)
    with transaction.atomic(durable=True):
        wanted = _wanted_now(on, settle)
        if not wanted:
            return None
        return _file_start(on=on, settle=settle, same_day=same_day, actor=actor, wanted=wanted,
                           status=AchFile.Status.PENDING)


def ach_file_decide(file: AchFile, *, approve: bool, note: str, actor, on: date,
                    now: datetime | None = None) -> Exported:
    """A supervisor who did not prepare ``file`` approves it on ``on`` (its debits posted and its text sealed, the
    text given back) or refuses it with a note (nothing posted). Refused, with every reason at once, when the
    decision is not theirs, the file is not waiting, the day is not the file's own, or the debits due are no
    longer those prepared (a payment, a return or a new notice since): then it is refused and prepared again."""
    problems = approval_problems(file, approve=approve, note=note, actor=actor)
    if approve and on != file.created_on:
        problems.append(FieldError("date", f"a debit file is approved the day it is prepared ({file.created_on}); "
                                           f"it is {on}: refuse this one and prepare the day's file"))
    if problems:
        raise ApplicationError(errors=problems)
    if not approve:
        approval_decide(file, approve=False, note=note, actor=actor)
        return Exported(file=file, text="")
    origin = originator()
    with transaction.atomic(durable=True):
        wanted = _wanted_now(file.created_on, file.effective_on)
        if _proposed(wanted) != file.proposed:
            total = sum((w.amount for w in wanted), Decimal("0"))
            raise ApplicationError(
                f"the debits due have changed since the file was prepared ({file.entries} for "
                f"{fmt_dollars(file.total.amount)} then, {len(wanted)} for {fmt_dollars(total)} now: a payment, a "
                "return or a notice came in between); refuse this file and prepare it again", field="file")
        approval_decide(file, approve=True, note=note, actor=actor)
        text = _file_post(file, wanted, origin=origin, actor=actor, now=now)
    return Exported(file=file, text=text)


def ach_export_again(*, file_id: int) -> Exported:
    """A file made before, as it was made: the sealed text opened with the bank key."""
    file = AchFile.objects.filter(pk=file_id).first()
    if file is None:
        raise ApplicationError(f"there is no debit file {file_id}", field="file_id")
    if file.status != AchFile.Status.APPROVED:
        raise ApplicationError(f"debit file {file_id} is {file.get_status_display().lower()}: only an approved file "
                               "goes to the bank", field="file_id")
    if not file.sealed_text:
        raise ApplicationError(f"debit file {file_id} was made before files were kept; it cannot be written again",
                               field="file_id")
    return Exported(file=file, text=unseal(file.sealed_text))


def ach_file_write(exported: Exported, path: str) -> None:
    """Write the file where the bank's software takes it from: readable only by its owner (mode 0600), written
    whole or not at all (a temporary file beside it, synced, then renamed over). The time and place are kept."""
    target = os.path.abspath(path)
    directory = os.path.dirname(target) or "."
    handle, temporary = tempfile.mkstemp(prefix=".ach-", dir=directory)
    try:
        os.fchmod(handle, 0o600)
        with os.fdopen(handle, "w", encoding="ascii", newline="") as out:
            out.write(exported.text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    AchFile.objects.filter(pk=exported.file.pk).update(written_at=timezone.now(), written_to=target[:300])


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
                transition(debit.enrolment, to=AutopayEnrolment.Status.SUSPENDED, actor=actor,
                           note=f"{ret.code}: {reason} (the bank's returns file)",
                           changes={"status_note": f"{ret.code}: {reason}", "status_changed_at": timezone.now()})
                suspended += 1
                facts = {"enrolment_id": debit.enrolment_id, "code": ret.code, "reason": reason}
                transaction.on_commit(lambda facts=facts: autopay_suspended.send(sender=AutopayEnrolment, **facts))
    return ReturnsApplied(reversed=reversed_count, skipped=skipped, fees=fees, suspended=suspended)
