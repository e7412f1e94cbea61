"""Every environment variable the project reads, declared once: its name, its kind, its default, what it means and who
sets it. ``waterbilling/settings.py`` reads each through ``setting(name)``; the table in docs/operations.md and the
environment docker-compose.yml hands the web, the worker and beat are written from here (``manage.py settings_docs
--write``), and tests/test_settings_registry.py fails when settings.py, the doc or the compose file differ from it.

A value is checked by its kind when the process starts, and a wrong one stops it naming the variable and what it
takes (``DATABASE_CONN_MAX_AGE=ten`` is not a whole number). An empty value is the same as none: the default."""

import os
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

# Who sets a variable: the headings of the doc's table, in its order.
EVERY_SITE = "Every site"
MAIL = "E-mail"
TEXTS = "Text messages"
PAYMENTS = "Online payments and the bank"
AUTOPAY = "Autopay (ACH debits)"
TUNING = "Tuning (the defaults suit most villages)"
DEVELOPMENT = "Development and tests"
WHO = (EVERY_SITE, MAIL, TEXTS, PAYMENTS, AUTOPAY, TUNING, DEVELOPMENT)

KINDS = {
    "bool": "1 or 0 (also true/false, yes/no, on/off)",
    "int": "a whole number, 0 or more",
    "float": "a number of seconds, 0 or more",
    "str": "text",
    "list": "comma-separated values",
    "path": "a folder or file path",
    "url": "a database URL (postgres://user:password@host:5432/name)",
    "dollars": "an amount of dollars and cents (1000.00)",
}
TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class Variable:
    name: str
    kind: str  # a key of KINDS
    default: Any  # the value when unset or empty; a callable of the values read before it where it depends on them
    shown: str  # the default as the doc says it
    meaning: str
    who: str  # one of WHO
    compose: str | None = None  # docker-compose.yml's value; None: passed through, with the default's text

    def compose_value(self) -> str:
        if self.compose is not None:
            return self.compose
        return f"${{{self.name}:-{as_text(self.default)}}}"


def as_text(value: Any) -> str:
    """A default as the environment would spell it."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list | tuple):
        return ",".join(value)
    return "" if value is None else str(value)


def _eager(read: Callable[[str], Any]) -> bool:
    return not read("REDIS_URL")


VARIABLES: tuple[Variable, ...] = (
    # --- every site ------------------------------------------------------------------------------------------
    Variable("DJANGO_DEBUG", "bool", False, "`0` (off: production)",
             "`1` for development only (`make run` and the test suite set it): debug pages and a fixed development "
             "`SECRET_KEY`. Off, the app requires `SECRET_KEY` and turns on HTTPS redirect, secure cookies, HSTS, and "
             "hashed static file names; `readiness` refuses a site with it on", EVERY_SITE, compose='"0"'),
    Variable("SECRET_KEY", "str", "", "a fixed development key, only while `DJANGO_DEBUG` is on",
             "Django's signing key (50 or more random characters); production refuses to start without it. Keep it "
             "with the backups", EVERY_SITE,
             compose="${SECRET_KEY:?set SECRET_KEY to 50 or more random characters}"),
    Variable("ALLOWED_HOSTS", "list", ["127.0.0.1", "localhost", "testserver"], "`127.0.0.1,localhost,testserver`",
             "comma-separated host names the site answers to", EVERY_SITE,
             compose="${ALLOWED_HOSTS:?set ALLOWED_HOSTS to the site's host names, comma-separated}"),
    Variable("CSRF_TRUSTED_ORIGINS", "list", [], "empty",
             "comma-separated origins (`https://water.example.org`) trusted for form posts behind a proxy",
             EVERY_SITE),
    Variable("SITE_URL", "str", "http://127.0.0.1:8000", "`http://127.0.0.1:8000`",
             "the site's public address, for links the app writes to itself (bills, e-mails, the processor's return "
             "pages); the readiness page names it when the office reached the site by another address; in "
             "development (`DJANGO_DEBUG=1`) the pay button uses the address the request came in on instead, so a "
             "demo works wherever it runs", EVERY_SITE),
    Variable("TRUSTED_PROXY_COUNT", "int", 0, "`0` (compose: `1`)",
             "how many proxies in front of the site append to `X-Forwarded-For` (1 behind the documented TLS proxy); "
             "throttles and login lockouts key on the client address this gives, never on the proxy's", EVERY_SITE,
             compose="${TRUSTED_PROXY_COUNT:-1}"),
    Variable("DATABASE_URL", "url", f"sqlite:///{BASE_DIR / 'db.sqlite3'}", "`sqlite:///<project>/db.sqlite3`",
             "the database, e.g. `postgres://user:password@host:5432/waterbilling` (a password with URL-special "
             "characters percent-encoded)", EVERY_SITE,
             compose="postgres://waterbilling:${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}@postgres:5432/waterbilling"),
    Variable("REDIS_URL", "str", "", "empty",
             "the Celery broker, e.g. `redis://host:6379/0`, and the cache that counts portal PDF downloads for every "
             "web process; empty runs every task eagerly in-process, and each web process counts on its own",
             EVERY_SITE, compose="redis://redis:6379/0"),
    Variable("MEDIA_ROOT", "path", BASE_DIR / "media", "`<project>/media`",
             "directory for uploaded and generated files (bill PDFs, notices, print files): back it up with the "
             "database", EVERY_SITE, compose="/app/media"),
    Variable("BACKUP_DIR", "str", "", "empty (compose: `/backup`)",
             "the directory the nightly backups are written to, mounted where the site can read it; the readiness "
             "check looks there for a recent dump and the last restore drill (empty: no backups configured)",
             EVERY_SITE, compose="/backup"),
    Variable("SECURE_SSL_REDIRECT", "bool", True, "`1`",
             "production only: redirect HTTP to HTTPS (`0` if the proxy already does)", EVERY_SITE),
    Variable("SECURE_HSTS_SECONDS", "int", 31536000, "`31536000`",
             "production only: HSTS max-age in seconds (subdomains and preload included)", EVERY_SITE),
    Variable("AXES_FAILURE_LIMIT", "int", 5, "`5`",
             "failed logins before a user name is locked out from that address for 15 minutes", EVERY_SITE),
    Variable("LOG_LEVEL", "str", "WARNING", "`WARNING`", "root log level", EVERY_SITE),
    # --- e-mail ----------------------------------------------------------------------------------------------
    Variable("EMAIL_BACKEND", "str", "django.core.mail.backends.console.EmailBackend",
             "`django.core.mail.backends.console.EmailBackend` (compose: SMTP)",
             "Django email backend; `django.core.mail.backends.smtp.EmailBackend` to send", MAIL,
             compose="${EMAIL_BACKEND:-django.core.mail.backends.smtp.EmailBackend}"),
    Variable("EMAIL_HOST", "str", "localhost", "`localhost`", "SMTP server", MAIL),
    Variable("EMAIL_PORT", "int", 25, "`25`", "SMTP port", MAIL),
    Variable("EMAIL_HOST_USER", "str", "", "empty", "SMTP user name", MAIL),
    Variable("EMAIL_HOST_PASSWORD", "str", "", "empty", "SMTP password", MAIL),
    Variable("EMAIL_USE_TLS", "bool", False, "`0`", "`1` for STARTTLS", MAIL),
    Variable("DEFAULT_FROM_EMAIL", "str", "water@localhost", "`water@localhost`", "sender of the utility's emails",
             MAIL),
    Variable("EMAIL_FILE_PATH", "str", "", "empty",
             "the folder `django.core.mail.backends.filebased.EmailBackend` writes each e-mail to (`make run` and "
             "the bench use it)", MAIL),
    Variable("ANYMAIL_WEBHOOK_SECRET", "str", "", "empty",
             "`user:password` the mail provider's tracking webhook (`/anymail/<provider>/tracking/`: bounces and "
             "complaints, which stop e-mail to an address) must be called with; empty: the webhook answers 404 and "
             "hears nothing. `readiness` and `check --deploy` name it on a site that sends real mail without it",
             MAIL),
    # --- text messages ---------------------------------------------------------------------------------------
    Variable("SMS_BACKEND", "str", "notices.sms.ConsoleBackend", "`notices.sms.ConsoleBackend` (compose: Twilio's)",
             "text messages: `notices.sms.TwilioBackend` sends them; `notices.sms.FileBackend` writes each to "
             "`SMS_FILE_PATH`; the console backend prints them, and `readiness` says texts are not sent", TEXTS,
             compose="${SMS_BACKEND:-notices.sms.TwilioBackend}"),
    Variable("SMS_FILE_PATH", "str", str(BASE_DIR / "media" / "texts.jsonl"), "`<project>/media/texts.jsonl`",
             "where `notices.sms.FileBackend` writes each text", TEXTS,
             compose="${SMS_FILE_PATH:-/app/media/texts.jsonl}"),
    Variable("TWILIO_ACCOUNT_SID", "str", "", "empty", "the Twilio account texts are sent from", TEXTS),
    Variable("TWILIO_AUTH_TOKEN", "str", "", "empty",
             "the Twilio auth token: it signs every reply (STOP, START, HELP) and delivery report Twilio sends back; "
             "empty, those webhooks answer 404 (an empty key is one anyone can sign with). With texts on, "
             "`readiness` and `check --deploy` refuse it empty", TEXTS),
    Variable("TWILIO_FROM", "str", "", "empty", "the village's texting number", TEXTS),
    # --- online payments and the bank ------------------------------------------------------------------------
    Variable("STRIPE_SECRET_KEY", "str", "", "empty",
             "the Stripe secret key; with `STRIPE_WEBHOOK_SECRET`, customers pay online on Stripe's hosted page. "
             "Empty: no online payment, and the portal says how to pay by mail or at the office", PAYMENTS),
    Variable("STRIPE_WEBHOOK_SECRET", "str", "", "empty",
             "the signing secret of the webhook endpoint `SITE_URL/pay/webhook/stripe/` (Stripe's dashboard, events "
             "`checkout.session.completed`, `checkout.session.async_payment_succeeded`, "
             "`checkout.session.async_payment_failed`, `checkout.session.expired`, `charge.refunded`, "
             "`charge.dispute.created`, `charge.dispute.closed`, `charge.dispute.funds_reinstated`)", PAYMENTS),
    Variable("STRIPE_API_BASE", "str", "", "empty (Stripe's own)",
             "another address for Stripe's API (the tests point it at their stand-in)", PAYMENTS),
    Variable("PROCESSOR_PAYOUT_DAYS", "int", 4, "`4`",
             "days after an online payment its payout usually reaches the bank; older ones in no payout are listed by "
             "the deposits reconciliation, and an online payment's money counts as cleared after them", PAYMENTS),
    Variable("CHECK_CLEARING_DAYS", "int", 5, "`5`",
             "banking days after a check is taken before its money counts as cleared: until then no refund or "
             "transfer out pays it out", PAYMENTS),
    Variable("EXCEPTION_POST_LIMIT", "dollars", Decimal("1000.00"), "`1000.00`",
             "a payment from the exceptions queue over this amount, or over what its account owes, is posted by a "
             "supervisor", PAYMENTS),
    Variable("DUPLICATE_CHECK_DAYS", "int", 45, "`45`",
             "a lockbox check with the same account, check number and amount as a payment posted within this many "
             "days is held in the exceptions queue as a possible second deposit", PAYMENTS),
    Variable("BANK_BILLPAY_WORDS", "list", ["RPPS", "CHECKFREE", "FISERV", "BILL PAY", "BILLPAY", "BILL PMT",
                                            "BILLPMT"],
             "`RPPS,CHECKFREE,FISERV,BILL PAY,BILLPAY,BILL PMT,BILLPMT`",
             "words in a BAI2 credit's text that name a customer's bank bill-pay service: such a credit posts to the "
             "account its reference names, or goes to the exceptions queue", PAYMENTS),
    # --- autopay ---------------------------------------------------------------------------------------------
    Variable("BANK_ACCOUNT_KEY", "str", "", "empty",
             "the Fernet key (`python -c \"from cryptography.fernet import Fernet; "
             "print(Fernet.generate_key().decode())\"`) that seals autopay bank account numbers; empty: autopay is "
             "not offered. Keep it safe and unchanged: a sealed number opens only with its key", AUTOPAY),
    Variable("ACH_ODFI_ROUTING", "str", "", "empty",
             "the routing number of the village's bank, for the debit file (`ach_export`)", AUTOPAY),
    Variable("ACH_ODFI_NAME", "str", "", "empty", "the village's bank's name, for the debit file", AUTOPAY),
    Variable("ACH_COMPANY_ID", "str", "", "empty",
             "the 10-character company identification the bank assigned the village", AUTOPAY),
    Variable("ACH_COMPANY_NAME", "str", "", "the utility's name",
             "the company name on the debit file (16 characters are used)", AUTOPAY),
    Variable("ACH_CLEARING_DAYS", "int", 2, "`2`",
             "banking days after an autopay debit settles before its money counts as cleared (the R01-R03 and R09 "
             "returns window)", AUTOPAY),
    Variable("ACH_NOTICE_DAYS", "int", 10, "`10`",
             "days before a debit settles that its notice (amount and date) must have gone to the customer (Reg E "
             "§ 1005.10(d): at least 10 for amounts that vary)", AUTOPAY),
    Variable("ACH_REPRESENT_TIMES", "int", 2, "`2`",
             "times a debit returned for insufficient or uncollected funds (R01, R09) is presented again (NACHA: at "
             "most twice, within 180 days of the first settlement)", AUTOPAY),
    Variable("ACH_REPRESENT_AFTER_DAYS", "int", 2, "`2`",
             "days after such a return before it is presented again, at the soonest", AUTOPAY),
    # --- tuning ----------------------------------------------------------------------------------------------
    Variable("DATABASE_CONN_MAX_AGE", "int", 600, "`600`",
             "seconds a web or worker process keeps its database connection for the next request (0: a new "
             "connection each request; behind a connection pooler such as PgBouncer in transaction mode, 0)", TUNING),
    Variable("CELERY_RESULT_BACKEND", "str", "", "empty (none)",
             "where workers store task results; not needed in production (run state lives in PostgreSQL); the worker "
             "tests set it to Redis", TUNING),
    Variable("CELERY_TASK_DEFAULT_QUEUE", "str", "celery", "`celery`",
             "the queue tasks go to and workers take from; gives deployments (or test runs) sharing one Redis their "
             "own queue", TUNING),
    Variable("LONG_WORK_IN_THREAD", "bool", _eager, "on without `REDIS_URL` (compose: `0`)",
             "long work a page starts (a print file, a big report) runs on a thread of the web process, the page "
             "showing its progress; off, it goes to a worker. On only where there is no worker", TUNING,
             compose="${LONG_WORK_IN_THREAD:-0}"),
    Variable("REPORT_FILES_FROM_ACCOUNTS", "int", 5_000, "`5000`",
             "from this many accounts, a report downloaded from the Reports page is made in the background and "
             "listed there until ready (a 100,000-account aging takes a minute or more)", TUNING),
    Variable("BILLING_CHUNK_LEASE_SECONDS", "int", 300, "`300`",
             "how long a worker holds a billing-run chunk (about 1,000 accounts, a second or two of work); a chunk "
             "not done by then is handed to another worker", TUNING),
    Variable("BILLING_CHUNK_ATTEMPTS", "int", 3, "`3`", "times a chunk is taken before its run is failed", TUNING),
    Variable("BILLING_FAST_PATHS", "bool", True, "`1`",
             "`0` turns off every shortcut of the hot paths (`billing/fast_paths.py`: a penalty scheme's own "
             "shortcuts, carrying unchanged accounts forward from the last night, kept standings): every figure from "
             "a full replay of the ledger, the same books, slower. For telling a wrong figure from a wrong shortcut; "
             "the nightly job also checks a sample of kept standings against a full replay every night "
             "(`standings_differing` in its report, and an error in the log)", TUNING),
    Variable("NIGHTLY_RUN_WAIT_SECONDS", "float", 1800.0, "`1800`",
             "how long the nightly job waits for the workers to bill the day's run before going on to penalties",
             TUNING),
    Variable("BILL_PDFS_ON_ISSUE", "bool", lambda read: bool(read("REDIS_URL")), "on when `REDIS_URL` is set",
             "render and store each bill's PDF (in worker tasks) as soon as a run issues it; off, the nightly job "
             "renders what is pending and a PDF asked for earlier is rendered on demand and stored (the same bytes "
             "either way)", TUNING, compose="${BILL_PDFS_ON_ISSUE:-1}"),
    Variable("IMPORT_MAX_UPLOAD_BYTES", "int", 20 * 1024 * 1024, "`20971520` (20 MB)",
             "the largest CSV file an upload page takes", TUNING),
    Variable("IMPORT_BACKGROUND_BYTES", "int", 1024 * 1024, "`1048576` (1 MB)",
             "an uploaded CSV file larger than this is imported by a worker, with a progress page, instead of inside "
             "the request", TUNING),
    Variable("IMPORT_ERRORS_LISTED", "int", 200, "`200`",
             "how many of a rejected file's (or API request's) errors are listed; the rest are counted", TUNING),
    Variable("READ_MAPPINGS_DIR", "path", BASE_DIR / "fixtures" / "readfiles", "`<project>/fixtures/readfiles`",
             "the folder of meter systems' read-file mappings ([readings.md](readings.md)); an office that sets its "
             "own sees only the mappings there", TUNING, compose="${READ_MAPPINGS_DIR:-/app/fixtures/readfiles}"),
    Variable("CONTINUOUS_FLOW_DAYS", "int", 7, "`7`",
             "daily reads: days with no day down to the account's floor before continuous flow (a leak) is "
             "flagged", TUNING),
    Variable("CONTINUOUS_FLOW_MARGIN_GALLONS", "int", 100, "`100`",
             "daily reads: the floor is the account's lowest day in the 30 before plus the larger of this margin and "
             "that lowest day again", TUNING),
    # --- development and tests -------------------------------------------------------------------------------
    Variable("TEST_PAYMENTS", "bool", False, "`0`",
             "development and training only (`make run` sets it; refused with `DJANGO_DEBUG` off): the app's own "
             "stand-in for the processor and, unless given, a made-up bank key and bank, so a demo pays online and "
             "makes the debit file; every page says no money moves", DEVELOPMENT, compose='"0"'),
)
BY_NAME = {variable.name: variable for variable in VARIABLES}


def _parse(variable: Variable, raw: str) -> Any:
    text = raw.strip()
    kind = variable.kind
    try:
        if kind == "bool":
            if text.lower() in TRUE:
                return True
            if text.lower() in FALSE:
                return False
            raise ValueError
        if kind == "int":
            value = int(text)
            if value < 0:
                raise ValueError
            return value
        if kind == "float":
            value = float(text)
            if not value >= 0 or value == float("inf"):
                raise ValueError
            return value
        if kind == "list":
            return [part.strip() for part in text.split(",") if part.strip()]
        if kind == "path":
            return Path(text)
        if kind == "url":
            if text.split("://", 1)[0] not in environ.Env.DB_SCHEMES:
                raise ValueError
            return environ.Env.db_url_config(text)
        if kind == "dollars":
            value = Decimal(text)
            if not value.is_finite() or value < 0 or value != value.quantize(Decimal("0.01")):
                raise ValueError
            return value
        return raw
    except (ValueError, InvalidOperation, ArithmeticError, KeyError):
        raise ImproperlyConfigured(f"{variable.name}={raw!r} is not {KINDS[kind]}") from None


class Environment:
    """The variables as this process's environment gives them, read in the registry's terms."""

    def __init__(self, environ_: dict[str, str] | None = None):
        self.environ = os.environ if environ_ is None else environ_
        self.read: dict[str, Any] = {}

    def __call__(self, name: str) -> Any:
        if name in self.read:
            return self.read[name]
        variable = BY_NAME.get(name)
        if variable is None:
            raise ImproperlyConfigured(f"{name} is not in waterbilling/environment.py: declare it there first")
        raw = self.environ.get(name, "")
        if raw.strip():
            value = _parse(variable, raw)
        else:
            value = variable.default(self) if callable(variable.default) else variable.default
            if variable.kind == "url":
                value = environ.Env.db_url_config(value)
        self.read[name] = value
        return value



# --- what is written from the registry ----------------------------------------------------------------------

def operations_table() -> str:
    """The table of docs/operations.md: every variable, by who sets it."""
    lines = []
    for who in WHO:
        lines += [f"**{who}**", "", "| variable | default | meaning |", "|---|---|---|"]
        lines += [f"| `{v.name}` | {v.shown} | {v.meaning} |" for v in VARIABLES if v.who == who]
        lines.append("")
    return "\n".join(lines)


def compose_environment() -> str:
    """The ``x-app-environment`` block of docker-compose.yml: every variable, as compose passes it."""
    lines = ["x-app-environment: &app-environment"]
    for who in WHO:
        lines.append(f"  # {who}")
        lines += [f"  {v.name}: {v.compose_value()}" for v in VARIABLES if v.who == who]
    return "\n".join(lines) + "\n"
