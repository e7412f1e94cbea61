"""The notices listen to the other apps' committed facts (connected in ``apps.ready``): a payment returned or
disputed, autopay suspended or ended with the account, a termination case reopened, a payment plan defaulted.
Each tells the customer once (``notice_give``)."""

from django.conf import settings
from django.utils.translation import gettext as _

from arrears.models import PaymentPlan
from billing.models import PaymentReversal
from billing.ordinance import ordinance_on
from billing.selectors import account_amounts_due
from core.clock import today
from core.dates import fmt_long_day
from core.i18n import customer_language
from core.money import fmt_dollars
from remittance.models import AutopayEnrolment, AutopayNotice
from termination.models import CaseEvent

from .models import CustomerNotice
from .services import AUTOPAY_FACT, email_undeliverable, notice_give, notice_send

REASON = PaymentReversal.Reason
TOLD = {REASON.RETURNED: CustomerNotice.Kind.PAYMENT_RETURNED,
        REASON.DEBIT_RETURNED: CustomerNotice.Kind.PAYMENT_RETURNED,
        REASON.DISPUTED: CustomerNotice.Kind.PAYMENT_DISPUTED}


def _owed(account, on) -> str:
    due = account_amounts_due(account_ids=[account.pk], as_of=on).get(account.pk)
    return fmt_dollars(due.amount if due else 0)


def _why(account, reversal: PaymentReversal) -> str:
    """The reason in plain words, in the customer's language."""
    with customer_language(account):
        if reversal.reason == REASON.RETURNED:
            return _("your bank returned the check unpaid")
        if reversal.reason == REASON.DEBIT_RETURNED:
            code_words = reversal.note.split(" (the bank's")[0]
            return _("your bank returned the autopay debit unpaid (%(why)s)") % {"why": code_words}
        return _("the payment was disputed with your card issuer or bank, which took the money back")


def on_payment_reversed(sender, *, reversal_id, account_id, reason, **kwargs) -> None:
    """A returned check or debit, or a dispute: the customer is told what came back, why, the fee, and what is
    owed now. A refund (asked for), a payment moved to the right account or one entered in error is not a
    surprise to the customer and sends nothing."""
    kind = TOLD.get(reason)
    if kind is None:
        return
    reversal = PaymentReversal.objects.select_related("payment__account__owner", "payment__account__premises",
                                                      "fee").get(pk=reversal_id)
    account = reversal.payment.account
    utility = ordinance_on(reversal.reversed_on).utility
    notice_give(account=account, kind=kind, fact=f"reversal:{reversal.pk}", template=f"notices/email/{kind}.txt",
                context={"reversal": reversal, "payment": reversal.payment, "utility": utility,
                         "why": _why(account, reversal), "amount": fmt_dollars(reversal.payment.amount.amount),
                         "paid_on": fmt_long_day(reversal.payment.paid_on),
                         "fee": fmt_dollars(reversal.fee.amount.amount) if reversal.fee else "",
                         "owed": _owed(account, reversal.reversed_on), "site_url": settings.SITE_URL})


def on_autopay_suspended(sender, *, enrolment_id, code, reason, **kwargs) -> None:
    enrolment = AutopayEnrolment.objects.select_related("account__owner", "account__premises").get(pk=enrolment_id)
    notice_give(account=enrolment.account, kind=CustomerNotice.Kind.AUTOPAY_SUSPENDED,
                fact=f"enrolment:{enrolment.pk}:{enrolment.status_changed_at:%Y%m%d%H%M%S}",
                template="notices/email/autopay_suspended.txt", also=(enrolment.email,),
                context={"enrolment": enrolment, "code": code, "reason": reason,
                         "utility": ordinance_on(today()).utility, "owed": _owed(enrolment.account, today()),
                         "site_url": settings.SITE_URL})


def on_autopay_notice_due(sender, *, notice_id, **kwargs) -> None:
    """The notice before a debit: its amount, the account it comes from and the banking day, e-mailed to the
    address the customer gave for autopay (always: the authorization promises it) and by the ways they chose. An
    e-mail that failed before is tried again; once one has gone, the debit may follow (``notice_send``)."""
    notice = AutopayNotice.objects.select_related("enrolment__account__owner", "enrolment__account__premises",
                                                  "bill").get(pk=notice_id)
    enrolment, account = notice.enrolment, notice.enrolment.account
    with customer_language(account):
        on = fmt_long_day(notice.debit_on)
    fact = f"{AUTOPAY_FACT}{notice.pk}"
    given = notice_give(account=account, kind=CustomerNotice.Kind.AUTOPAY_SCHEDULED, fact=fact,
                        template="notices/email/autopay_scheduled.txt", also=(enrolment.email,),
                        context={"enrolment": enrolment, "bill": notice.bill, "on": on,
                                 "amount": fmt_dollars(notice.amount.amount), "utility": ordinance_on(today()).utility,
                                 "site_url": settings.SITE_URL})
    if given is None:  # told before: an e-mail or text the server refused then is tried again
        for failed in CustomerNotice.objects.filter(kind=CustomerNotice.Kind.AUTOPAY_SCHEDULED, fact=fact,
                                                    sent_at__isnull=True).exclude(error=""):
            notice_send(failed)


def on_autopay_ended(sender, *, enrolment_id, why, **kwargs) -> None:
    """The account closed: autopay ends, and the customer hears what is left to pay (the final bill) and how."""
    enrolment = AutopayEnrolment.objects.select_related("account__owner", "account__premises").get(pk=enrolment_id)
    account = enrolment.account
    on = account.closed_on or today()
    notice_give(account=account, kind=CustomerNotice.Kind.AUTOPAY_ENDED, fact=f"enrolment:{enrolment.pk}:ended",
                template="notices/email/autopay_ended.txt", also=(enrolment.email,),
                context={"enrolment": enrolment, "closed_on": fmt_long_day(on), "owed": _owed(account, on),
                         "utility": ordinance_on(on).utility, "site_url": settings.SITE_URL})


def on_case_reopened(sender, *, case_id, event_id, **kwargs) -> None:
    event = CaseEvent.objects.select_related("case__account__owner", "case__account__premises").get(pk=event_id)
    account = event.case.account
    notice_give(account=account, kind=CustomerNotice.Kind.CASE_REOPENED, fact=f"case-event:{event.pk}",
                template="notices/email/case_reopened.txt",
                context={"case": event.case, "on": fmt_long_day(event.on), "owed": _owed(account, event.on),
                         "utility": ordinance_on(event.on).utility, "site_url": settings.SITE_URL})


def on_plan_defaulted(sender, *, plan_id, **kwargs) -> None:
    plan = PaymentPlan.objects.select_related("account__owner", "account__premises").get(pk=plan_id)
    on = plan.status_changed_on or today()
    notice_give(account=plan.account, kind=CustomerNotice.Kind.PLAN_DEFAULTED, fact=f"plan:{plan.pk}:defaulted",
                template="notices/email/plan_defaulted.txt",
                context={"plan": plan, "on": fmt_long_day(on), "owed": _owed(plan.account, on),
                         "utility": ordinance_on(on).utility, "site_url": settings.SITE_URL})


def on_plan_ended(sender, *, plan_id, **kwargs) -> None:
    """The account closed and its plan with it: the customer hears that what the plan covered is on the final bill."""
    plan = PaymentPlan.objects.select_related("account__owner", "account__premises").get(pk=plan_id)
    on = plan.status_changed_on or today()
    notice_give(account=plan.account, kind=CustomerNotice.Kind.PLAN_ENDED, fact=f"plan:{plan.pk}:ended",
                template="notices/email/plan_ended.txt",
                context={"plan": plan, "on": fmt_long_day(on), "owed": _owed(plan.account, on),
                         "utility": ordinance_on(on).utility, "site_url": settings.SITE_URL})


def on_usage_alerts_raised(sender, *, alert_ids, **kwargs) -> None:
    """A reading far above the account's usual use, use on a vacant account, or none on an occupied one: the
    customer hears it (where they chose usage alerts), once per alert."""
    from meters.models import UsageAlert

    for alert in UsageAlert.objects.filter(id__in=list(alert_ids), kind__in=TOLD_ALERTS).select_related(
            "account__owner", "account__premises"):
        on = alert.read_on
        with customer_language(alert.account):
            read_on = fmt_long_day(on)
            detail = _usage_words(alert)
        notice_give(account=alert.account, kind=CustomerNotice.Kind.USAGE_ALERT, fact=f"usage-alert:{alert.pk}",
                    template="notices/email/usage_alert.txt",
                    context={"alert_kind": alert.kind, "detail": detail, "read_on": read_on,
                             "utility": ordinance_on(on).utility, "site_url": settings.SITE_URL})


# The meter alerts the customer hears of: those about their use. A tamper alarm, reverse flow (a backflow follow-up
# the office opens), a register mismatch or a reading to re-read are the office's to look into first.
TOLD_ALERTS = ("high", "vacant", "none", "leak", "continuous_flow", "no_flow")


def _usage_words(alert) -> str:
    """What the meter shows, in the customer's language (the clerk's ``detail`` is the office's English)."""
    figures = {"gallons": f"{alert.gallons:,}", "days": alert.days,
               "per_day": f"{alert.gallons / max(alert.days, 1):,.0f}",
               "usual": f"{alert.usual_per_day or 0:,.0f}"}
    if alert.kind in ("none", "no_flow"):
        return _("no water used in %(days)s days") % figures
    if alert.kind == "leak":
        return _("your meter reports water running without a stop (a leak)")
    if alert.kind == "continuous_flow" and not alert.days:  # found in hourly reads
        return _("water through your meter every hour for 24 hours, never stopping (a leak?)")
    if alert.kind == "continuous_flow":
        return _("water used every day for %(days)s days, never falling to your usual lowest day") % figures
    if alert.kind == "vacant":
        return _("%(gallons)s gallons in %(days)s days") % figures
    if alert.compared_with == "last_year":
        return _("%(gallons)s gallons in %(days)s days (%(per_day)s a day); the same days last year: %(usual)s a "
                 "day") % figures
    return _("%(gallons)s gallons in %(days)s days (%(per_day)s a day); your average over the year before: "
             "%(usual)s a day") % figures


def on_termination_notice_served(sender, *, case_id, notice_id, **kwargs) -> None:
    """Besides the papers the ordinance requires (served as before), the customer hears that a termination notice
    was served and when the hearing is, by the way they chose; once per case and hearing date."""
    from termination.models import Notice
    from termination.policy import termination_policy

    notice = Notice.objects.select_related("case__account__owner", "case__account__premises").get(pk=notice_id)
    case, account = notice.case, notice.case.account
    with customer_language(account):
        hearing_on = fmt_long_day(case.hearing_on) if case.hearing_on else ""
    notice_give(account=account, kind=CustomerNotice.Kind.TERMINATION_SERVED,
                fact=f"termination:{case.pk}:{case.hearing_on}", template="notices/email/termination_served.txt",
                context={"case": case, "hearing_on": hearing_on,
                         "hearing_time": case.hearing_time.strftime("%H:%M") if case.hearing_time else "",
                         "hearing_place": case.hearing_place,
                         "request_days": termination_policy(notice.served_on).request_days,
                         "amount": fmt_dollars(case.amount_delinquent),
                         "utility": ordinance_on(notice.served_on).utility, "site_url": settings.SITE_URL})


def on_service_shut_off(sender, *, case_id, **kwargs) -> None:
    """The water was shut off: the customer hears the one amount that restores it, as the counter names it."""
    from termination.models import TerminationCase
    from termination.selectors import case_pay

    case = TerminationCase.objects.select_related("account__owner", "account__premises").get(pk=case_id)
    on = case.events.filter(kind="shut_off").values_list("on", flat=True).last() or today()
    pay = case_pay(case, as_of=on)
    with customer_language(case.account):
        day = fmt_long_day(on)
        amount = fmt_dollars(pay.amount) if pay else fmt_dollars(0)
        detail = pay.detail if pay else ""
    notice_give(account=case.account, kind=CustomerNotice.Kind.SERVICE_SHUT_OFF, fact=f"shut-off:{case.pk}:{on}",
                template="notices/email/service_shut_off.txt",
                context={"case": case, "on": day, "amount": amount, "detail": detail,
                         "utility": ordinance_on(on).utility, "site_url": settings.SITE_URL})


def on_service_restored(sender, *, case_id, **kwargs) -> None:
    from termination.models import TerminationCase

    case = TerminationCase.objects.select_related("account__owner", "account__premises").get(pk=case_id)
    on = case.closed_on or today()
    with customer_language(case.account):
        day = fmt_long_day(on)
    notice_give(account=case.account, kind=CustomerNotice.Kind.SERVICE_RESTORED, fact=f"restored:{case.pk}",
                template="notices/email/service_restored.txt",
                context={"case": case, "on": day, "utility": ordinance_on(on).utility, "site_url": settings.SITE_URL})


# What the mail provider reports (django-anymail's tracking webhooks) that stops e-mail to an address.
UNDELIVERABLE = {"bounced": "bounced", "rejected": "refused by the mail provider", "failed": "could not be sent",
                 "complained": "marked as spam by the customer"}


def on_email_tracking(sender, *, event, esp_name, **kwargs) -> None:
    """A bounce, a refusal or a spam complaint about one of our e-mails: that address is e-mailed no more."""
    why = UNDELIVERABLE.get(event.event_type)
    if why:
        email_undeliverable(address=event.recipient or "", why=f"{why} ({esp_name})")


def on_notices_queued(sender, **kwargs) -> None:
    """Notices written in bulk: a worker sends what may go now (the rest waits out the quiet hours)."""
    from .tasks import notices_send_waiting_task

    notices_send_waiting_task.delay()
