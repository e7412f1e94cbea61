"""`make run`'s setup step: a demo village with bills, and an admin login that works.

Idempotent: the preset and demo accounts are installed only into a database without accounts, and the
back-filled billing, a few termination cases at different stages and the backflow registry are made only
right after that; every later run bills and assesses what is due today (both commands skip what is already
done). The admin password is reset and printed on every run, so the printed one always works. Refuses to run
with DEBUG off: it is for the embedded demo, never production.
"""

import secrets
from datetime import date, timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from accounts.models import Account
from billing.runs.candidates import billing_candidates
from core.commands import today
from core.errors import ApplicationError
from demo import DEMO_PRESET
from demo.autopay import demo_autopay_create
from demo.backflow import demo_backflow_create, demo_backflow_words
from demo.payments import demo_payments_create
from demo.termination import demo_cases_create

ADMIN_USERNAME = "admin"
ADMIN_URL = "http://127.0.0.1:8000/admin/"
# A customer's login to the portal, linked to a billed demo account (and to one with a termination case open,
# where the demo has one), so the portal can be seen as a customer sees it.
CUSTOMER_EMAIL = "customer@example.org"
PORTAL_URL = "http://127.0.0.1:8000/portal/"
BACKFILL_MONTHS = 22  # the demo's readings start two years back; the first bills fall in the month after


class Command(BaseCommand):
    help = ("Demo setup for `make run`: install a preset with demo accounts if there are none, bill them, "
            "and (re)set the password of the 'admin' superuser, printing it with the admin URL.")

    def add_arguments(self, parser):
        parser.add_argument("--preset", default=DEMO_PRESET,
                            help="ordinance preset for a new demo (default %(default)s)")
        parser.add_argument("--demo", type=int, default=300, metavar="N",
                            help="demo accounts to create when the database has none (default 300)")

    def handle(self, *args, preset, demo, **options):
        if not settings.DEBUG:
            raise CommandError("demo_bootstrap adds demo data and resets the admin password; it runs only "
                               "with DJANGO_DEBUG on (the embedded default), never in production")
        as_of = today()
        new = not Account.objects.exists()
        if not new:
            self.stdout.write(f"{Account.objects.count()} accounts already present; no demo data added.")
            bill_dates = [as_of]
        else:
            call_command("setup_utility", preset, "--demo", demo, stdout=self.stdout, stderr=self.stderr)
            spanish = _spanish_speaking()
            self.stdout.write(f"Demo: {spanish} accounts speak Spanish (their bills and notices are in Spanish; "
                              "account numbers ending in 7).")
            # Every month is billed but this one: its run is left for the trainee (the day's work of an office).
            *bill_dates, left = _first_days_of_months_before(as_of, BACKFILL_MONTHS)
        self._bill(bill_dates, as_of=as_of)
        if new:
            self._termination_cases(as_of=as_of)
            self._backflow(as_of=as_of)
            self._autopay(as_of=as_of)
            due = len(billing_candidates(run_on=left))
            self.stdout.write(f"Demo: the run of {left} is left for you: {due} accounts in its books, their readings "
                              f"in (Billing runs → Start a billing run, or manage.py run_billing --date {left})")
        password = _admin_with_new_password()
        staff_password = _staff_with_new_password()
        customer_password, linked = _customer_with_new_password()
        self.stdout.write(self.style.SUCCESS(
            f"\nAdmin: {ADMIN_URL}\n  username: {ADMIN_USERNAME}\n  password: {password}\n"
            f"Staff, one login per role ({', '.join(STAFF_LOGINS)}), each in its group (docs/roles.md)\n"
            f"  password: {staff_password}\n"
            + (f"Customer portal: {PORTAL_URL}\n  username: {CUSTOMER_EMAIL}\n  password: {customer_password}\n"
               f"  (accounts {', '.join(linked)})\n" if linked else "")
            + (f"E-mails the demo sends are written to {settings.EMAIL_FILE_PATH}, one file each\n"
               if settings.EMAIL_BACKEND.endswith("filebased.EmailBackend") and settings.EMAIL_FILE_PATH else "")))

    def _bill(self, bill_dates: list[date], *, as_of: date) -> None:
        """Bill each date in order, and post the payments made before the next one, as the office would have
        and the late charges owed by each bill date before its bills (a bill shows the account as known when
        it was issued: a payment recorded after the next bill would leave that bill's previous balance
        unpaid); then assess penalties through today."""
        dates = list(dict.fromkeys(bill_dates))  # today may be a back-filled 1st too
        paid = 0
        for bill_date, next_date in zip(dates, [*dates[1:], None], strict=True):
            self._call("assess_penalties", "--date", bill_date.isoformat())  # known when the bill is issued
            self._call("run_billing", "--date", bill_date.isoformat())
            paid += demo_payments_create(as_of=next_date - timedelta(days=1) if next_date else as_of)
        if paid:
            self.stdout.write(f"Demo: {paid} payments posted (most on time, some late or partial).")
        self._call("assess_penalties", "--date", as_of.isoformat())

    def _termination_cases(self, *, as_of: date) -> None:
        """A few delinquent accounts taken through due process to different stages (demo/termination.py)."""
        try:
            cases = demo_cases_create(as_of=as_of)
        except ApplicationError as exc:
            self.stdout.write(f"Demo: no termination cases: {'; '.join(e.message for e in exc.errors)}")
            return
        if cases:
            self.stdout.write(f"Demo: {len(cases)} termination cases: " + ", ".join(
                f"{case.number} ({case.get_status_display().lower()})" for case in cases))

    def _backflow(self, *, as_of: date) -> None:
        """Assessed premises with devices compliant, due, overdue, flagged and awaiting the clerk, and the
        notices the night would have sent (demo/backflow.py)."""
        try:
            made = demo_backflow_create(as_of=as_of)
        except ApplicationError as exc:
            self.stderr.write(f"backflow registry: {exc}")
            return
        if made:
            self.stdout.write(demo_backflow_words(made))

    def _autopay(self, *, as_of: date) -> None:
        made = demo_autopay_create(as_of=as_of, folder=Path(settings.MEDIA_ROOT) / "demo-files")
        if made is None:
            return
        self.stdout.write(
            f"Demo: autopay on accounts {', '.join(made.enrolled)} (test payments: no money moves); "
            f"{made.due_today} debit(s) due in today's file (a clerk prepares it, a supervisor approves it)"
            + (f"; the bank's returns file for the file made three days ago: {made.returns_path}"
               if made.returns_path else ""))

    def _call(self, name: str, *args: str) -> None:
        try:
            # Verbosity 0: the one-line summary without a progress bar per run.
            call_command(name, *args, verbosity=0, stdout=self.stdout, stderr=self.stderr)
        except CommandError as exc:
            # The demo still serves without these bills; say what failed and carry on.
            self.stderr.write(f"{name} {' '.join(args)}: {exc}")


def _first_days_of_months_before(day: date, months: int) -> list[date]:
    """The 1st of each of the `months` months before `day`'s month, oldest first, and of `day`'s month."""
    firsts = []
    for back in range(months, -1, -1):
        index = day.year * 12 + day.month - 1 - back
        firsts.append(date(index // 12, index % 12 + 1, 1))
    return firsts


def _admin_with_new_password() -> str:
    from axes.utils import reset as axes_reset

    password = secrets.token_urlsafe(12)
    user_model = get_user_model()
    user = user_model.objects.filter(username=ADMIN_USERNAME).first()
    if user is None:
        user_model.objects.create_superuser(ADMIN_USERNAME, email="admin@localhost", password=password)
    else:
        user.is_active = user.is_staff = user.is_superuser = True
        user.set_password(password)
        user.save()
    axes_reset(username=ADMIN_USERNAME)  # earlier failed logins must not lock out the printed password
    return password


# One demo login per shipped role, so a trainee works as the office does: never as the superuser.
STAFF_LOGINS = {"clerk": "Clerk", "supervisor": "Supervisor", "hearing": "Hearing officer",
                "inspector": "Backflow inspector", "crew": "Field crew", "treasurer": "Treasurer",
                "approver": "Approver"}


def _staff_with_new_password() -> str:
    """Each role's demo login, in its group, with one fresh password (printed with the admin's)."""
    from axes.utils import reset as axes_reset
    from django.contrib.auth.models import Group

    password = secrets.token_urlsafe(12)
    user_model = get_user_model()
    for username, role in STAFF_LOGINS.items():
        user, _ = user_model.objects.get_or_create(username=username, defaults={"is_staff": True})
        user.is_active, user.is_staff = True, True
        user.set_password(password)
        user.save()
        user.groups.set([Group.objects.get(name=role)])
        axes_reset(username=username)
    return password


def _spanish_speaking() -> int:
    """Every tenth demo account (numbers ending in 7) speaks Spanish, so bills, notices and the portal are seen in
    Spanish too."""
    return Account.objects.filter(account_no__endswith="7").update(language="es")


def _customer_with_new_password() -> tuple[str, list[str]]:
    """The demo customer's login with a fresh password, and the numbers of the accounts it is linked to: the
    first billed account and, where the demo has one, the account of its open termination case (linked once)."""
    from axes.utils import reset as axes_reset

    from accounts.models import PortalLink
    from termination.models import TerminationCase

    password = secrets.token_urlsafe(12)
    user_model = get_user_model()
    user = user_model.objects.filter(username=CUSTOMER_EMAIL).first()
    if user is None:
        user = user_model.objects.create_user(CUSTOMER_EMAIL, email=CUSTOMER_EMAIL, password=password)
    else:
        user.is_active = True
        user.set_password(password)
        user.save()
    axes_reset(username=CUSTOMER_EMAIL)
    if not PortalLink.objects.filter(user=user).exists():
        billed = Account.objects.filter(bills__isnull=False).order_by("account_no").first()
        case = TerminationCase.objects.filter(status="noticed").select_related("account").first()
        for account in dict.fromkeys(a for a in (billed, case.account if case else None) if a is not None):
            PortalLink.objects.create(user=user, account=account)
    linked = PortalLink.objects.filter(user=user).order_by("linked_at", "pk").values_list("account__account_no",
                                                                                          flat=True)
    return password, list(linked)

