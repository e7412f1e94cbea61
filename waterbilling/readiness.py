"""Go-live readiness: everything still sample, default or missing that a live office must settle before its first
real bill, each with what to do and where. ``manage.py readiness`` prints it; the admin's *Go-live readiness* page
(the Supervisor's) shows it. An empty list is a site ready to go live.

It reads what is installed and configured, never changes it."""

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

from django.conf import settings
from django.contrib.auth.models import Group
from django.utils import timezone

from accounts.models import Account
from accounts.roles import ROLE_PERMISSIONS
from billing.models import Fee, RateSchedule
from billing.services.returned import RETURNED_FEE_CODES
from core.db import database_identity
from core.models import NightlyRun
from demo.village import HISTORY_REASON
from ordinance.models import Utility
from ordinance.selectors import installed_utility, section_params

from .checks import mail_backend_name, provider_problems, sends_real_mail, sends_real_texts

LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0", "::1", "testserver")
BEAT_SEEN_HOURS = 24


@dataclass(frozen=True)
class Finding:
    area: str
    what: str  # what is still sample, default or missing
    fix: str  # what to do, and where


def readiness_findings(*, now: datetime | None = None) -> list[Finding]:
    now = now or timezone.now()
    found: list[Finding] = []
    utility = installed_utility()
    if utility is None:
        return [Finding("Ordinance", "no preset is installed", "run `manage.py setup_utility PRESET`")]
    found += _ordinance(utility, now)
    found += _money(utility)
    found += _mail_and_site()
    found += _channels()
    found += _office(now)
    found += _backups(now)
    return found


BACKUP_DAYS = 2  # a nightly dump older than this is a backup that stopped
DRILL_RECORD = "restore-drill.json"  # in BACKUP_DIR: the last restore drill that tied out (``control_totals``)
DRILL_DAYS = 90  # a restore drill at least this often


def _backups(now: datetime) -> list[Finding]:
    """A recent database dump in ``BACKUP_DIR`` and a restore drill that tied out in the last 90 days."""
    if not settings.BACKUP_DIR:
        return [Finding("Backups", "no backups are configured (BACKUP_DIR is empty)",
                        "back up the database and the stored PDFs every night into BACKUP_DIR (docs/operations.md, "
                        "Backups and the restore drill)")]
    folder = Path(settings.BACKUP_DIR)
    out = []
    dumps = [p.stat().st_mtime for p in folder.rglob("*.dump")] if folder.is_dir() else []
    if not dumps or datetime.fromtimestamp(max(dumps), tz=UTC) < now - timedelta(days=BACKUP_DAYS):
        out.append(Finding("Backups", f"no database dump in {folder} from the last {BACKUP_DAYS} days",
                           "check the nightly pg_dump (docs/operations.md)"))
    out += _drill(folder / DRILL_RECORD, now)
    return out


def _drill(path: Path, now: datetime) -> list[Finding]:
    """The last restore drill: within DRILL_DAYS, saying which database it compared and the dump it came from, and
    run on a restored copy — not on this, the live database (its identity, ``core.db.database_identity``)."""
    again = ("restore last night's dump into a fresh database and run control_totals --compare … --dump DUMP there "
             "(docs/operations.md, the restore drill)")
    if not path.is_file() or datetime.fromtimestamp(path.stat().st_mtime, tz=UTC) < now - timedelta(days=DRILL_DAYS):
        return [Finding("Backups", f"no restore drill has tied out in the last {DRILL_DAYS} days", again)]
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        compared, dump = record["database"]["identity"], record["dump"]
    except (OSError, ValueError, KeyError, TypeError):
        return [Finding("Backups", f"the restore drill's record ({path}) does not say which database it compared "
                                   "and the dump it was restored from", again)]
    if not dump:
        return [Finding("Backups", "the last restore drill names no dump it was restored from", again)]
    if compared == database_identity():
        return [Finding("Backups", "the last restore drill compared the live database, not a copy restored from a "
                                   "dump: it proves no restore", again)]
    return []


def _ordinance(utility: Utility, now: datetime) -> list[Finding]:
    out = []
    today = timezone.localdate(now)
    schedule = RateSchedule.objects.filter(effective_on__lte=today).order_by("-effective_on").first()
    if schedule is None:
        out.append(Finding("Ordinance", "no rate schedule is in force today",
                           "import the adopted rates (Rate schedules › Import OWRS, or the preset file)"))
    elif schedule.is_sample:
        out.append(Finding("Ordinance", f"the rate schedule in force (from {schedule.effective_on}) holds the "
                                        "preset's sample rates", "enter the rates the board adopted (Rate schedules)"))
    if utility.is_demo_site:
        out.append(Finding("Ordinance", "the site is marked as a demo or training site (billing on sample rates "
                                        "allowed)", "untick *demo site* on the Utility page"))
    return out


def _money(utility: Utility) -> list[Finding]:
    out = []
    if utility.returned_payment_fee <= 0 and not Fee.objects.filter(code__in=RETURNED_FEE_CODES).exists():
        out.append(Finding("Money", "a returned check or debit charges no fee (returned-payment fee 0.00)",
                           "set the board's returned-payment fee on the Utility page (0.00 is right only if the "
                           "village charges none)"))
    if not section_params("gl", installed=utility).get("confirmed"):
        out.append(Finding("Money", "the general ledger codes are the Uniform System's defaults, not confirmed by "
                                    "the treasurer", "write the village's codes in the preset file's [gl] table with "
                                                     "confirmed = true and install it (setup_utility --file PATH "
                                                     "--effective DATE; docs/presets.md)"))
    return out


def _mail_and_site() -> list[Finding]:
    out = []
    if settings.DEBUG:
        out.append(Finding("Site", "debugging is on (DJANGO_DEBUG): an error shows the code and the settings to "
                                   "whoever meets it, and a fixed development key signs the sessions",
                           "unset DJANGO_DEBUG (off is production, the default) and set SECRET_KEY "
                           "(docs/operations.md)"))
    backend = mail_backend_name()
    if not sends_real_mail():
        out.append(Finding("Mail", f"e-mail is not sent: the {backend} backend keeps it here",
                           "set EMAIL_BACKEND to django.core.mail.backends.smtp.EmailBackend and EMAIL_HOST "
                           "(docs/operations.md)"))
    if not sends_real_texts():
        out.append(Finding("Texts", f"texts are not sent: the {settings.SMS_BACKEND.rsplit('.', 1)[-1]} keeps them "
                                    "here, while the portal offers customers their notices by text",
                           "set SMS_BACKEND to notices.sms.TwilioBackend with TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN "
                           "and TWILIO_FROM (docs/operations.md)"))
    out += [Finding("Texts" if name.startswith("TWILIO") else "Mail", what, fix)
            for name, what, fix in provider_problems()]
    site = urlparse(settings.SITE_URL)
    if site.hostname in LOCAL_HOSTS or site.scheme != "https":
        out.append(Finding("Site", f"the address printed on bills and e-mails is {settings.SITE_URL}",
                           "set SITE_URL to the portal's public https address (docs/operations.md)"))
    return out


def _channels() -> list[Finding]:
    out = []
    if settings.TEST_PAYMENTS:
        out.append(Finding("Payments", "test payments are on (TEST_PAYMENTS): online payments go to this site's own "
                                       "test checkout, and the bank key and the bank for autopay are made up — no "
                                       "money moves", "turn TEST_PAYMENTS off and set the processor's keys "
                                                      "(STRIPE_*) and the bank's (BANK_ACCOUNT_KEY, ACH_*): "
                                                      "docs/payments.md"))
        return out
    stripe = [bool(settings.STRIPE_SECRET_KEY), bool(settings.STRIPE_WEBHOOK_SECRET)]
    if any(stripe) and not all(stripe):
        missing = "STRIPE_WEBHOOK_SECRET" if stripe[0] else "STRIPE_SECRET_KEY"
        out.append(Finding("Payments", f"online payment is half set up: {missing} is missing, so the portal says "
                                       "pay by mail", f"set {missing} (docs/payments.md)"))
    ach = {"ACH_ODFI_ROUTING": settings.ACH_ODFI_ROUTING, "ACH_ODFI_NAME": settings.ACH_ODFI_NAME,
           "ACH_COMPANY_ID": settings.ACH_COMPANY_ID, "ACH_COMPANY_NAME": settings.ACH_COMPANY_NAME}
    if settings.BANK_ACCOUNT_KEY or any(ach.values()):
        missing = [name for name, value in {"BANK_ACCOUNT_KEY": settings.BANK_ACCOUNT_KEY, **ach}.items()
                   if not value]
        if missing:
            out.append(Finding("Payments", f"autopay is half set up: {', '.join(missing)} missing, so autopay is "
                                           "not offered", "set them from the bank's ACH agreement "
                                                          "(docs/payments.md)"))
    if settings.STRIPE_SECRET_KEY.startswith("sk_test_"):
        out.append(Finding("Payments", "the processor key is a test key: no money moves",
                           "set the live key from the processor's dashboard"))
    return out


def _office(now: datetime) -> list[Finding]:
    out = []
    if Account.history.filter(history_change_reason=HISTORY_REASON).exists():
        out.append(Finding("Accounts", "demo accounts are present", "start from an empty database, or remove them "
                                                                   "before the conversion (docs/conversion.md)"))
    empty = [name for name in ROLE_PERMISSIONS
             if not Group.objects.filter(name=name, user__is_active=True).exists()]
    if empty:
        out.append(Finding("Staff", f"no one is in {', '.join(empty)}", "put each member of staff in the group of "
                                                                        "their job (Users; docs/roles.md)"))
    last = NightlyRun.objects.order_by("-started_at").values_list("started_at", flat=True).first()
    if last is None or last < now - timedelta(hours=BEAT_SEEN_HOURS):
        seen = f"last on {timezone.localtime(last):%b %-d, %Y %H:%M}" if last else "never"
        out.append(Finding("Nightly job", f"the nightly job has not run in {BEAT_SEEN_HOURS} hours ({seen})",
                           "start Celery beat and a worker (docs/operations.md)"))
    return out
