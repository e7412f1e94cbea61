"""The words of each notice: the office's own (``NoticeTemplate``, edited by a supervisor) where it has them, the
shipped ones (``templates/notices/email/KIND.txt``, translated) where not. The first line is the subject.

The office's words are a small template: text with ``{{ variable }}`` from the list its kind offers (``VARIABLES``;
no tags, no other names), rendered with autoescape off as a plain-text message. A variable not in the list is refused
when the wording is saved, naming it, so a typo never sends a notice with a hole in it."""

import re

from django.template import Context, Engine, TemplateSyntaxError
from django.template.loader import render_to_string
from django.utils import translation

from core.errors import ApplicationError

from .models import CustomerNotice, NoticeTemplate

K = CustomerNotice.Kind
COMMON = {
    "account.account_no": "the account number",
    "account.premises.service_address": "the service address",
    "utility.name": "the utility's name",
    "utility.phone": "the office's telephone",
    "site_url": "the address of the customers' site",
}
VARIABLES: dict[str, dict[str, str]] = {
    K.DUE_SOON: {"bill_number": "the bill's number", "amount": "what is unpaid on it", "due_on": "its due date",
                 "next_charge": "the late charge that follows (its words)", "citation": "that charge's section",
                 "next_on": "the day it falls"},
    K.LATE_NOTICE: {"bill_number": "the bill's number", "due_on": "its due date",
                    "past_due": "everything past due now", "amount": "what avoids the next late charge",
                    "pay_by": "the last day to pay it", "next_charge": "the next late charge (its words)",
                    "citation": "its section", "next_on": "the day it falls"},
    K.USAGE_ALERT: {"read_on": "the reading's day", "detail": "what the meter shows", "alert_kind":
                    "high, vacant, none, leak, continuous_flow or no_flow"},
    K.INSTALLMENT_DUE: {"number": "the installment (0: the down payment)", "amount": "what is left of it",
                        "due_on": "its due date"},
    K.INSTALLMENT_MISSED: {"number": "the installment (0: the down payment)", "amount": "what is left of it",
                           "due_on": "its due date", "keep_by": "the last day to pay it and keep the plan"},
    K.TERMINATION_SERVED: {"case.number": "the termination case", "hearing_on": "the hearing's day",
                           "hearing_time": "its time", "hearing_place": "its place", "request_days":
                           "the days to ask for the hearing in writing", "amount": "the amount delinquent"},
    K.SERVICE_SHUT_OFF: {"case.number": "the termination case", "on": "the day service was shut off",
                         "amount": "the amount that restores service",
                         "detail": "the charges of the shut-off it holds"},
    K.SERVICE_RESTORED: {"case.number": "the termination case", "on": "the day service was restored"},
    K.PAYMENT_RETURNED: {"amount": "the payment", "paid_on": "its day", "why": "why it came back, in words",
                         "fee": "the returned-payment fee", "owed": "what is owed now",
                         "payment.reference": "its reference"},
    K.PAYMENT_DISPUTED: {"amount": "the payment", "paid_on": "its day", "why": "the dispute, in words",
                         "owed": "what is owed now", "payment.reference": "its reference"},
    K.AUTOPAY_SUSPENDED: {"enrolment.account_last4": "the bank account's last four digits", "code": "the return code",
                          "reason": "the bank's reason", "owed": "what is owed now"},
    K.AUTOPAY_ENDED: {"enrolment.account_last4": "the bank account's last four digits",
                      "closed_on": "the day the account closed", "owed": "what is owed now"},
    K.CASE_REOPENED: {"case.number": "the termination case", "on": "the day it reopened", "owed": "what is owed now"},
    K.PLAN_DEFAULTED: {"on": "the day the plan ended", "owed": "what is owed now"},
    K.PLAN_ENDED: {"plan.number": "the payment plan", "on": "the day the account closed", "owed": "what is owed now"},
    K.AUTOPAY_SCHEDULED: {"amount": "the amount to be debited", "on": "the banking day it is debited",
                          "enrolment.account_last4": "the bank account's last four digits",
                          "bill.number": "the bill it pays (none: what was past due at enrolment)"},
    K.BILL_READY: {"bill_number": "the bill's number", "amount": "the bill's total", "balance": "the account's "
                   "balance with it", "bill_on": "the bill's date", "due_on": "its due date",
                   "bill_url": "the bill's page on the customers' site"},
}
_ENGINE = Engine(autoescape=False, builtins=[])
_NAMES = re.compile(r"{{\s*([^}]*?)\s*}}")
_TAG = re.compile(r"{%")


def variables_of(kind: str) -> dict[str, str]:
    return {**VARIABLES.get(kind, {}), **COMMON}


def wording_check(kind: str, subject: str, body: str) -> None:
    """Refuse words that use a tag, a name the kind does not offer, or a broken ``{{ }}``, naming it."""
    allowed = variables_of(kind)
    for field, text in (("subject", subject), ("body", body)):
        if _TAG.search(text):
            raise ApplicationError("only {{ variables }} may be used, not {% tags %}", field=field)
        for name in _NAMES.findall(text):
            if name not in allowed:
                raise ApplicationError(f"{{{{ {name} }}}} is not a variable of this notice; it offers "
                                       + ", ".join(allowed), field=field)
        try:
            _ENGINE.from_string(text)
        except TemplateSyntaxError as exc:
            raise ApplicationError(f"cannot be read: {exc}", field=field) from None


def _nested(flat: dict[str, str]) -> dict:
    out: dict = {}
    for name, value in flat.items():
        *parents, leaf = name.split(".")
        node = out
        for parent in parents:
            node = node.setdefault(parent, {})
        node[leaf] = value
    return out


def shipped_words(kind: str, language: str) -> tuple[str, str]:
    """The shipped subject and text of ``kind`` in ``language``, with each variable left as ``{{ name }}`` for the
    office to start from."""
    placeholders = _nested({name: "{{ " + name + " }}" for name in variables_of(kind)})
    with translation.override(language):
        text = render_to_string(f"notices/email/{kind}.txt", placeholders).strip()
    subject, _, body = text.partition("\n")
    return subject.strip(), body.strip()


def wordings_for(kinds) -> dict[tuple[str, str], NoticeTemplate]:
    """The office's wordings of these kinds, by (kind, language)."""
    return {(w.kind, w.language): w for w in NoticeTemplate.objects.filter(kind__in=list(kinds))}


def notice_words(*, kind: str, language: str, template: str, context: dict,
                 wordings: dict[tuple[str, str], NoticeTemplate]) -> str:
    """The notice's text (subject, a new line, the body) in the office's words (``wordings``), else the shipped
    ones; rendered in the caller's language (``customer_language``)."""
    wording = wordings.get((kind, language))
    if wording is None:
        return render_to_string(template, context).strip()
    values = Context(context, autoescape=False)
    return (_ENGINE.from_string(wording.subject).render(values).strip() + "\n"
            + _ENGINE.from_string(wording.body).render(values).strip())
