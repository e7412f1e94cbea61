"""Staff roles: the Django groups a village's office staff are put in, and what each may do.

``ROLE_PERMISSIONS`` is the whole policy, one row per group: permissions are written as
``app_label.codename`` so a reader sees exactly which model each one is about. A codename whose model
is not installed yet (a later app such as ``backflow``) is skipped, so the table can name the
permissions a role will need before the app that defines them exists.

Installing is idempotent and the table is authoritative: running it again sets each group's
permissions back to the table (a village wanting a different role creates its own group).

Accounts are closed, never deleted (the admin offers no delete, to anyone). Nobody below superuser may
delete audit history (the ``Historical*`` models), issued bills, ledger entries or payments; corrections are
made by adjustments and voids, which are themselves recorded.
"""

from dataclasses import dataclass

from django.apps import apps
from django.contrib.auth.management import create_permissions
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import transaction


def _perms(actions: str, *models: str) -> list[str]:
    """``_perms("view add", "accounts.account")`` → ["accounts.view_account", "accounts.add_account"]."""
    out = []
    for label in models:
        app_label, model = label.split(".")
        out.extend(f"{app_label}.{action}_{model}" for action in actions.split())
    return out


# What a clerk keeps up day to day: who is billed, for what premises, from which meter and reading.
_CLERK_RECORDS = ("accounts.account", "accounts.customer", "accounts.premises", "accounts.ownership",
                  "meters.meter", "meters.installation", "meters.reading",
                  "billing.payment", "billing.adjustment", "billing.pendingcharge", "billing.deposit",
                  "meters.metertest")
# The audit trail of those records: a clerk reads it but never edits or deletes it.
_CLERK_HISTORY = ("accounts.historicalaccount", "accounts.historicalcustomer", "accounts.historicalpremises",
                  "accounts.historicalownership", "meters.historicalmeter", "meters.historicalinstallation",
                  "meters.historicalreading", "billing.historicalpayment",
                  "billing.historicalbillingexception")

# The backflow registry: assess premises, register devices and testers, record tests and accept or reject
# those submitted online, serve notices, shorten a window, record compliance; read what the notices charged.
BACKFLOW_RECORDS = [
    *_perms("view add change", "backflow.assessment", "backflow.device", "backflow.devicetest",
            "backflow.compliancenotice", "backflow.tester"),
    "backflow.view_noticecharge",
    # Reverse flow a meter reported: the follow-up, and recording it done.
    *_perms("view change", "backflow.reverseflow"),
]

CLERK = [
    *_perms("view add change", *_CLERK_RECORDS),
    *_perms("view", *_CLERK_HISTORY),
    *_perms("view", "billing.bill", "billing.billline", "billing.ledgerentry", "billing.billingrun",
            "billing.billingexception", "billing.rateschedule", "billing.fee", "ordinance.utility"),
    "billing.change_billingexception",  # release an exception: "bill as read"
    # A town's premises put in their water districts, each from a day (never edited: a later row corrects).
    *_perms("view add", "accounts.premisesdistrict"), "accounts.view_historicalpremisesdistrict",
    "ordinance.view_district",
    "billing.add_billingrun",           # start a billing run, make its print file, send its e-mails
    *_perms("view add change", "billing.billmessage"),  # messages printed on bills
    # What the customers were told (returned payments, autopay stopped, a case reopened); print the paper ones.
    *_perms("view change", "notices.customernotice"),
    # How each customer chose to hear from the office, and their consents to text messages (kept as given).
    *_perms("view", "notices.noticepreference", "notices.textconsent", "notices.textnumber"),
    # The readings worth a look (a leak, use on a vacant account, a stopped meter): mark each looked at.
    *_perms("view change", "meters.usagealert"),
    # The meters a reader's file says were not read, with the file's code (the bill waits in the run's exceptions).
    *_perms("view", "meters.missedread"),
    # See who is linked to an account online and end a link (a sale does it by itself).
    *_perms("view delete", "accounts.portallink"),
    "accounts.view_historicalportallink",
    # Termination of service: open cases, serve and record notices and written requests, log an emergency
    # interruption; the timeline and the work orders are read, never edited. Determinations, appeals and
    # shut-off orders are others' to make.
    *_perms("view add change", "termination.terminationcase", "termination.notice"),
    *_perms("view", "termination.caseevent", "termination.workorder", "termination.interruption",
            "termination.casebill"),
    "termination.add_interruption",
    # Backflow: what the inspector keeps, and the fines charged to the next bill.
    *BACKFLOW_RECORDS,
    "backflow.charge_compliancenotice",
    # Waive a penalty or interest charge with a reason (above the office's limit a supervisor approves).
    *_perms("view add", "billing.penaltywaiver"),
    # The rebilling an amendment installed late waits for (a supervisor approves it).
    "billing.view_amendmentrebill",
    # Notes on an account, dated and signed (never edited); payments taken back (reversed with
    # the payment's own change permission) are read.
    *_perms("view add", "accounts.accountnote"),
    # Alerts on an account everyone sees (a dog, a meter inside, a medical certificate, "do not shut off"): set
    # by the clerk, ended by a supervisor.
    *_perms("view add", "accounts.accountalert"),
    "accounts.view_historicalaccountalert",
    "billing.view_paymentreversal",
    # The back office: ask for a refund of a credit (a supervisor approves it), move a closed account's balance to
    # the owner's other account, invoice a fee on its own, close the day (a supervisor reopens one); payment plans.
    *_perms("view add", "office.refund", "office.transfer", "office.invoice", "office.dayclose",
            "office.dayreopen", "arrears.paymentplan"),
    "arrears.view_planinstallment",
    "reports.run_reportfile",  # the office's reports and their files
    "conversion.view_conversionbatch",  # conversion: check the old system's files, bring its accounts over
    # Work orders for the field: made, completed from the field with what was found, cancelled.
    *_perms("view add change", "fieldwork.fieldorder"), "fieldwork.cancel_fieldorder",
    # Payments online and from the bank: the exceptions queue (post or send back), and what came in online, by
    # autopay and through the bank, read; the deposits reconciliation reads payments.
    *_perms("view change", "remittance.paymentexception"),
    *_perms("view", "remittance.onlinepayment", "remittance.processorevent", "remittance.autopayenrolment",
            "remittance.achfile", "remittance.bankdeposit"),
    "remittance.add_bankdeposit",  # read the bank's BAI2 report (its bill-pay credits posted)
    "remittance.change_achfile",  # read the bank's ACH returns file
    "remittance.add_achfile",  # prepare the autopay debit file (a supervisor approves it; nothing posts before)
]

SUPERVISOR = [
    *CLERK,
    *_perms("view", "billing.historicalrateschedule", "billing.historicalfee"),
    *_perms("add change", "billing.rateschedule", "billing.fee"),
    "ordinance.change_utility",
    "accounts.change_accountalert",     # end an account alert (lift "do not shut off")
    "billing.change_bill",              # void a bill (the void is recorded; the bill is never edited)
    "billing.change_penaltywaiver",     # approve or refuse a penalty waiver above the office's limit
    # Approve or refuse rebilling the bills an amendment installed late would have rated otherwise (never the one
    # who installed it); the requests themselves are read.
    "billing.change_amendmentrebill",
    "office.approve_refund",            # approve or refuse a refund of a credit
    "office.approve_dayreopen",         # approve or refuse reopening a closed day (never their own request)
    "meters.delete_reading",
    "termination.order_terminationcase",  # issue shut-off orders
    "termination.carry_out_terminationcase",  # record a shut-off carried out, restore service
    "remittance.approve_achfile",       # approve (posting its debits) or refuse a debit file (never their own)
    "remittance.approve_paymentexception",  # post a queued payment over the clerk's limit or what is owed
    # The nightly job's runs (the home page's *Last nightly job*) and every import made by a worker.
    *_perms("view", "core.nightlyrun", "core.importjob"),
    # Ask for a conversion post, approve or refuse one another supervisor asked for, and roll one back.
    *_perms("view add change", "conversion.conversionbatch"),
    "conversion.approve_conversionjob",
    "conversion.view_openingitem",
    # The office's words for each notice (English and Spanish), and their history.
    *_perms("view add change", "notices.noticetemplate"),
    "notices.view_historicalnoticetemplate",
]

# The treasurer or the village's auditor: reads the books and what ties them to the bank — payments and the
# ledger, bills and runs, the back office's refunds, transfers, invoices and day closes (with the journal), the
# deposits and their reconciliation, the reports — and changes nothing.
TREASURER = [
    *_perms("view", "accounts.account", "accounts.customer", "accounts.premises",
            "billing.bill", "billing.billline", "billing.ledgerentry", "billing.payment", "billing.paymentreversal",
            "billing.billingrun", "billing.deposit", "billing.adjustment", "billing.penaltywaiver", "billing.fee",
            "billing.amendmentrebill",
            "billing.rateschedule", "ordinance.utility",
            "office.refund", "office.transfer", "office.invoice", "office.dayclose", "office.dayreopen",
            "remittance.onlinepayment", "remittance.processorevent", "remittance.achfile",
            "remittance.bankdeposit", "remittance.paymentexception",
            "arrears.paymentplan", "core.nightlyrun"),
    "reports.run_reportfile",
]

HEARING_OFFICER = [
    *_perms("view", "accounts.account", "accounts.customer", "accounts.premises", "accounts.ownership",
            "billing.bill", "billing.billline", "billing.ledgerentry", "billing.payment"),
    # Reads the case file; records the hearing, the determination and the Commission's decision.
    *_perms("view", "termination.terminationcase", "termination.notice", "termination.caseevent",
            "termination.workorder", "termination.casebill"),
    "termination.determine_terminationcase",
]

BACKFLOW_INSPECTOR = [
    *_perms("view", "accounts.account", "accounts.premises", "accounts.customer"),
    *BACKFLOW_RECORDS,
]

# The mayor, the treasurer or a trustee the office names to decide what two people must: approves or refuses a
# refund, a penalty waiver above the office's limit, reopening a closed day, the autopay debit file, rebilling after a
# late amendment and a conversion post — and prepares none of them (no "add"), so a clerk and a supervisor with an
# approver are an office where every request has someone to decide it. Reads what each decision is about.
APPROVER = [
    *_perms("view", "accounts.account", "accounts.customer", "accounts.premises",
            "billing.bill", "billing.billline", "billing.ledgerentry", "billing.payment",
            "office.refund", "office.dayclose", "office.dayreopen", "remittance.achfile",
            "billing.penaltywaiver", "billing.amendmentrebill", "conversion.conversionbatch"),
    "office.approve_refund", "office.approve_dayreopen", "remittance.approve_achfile",
    "billing.change_penaltywaiver", "billing.change_amendmentrebill", "conversion.approve_conversionjob",
]

# The field crew: the day sheet and the shut-off list, work orders completed from the field (readings and meters are
# recorded by the completion); the accounts, meters and termination cases they go to, read.
FIELD_CREW = [
    *_perms("view", "accounts.account", "accounts.premises", "accounts.customer", "meters.meter",
            "meters.installation", "meters.reading", "termination.terminationcase", "termination.workorder"),
    *_perms("view change", "fieldwork.fieldorder"),
    # The shut-off the case board assigns them, recorded when done, and service restored; cancelling is the office's.
    "termination.carry_out_terminationcase",
]

ROLE_PERMISSIONS: dict[str, list[str]] = {
    "Clerk": CLERK,
    "Supervisor": SUPERVISOR,
    "Hearing officer": HEARING_OFFICER,
    "Backflow inspector": BACKFLOW_INSPECTOR,
    "Field crew": FIELD_CREW,
    "Treasurer": TREASURER,
    "Approver": APPROVER,
}


@dataclass(frozen=True)
class Duty:
    """One row of the table in docs/roles.md: what it is about, the permissions that do it, and each role's words
    (in ``ROLE_PERMISSIONS``' order). The words are held to the permissions (``tests/accounts/test_roles_doc.py``):
    "—" is none of them, words beginning "read" are only the ``view_`` ones, any other words at least one that is
    not; and every permission a role holds that is not a ``view_`` is in some row."""

    what: str
    perms: tuple[str, ...]
    words: tuple[str, ...]


def _duty(what: str, perms: list[str], *words: str) -> Duty:
    if len(words) != len(ROLE_PERMISSIONS):
        raise ValueError(f"{what}: {len(words)} roles' words for {len(ROLE_PERMISSIONS)} roles")
    return Duty(what, tuple(perms), words)


NO = "—"
DUTIES = [
    _duty("accounts, customers, premises (where the meter is), owners",
          _perms("view add change", "accounts.account", "accounts.customer", "accounts.premises", "accounts.ownership"),
          "keep", "keep", "read", "read", "read", "read", "read"),
    _duty("who is linked to an account online (a sale ends the links by itself)",
          _perms("view delete", "accounts.portallink"), "see, end a link", "see, end a link", NO, NO, NO, NO, NO),
    _duty("a town's premises in their water districts, each from a day (never edited: a later row corrects)",
          _perms("view add", "accounts.premisesdistrict"), "record", "record", NO, NO, NO, NO, NO),
    _duty("notes on an account, and its alerts (a dog, a meter inside, \"do not shut off\")",
          [*_perms("view add", "accounts.accountnote"), *_perms("view add change", "accounts.accountalert")],
          "write notes, set alerts", "and end an alert", NO, NO, NO, NO, NO),
    _duty("meters, installations, readings (import and export), meter tests",
          _perms("view add change delete", "meters.meter", "meters.installation", "meters.reading", "meters.metertest"),
          "keep", "keep, delete a reading", NO, NO, "read", NO, NO),
    _duty("adjustments, charges waiting for the next bill, deposits, a run's exceptions",
          _perms("view add change", "billing.adjustment", "billing.pendingcharge", "billing.deposit",
                 "billing.billingexception"),
          "keep; release an exception (\"bill as read\")", "keep; release an exception", NO, NO, NO, "read", NO),
    _duty("payments: the counter, batches, lockbox and payment files, reversals",
          [*_perms("view add change", "billing.payment"), "billing.view_paymentreversal"],
          "take and reverse", "take and reverse", "read", NO, NO, "read", "read"),
    _duty("payments online, autopay, ACH files, bank deposits, the deposits reconciliation",
          [*_perms("view", "remittance.onlinepayment", "remittance.processorevent", "remittance.autopayenrolment"),
           *_perms("view add change approve", "remittance.achfile"), *_perms("view add", "remittance.bankdeposit")],
          "prepare the ACH debit file; read the BAI2 report and the ACH returns; read the rest",
          "and approve or refuse the ACH debit file (never their own)", NO, NO, NO, "read",
          "approve or refuse the ACH debit file (never one they prepared)"),
    _duty("the exceptions queue (lockbox, bill pay, online); the lockbox file",
          _perms("view change approve", "remittance.paymentexception"),
          "post (up to `EXCEPTION_POST_LIMIT` and what the account owes) or send back; read the file",
          "post any amount or send back; read the file", NO, NO, NO, "read", NO),
    _duty("bills, runs, print files, bill messages",
          [*_perms("view change", "billing.bill"), *_perms("view add", "billing.billingrun"),
           *_perms("view add change", "billing.billmessage")],
          "run, print, release held bills", "and void a bill, or void it and bill it again with the reading corrected",
          "read", NO, NO, "read", "read"),
    _duty("rates, fees, the utility's settings",
          [*_perms("view add change", "billing.rateschedule", "billing.fee"),
           *_perms("view change", "ordinance.utility")],
          "read", "change", NO, NO, NO, "read", NO),
    _duty("rebilling after an amendment installed late (`setup_utility --rebill`)",
          _perms("view change", "billing.amendmentrebill"),
          "read", "approve or refuse (never their own)", NO, NO, NO, "read", "approve or refuse"),
    _duty("penalties: waive with a reason", _perms("view add change", "billing.penaltywaiver"),
          "ask (at once within the office's limit)", "approve or refuse above it (never their own)", NO, NO, NO, "read",
          "approve or refuse above the limit"),
    _duty("refunds, transfers, invoices, the day's close, the journal",
          [*_perms("view add", "office.refund", "office.transfer", "office.invoice", "office.dayclose",
                   "office.dayreopen"), "office.approve_refund", "office.approve_dayreopen"],
          "ask (cleared money only), make, close a day, ask to reopen one",
          "and approve a refund or reopening a closed day (never their own request)", NO, NO, NO, "read",
          "approve or refuse a refund or reopening a closed day"),
    _duty("payment plans", _perms("view add", "arrears.paymentplan"), "make", "make", NO, NO, NO, "read", NO),
    _duty("notices to customers (paper ones to print)", _perms("view change", "notices.customernotice"),
          "print, read", "print, read", NO, NO, NO, NO, NO),
    _duty("the office's words for each notice (English and Spanish)",
          _perms("view add change", "notices.noticetemplate"), NO, "write", NO, NO, NO, NO, NO),
    _duty("termination cases: open, serve, record requests, emergencies",
          [*_perms("view add change", "termination.terminationcase", "termination.notice"),
           *_perms("view add", "termination.interruption")],
          "keep", "keep", "read", NO, "read", NO, NO),
    _duty("hearings, determinations, appeals' decisions", ["termination.determine_terminationcase"],
          NO, NO, "record", NO, NO, NO, NO),
    _duty("shut-off orders", ["termination.order_terminationcase"], NO, "issue", NO, NO, NO, NO, NO),
    _duty("a shut-off carried out, service restored", ["termination.carry_out_terminationcase"],
          NO, "record", NO, NO, "record", NO, NO),
    _duty("work orders, the day sheet, the shut-off list",
          [*_perms("view add change cancel", "fieldwork.fieldorder"), "termination.view_workorder"],
          "make, complete, cancel", "make, complete, cancel", "read (a case's)", NO, "complete (never cancel)", NO, NO),
    _duty("backflow: assessments, devices, testers, tests, notices",
          [*_perms("view add change", "backflow.assessment", "backflow.device", "backflow.devicetest",
                   "backflow.compliancenotice", "backflow.tester"), "backflow.charge_compliancenotice"],
          "keep, charge fines", "keep, charge fines", NO, "keep", NO, NO, NO),
    _duty("backflow: reverse-flow follow-ups (opened by a meter's flag)", _perms("view change", "backflow.reverseflow"),
          "follow up", "follow up", NO, "follow up", NO, NO, NO),
    _duty("meter alerts (use, flags, continuous flow, out of range)", _perms("view change", "meters.usagealert"),
          "mark looked at", "mark looked at", NO, NO, NO, NO, NO),
    _duty("conversion from the old system",
          [*_perms("view add change", "conversion.conversionbatch"), "conversion.approve_conversionjob",
           "accounts.add_account"],
          "check, bring accounts over",
          "and ask for a post, approve or refuse one another asked for (never their own), roll a batch back",
          NO, NO, NO, NO, "approve or refuse a post"),
    _duty("reports and their files", ["reports.run_reportfile"], "run", "run", NO, NO, NO, "run", NO),
    _duty("the nightly job's runs, import jobs", _perms("view", "core.nightlyrun", "core.importjob"),
          NO, "read", NO, NO, NO, "read (runs)", NO),
]


def roles_table() -> str:
    """The table of docs/roles.md, written from ``DUTIES`` (``manage.py roles_docs --write``)."""
    roles = list(ROLE_PERMISSIONS)
    lines = ["| | " + " | ".join(roles) + " |", "|---|" + "---|" * len(roles)]
    lines += [f"| {duty.what} | " + " | ".join(duty.words) + " |" for duty in DUTIES]
    return "\n".join(lines) + "\n"


def _installed_permissions(names) -> list[Permission]:
    """The Permission rows for ``names``, skipping those whose model is not installed (yet); a test holds every
    name to an installed model and permission (``tests/accounts/test_roles.py``)."""
    wanted: dict[type, set[str]] = {}
    for name in names:
        app_label, codename = name.split(".")
        try:
            model = apps.get_model(app_label, codename.rsplit("_", 1)[1])  # a model name has no "_"
        except LookupError:
            continue
        wanted.setdefault(model, set()).add(codename)
    if not wanted:
        return []

    def found() -> list[Permission]:
        content_types = ContentType.objects.get_for_models(*wanted, for_concrete_models=False)
        model_by_ct = {ct.id: model for model, ct in content_types.items()}
        return [perm for perm in Permission.objects.filter(content_type__in=content_types.values()).select_related(
                    "content_type")
                if perm.codename in wanted[model_by_ct[perm.content_type_id]]]

    permissions = found()
    if len(permissions) < sum(len(codenames) for codenames in wanted.values()):
        # post_migrate makes the permissions; make sure they exist when called before it has run.
        for app_label in {model._meta.app_label for model in wanted}:
            create_permissions(apps.get_app_config(app_label), verbosity=0)
        permissions = found()
    return permissions


@transaction.atomic
def roles_install() -> list[str]:
    """Create or update the staff groups from ``ROLE_PERMISSIONS``; returns the group names."""
    installed = {f"{perm.content_type.app_label}.{perm.codename}": perm for perm in _installed_permissions(
        {name for perm_names in ROLE_PERMISSIONS.values() for name in perm_names})}
    for name, perm_names in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set([installed[perm] for perm in perm_names if perm in installed])
    return list(ROLE_PERMISSIONS)


def staff_add(*, email: str, role: str, name: str = "") -> tuple:
    """A member of staff who can sign in and do their job in one step: a login named by their e-mail, "staff status"
    ticked, in the group of ``role``, with a temporary password (returned once, never kept in clear) they change
    under "Change password". The same e-mail again puts that login back in the role, with a new password.
    Refused, naming the field, for an e-mail that is not one or a role that is not shipped."""
    import secrets

    from django.contrib.auth import get_user_model
    from django.core.exceptions import ValidationError
    from django.core.validators import validate_email

    from core.errors import FieldError, refuse_any

    email = (email or "").strip().lower()
    errors = []
    try:
        validate_email(email)
    except ValidationError:
        errors.append(FieldError("email", f"'{email}' is not an e-mail address"))
    if role not in ROLE_PERMISSIONS:
        errors.append(FieldError("role", f"'{role}' is not a role; the roles are {', '.join(ROLE_PERMISSIONS)}"))
    refuse_any(errors)
    first, _, last = name.strip().partition(" ")
    password = secrets.token_urlsafe(12)
    with transaction.atomic():
        group, _ = Group.objects.get_or_create(name=role)
        if not group.permissions.exists():
            group.permissions.set(_installed_permissions(ROLE_PERMISSIONS[role]))
        user, _ = get_user_model().objects.get_or_create(username=email, defaults={"email": email})
        user.email, user.is_staff, user.is_active = email, True, True
        if name.strip():
            user.first_name, user.last_name = first, last
        user.set_password(password)
        user.save()
        user.groups.set([group])
    return user, password
