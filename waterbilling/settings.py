"""Settings, read from the environment with safe embedded defaults.

Debugging is off unless asked for: ``DJANGO_DEBUG=1`` turns it on for development (``make run`` and the
test suite ask for it), and only then is a fixed development ``SECRET_KEY`` allowed. With it off — the
default, production — the app refuses to start without ``SECRET_KEY``, redirects to HTTPS and keeps its
cookies secure. With no ``DATABASE_URL`` or ``REDIS_URL`` the app runs embedded: SQLite in ``db.sqlite3``
and Celery tasks executed eagerly in-process; ``DATABASE_URL`` switches to PostgreSQL, ``REDIS_URL`` to a
real broker.
"""

import base64
import hashlib
from pathlib import Path

import csp.constants as csp
from django.core.exceptions import ImproperlyConfigured

from waterbilling.environment import Environment

BASE_DIR = Path(__file__).resolve().parent.parent

# Every variable read here is declared in waterbilling/environment.py (its kind, default and meaning; the docs'
# table and the compose file are written from there) and checked by its kind as the process starts.
setting = Environment()


DEBUG = setting("DJANGO_DEBUG")
SECRET_KEY = setting("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DJANGO_DEBUG is off (production, the default); for development set "
            "DJANGO_DEBUG=1, as `make run` does.")
    SECRET_KEY = "insecure-development-key-only-for-the-embedded-default-never-in-production"

ALLOWED_HOSTS = setting("ALLOWED_HOSTS")
CSRF_TRUSTED_ORIGINS = setting("CSRF_TRUSTED_ORIGINS")

# One date format for people (waterbilling/formats/en): "Feb 1, 2026", as bills and notices print it.
FORMAT_MODULE_PATH = ["waterbilling.formats"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "djmoney",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "django_celery_beat",
    "simple_history",
    "axes",
    "core",
    "ordinance",
    "accounts",
    "meters",
    "billing",
    "termination",
    "backflow",
    "reports",
    "portal",
    "demo",
    "conversion",
    "remittance",
    "arrears",
    "notices",
    "anymail",  # the mail provider's tracking webhooks (bounces, complaints) reach notices
    "office",
    "fieldwork",
    # Last: the composition root: its admin module puts together pages from the apps' parts; the nightly
    # job's command and task.
    "waterbilling",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "core.middleware.RefuseNulMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "portal.middleware.CustomerLanguageMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "waterbilling.urls"
WSGI_APPLICATION = "waterbilling.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "remittance.context_processors.test_payments",
            ],
        },
    },
]

DATABASES = {"default": setting("DATABASE_URL")}
# Each web process keeps its connection between requests (checked before reuse): opening one costs PostgreSQL a
# new backend that must load its catalog again, many times what a portal page's queries cost.
DATABASES["default"]["CONN_MAX_AGE"] = setting("DATABASE_CONN_MAX_AGE")
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Billing runs write in bursts; wait for the lock rather than fail.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 30
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# How many proxies in front of the site append to X-Forwarded-For (waterbilling/net.py); 0 = none, and
# REMOTE_ADDR is the client. Throttles and lockouts key on the client address this gives.
TRUSTED_PROXY_COUNT = setting("TRUSTED_PROXY_COUNT")

# Login throttling: five failures lock the username from that client address for 15 minutes (the
# username alone would let anyone lock out anyone, the admin included).
AXES_CLIENT_IP_CALLABLE = "core.net.client_ip"
AXES_FAILURE_LIMIT = setting("AXES_FAILURE_LIMIT")
AXES_COOLOFF_TIME = 0.25
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "portal/locked_out.html"

LANGUAGE_CODE = "en"
# The customer's languages: an account's ``language`` (its bills), the portal's (portal.middleware: the admin
# and the API stay in English). Catalogs: locale/<lang>/LC_MESSAGES/django.po (compiled .mo beside it); dates:
# waterbilling/formats.
LANGUAGES = [("en", "English"), ("es", "Español")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "America/New_York"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
MEDIA_URL = "media/"
MEDIA_ROOT = setting("MEDIA_ROOT")
# Where the nightly backups are written (docs/operations.md): the readiness check looks there for a recent database
# dump and for the last restore drill (``control_totals --compare`` records it there when it ties out). Empty: no
# backups configured.
BACKUP_DIR = setting("BACKUP_DIR")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

DEFAULT_CURRENCY = "USD"
CURRENCIES = ("USD",)

# Celery: a real broker when REDIS_URL is set; otherwise tasks run eagerly in-process.
REDIS_URL = setting("REDIS_URL")
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
# No result backend by default: run state lives in PostgreSQL. A worker that must report results (the
# test probe of a real worker) is given one through the environment.
CELERY_RESULT_BACKEND = setting("CELERY_RESULT_BACKEND") or None
# Deployments (or test runs) sharing one Redis keep their tasks apart with their own default queue.
CELERY_TASK_DEFAULT_QUEUE = setting("CELERY_TASK_DEFAULT_QUEUE") or "celery"
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
# Without a worker, long work a page starts (a print file) runs on a thread of its own: the page answers at once
# and shows the progress (core.background).
LONG_WORK_IN_THREAD = setting("LONG_WORK_IN_THREAD")
# A report downloaded from the Reports page is made in the background, and listed there until ready, in a village
# of this many accounts or more (a 100,000-account aging takes a minute or more).
REPORT_FILES_FROM_ACCOUNTS = setting("REPORT_FILES_FROM_ACCOUNTS")
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TIMEZONE = TIME_ZONE
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Beat copies this into its database schedule at start: hands on the chunks of runs whose worker is gone.
CELERY_BEAT_SCHEDULE = {"billing-runs-sweep": {"task": "billing.tasks.billing_runs_sweep", "schedule": 60.0}}
# A worker holds a billing-run chunk (about 1,000 accounts, a second or two of work) for this long; a
# chunk not done by then is handed to another worker, at most this many attempts before the run fails.
BILLING_CHUNK_LEASE_SECONDS = setting("BILLING_CHUNK_LEASE_SECONDS")
BILLING_CHUNK_ATTEMPTS = setting("BILLING_CHUNK_ATTEMPTS")
# The shortcuts the hot paths take (``billing.fast_paths``): off, every balance and late charge is replayed from
# the whole ledger, to tell a wrong figure from a wrong shortcut. The books are the same either way.
BILLING_FAST_PATHS = setting("BILLING_FAST_PATHS")
# The nightly job waits this long for the workers to bill the day's run before going on to penalties.
NIGHTLY_RUN_WAIT_SECONDS = setting("NIGHTLY_RUN_WAIT_SECONDS")
# The cache holds short-lived counters (the portal's download limit): in Redis when there is one, so every
# web process counts together, apart from other deployments on that Redis by the queue's name; else in
# each process's memory.
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                          "KEY_PREFIX": f"waterbilling:{CELERY_TASK_DEFAULT_QUEUE}"}}
    # Sessions read from that shared cache, the database behind it: a page is spared its session query, and
    # signing out (which clears both) holds in every process.
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# Render bill PDFs as soon as a run issues them (workers do it); run eagerly, the nightly job renders them.
BILL_PDFS_ON_ISSUE = setting("BILL_PDFS_ON_ISSUE")

# CSV upload pages: the largest file taken, the size from which a worker imports it (the page shows its
# progress) instead of the web request, and how many of a rejected file's errors are listed.
IMPORT_MAX_UPLOAD_BYTES = setting("IMPORT_MAX_UPLOAD_BYTES")
IMPORT_BACKGROUND_BYTES = setting("IMPORT_BACKGROUND_BYTES")
IMPORT_ERRORS_LISTED = setting("IMPORT_ERRORS_LISTED")
# Meter systems' read files: where their mappings are (the shipped ones by default; a village adds its own), and
# continuous flow in daily reads: this many days with no day down to the account's floor (its lowest day in the 30
# before, plus the larger of this margin and that lowest day again).
READ_MAPPINGS_DIR = setting("READ_MAPPINGS_DIR")
CONTINUOUS_FLOW_DAYS = setting("CONTINUOUS_FLOW_DAYS")
CONTINUOUS_FLOW_MARGIN_GALLONS = setting("CONTINUOUS_FLOW_MARGIN_GALLONS")

REST_FRAMEWORK = {
    # Token first: a call without credentials is answered 401 with `WWW-Authenticate: Token`.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["core.permissions.StaffModelPermissions"],
    # JSON in: the bulk endpoints take lists, which a form cannot carry.
    "DEFAULT_PARSER_CLASSES": ["core.api.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "core.schema.ApiSchema",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "waterbilling API",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # A text field that refuses blanks says so (minLength 1).
    "ENFORCE_NON_BLANK_FIELDS": True,
    # Choice sets that more than one app's fields share a name ("status", "type"), named once each.
    "ENUM_NAME_OVERRIDES": {
        "BackflowDeviceTypeEnum": "backflow.models.Device.Type",
        "BackflowDeviceStatusEnum": "backflow.models.Device.Status",
        "BackflowTestResultEnum": "backflow.models.DeviceTest.Result",
        "BackflowTestStatusEnum": "backflow.models.DeviceTest.Status",
    },
}

EMAIL_BACKEND = setting("EMAIL_BACKEND")
# The folder the file backend (django.core.mail.backends.filebased.EmailBackend) writes each e-mail to.
EMAIL_FILE_PATH = setting("EMAIL_FILE_PATH") or None
EMAIL_HOST = setting("EMAIL_HOST")
EMAIL_PORT = setting("EMAIL_PORT")
EMAIL_HOST_USER = setting("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = setting("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = setting("EMAIL_USE_TLS")
DEFAULT_FROM_EMAIL = setting("DEFAULT_FROM_EMAIL")

LOGIN_URL = "portal:login"
SITE_URL = setting("SITE_URL")
# Text messages (notices.sms): the console in development; Twilio in production (its number and credentials).
SMS_BACKEND = setting("SMS_BACKEND")
SMS_FILE_PATH = setting("SMS_FILE_PATH")
TWILIO_ACCOUNT_SID = setting("TWILIO_ACCOUNT_SID")
TWILIO_AUTH_TOKEN = setting("TWILIO_AUTH_TOKEN")
TWILIO_FROM = setting("TWILIO_FROM")
# The mail provider's tracking webhooks (django-anymail): the shared secret they are called with ("user:password").
ANYMAIL = {"WEBHOOK_SECRET": setting("ANYMAIL_WEBHOOK_SECRET")}
# No notice goes between these hours, local time (from, until): one decided then waits for the morning.
NOTICES_QUIET_HOURS = (21, 8)

# Online payment (remittance.processors): without both keys no processor is configured and the portal says how to
# pay by mail or at the office. STRIPE_API_BASE sends the client elsewhere (the tests' stand-in for Stripe).
STRIPE_SECRET_KEY = setting("STRIPE_SECRET_KEY")
STRIPE_WEBHOOK_SECRET = setting("STRIPE_WEBHOOK_SECRET")
STRIPE_API_BASE = setting("STRIPE_API_BASE")
# How many days after a payment the processor's payout usually reaches the bank (Stripe's US standard: 2 business
# days): an online payment posted longer ago and in no payout is listed by the deposits reconciliation.
PROCESSOR_PAYOUT_DAYS = setting("PROCESSOR_PAYOUT_DAYS")
# Cleared funds (billing.clearing): a payment's money counts as the village's to pay out again (a refund, a transfer
# out) only once it can no longer come back: a check CHECK_CLEARING_DAYS banking days after it was taken, an autopay
# debit ACH_CLEARING_DAYS banking days after it settled (the window for R01-R03 and R09 returns), a card or online
# payment PROCESSOR_PAYOUT_DAYS after it was paid; cash at once.
CHECK_CLEARING_DAYS = setting("CHECK_CLEARING_DAYS")
ACH_CLEARING_DAYS = setting("ACH_CLEARING_DAYS")
# A lockbox check with the same account, check number and amount as a payment posted this many days before it is
# held in the exceptions queue as a possible second deposit of the same check (remittance.lockbox).
DUPLICATE_CHECK_DAYS = setting("DUPLICATE_CHECK_DAYS")
# A payment from the exceptions queue over this amount, or over what its account owes, is posted by a supervisor
# (remittance.lockbox.exception_post): its excess would stand as a credit that could be refunded.
EXCEPTION_POST_LIMIT = setting("EXCEPTION_POST_LIMIT")

# Autopay by ACH debit (remittance.autopay): the key that seals customers' bank account numbers (a Fernet key:
# 32 url-safe base64 bytes; without it autopay is not offered), and the village's bank and company as its bank
# assigned them for the debit file.
BANK_ACCOUNT_KEY = setting("BANK_ACCOUNT_KEY")
ACH_ODFI_ROUTING = setting("ACH_ODFI_ROUTING")
ACH_ODFI_NAME = setting("ACH_ODFI_NAME")
ACH_COMPANY_ID = setting("ACH_COMPANY_ID")
ACH_COMPANY_NAME = setting("ACH_COMPANY_NAME")
# The office's debit policy: how many days before a debit settles its notice (amount and date) must have gone to
# the customer (Reg E § 1005.10(d): at least 10 for amounts that vary); how many times a debit returned for
# insufficient or uncollected funds (R01, R09) is presented again (NACHA: at most twice, within 180 days of the
# first settlement), and how many days after the return, at the soonest.
ACH_NOTICE_DAYS = setting("ACH_NOTICE_DAYS")
ACH_REPRESENT_TIMES = setting("ACH_REPRESENT_TIMES")
ACH_REPRESENT_AFTER_DAYS = setting("ACH_REPRESENT_AFTER_DAYS")
# Test payments, for development and training only (``make run`` turns them on): the app's own stand-in for the
# processor (remittance.test_processor: its checkout page says "Test payments — no money moves") and, unless given,
# a bank key and a bank made up for the demo, so a trainee pays online, enrols in autopay, makes the debit file and
# reads a returns file. Refused with debugging off: a live office never takes test payments.
TEST_PAYMENTS = setting("TEST_PAYMENTS")
if TEST_PAYMENTS:
    if not DEBUG:
        raise ImproperlyConfigured("TEST_PAYMENTS is for development only (DJANGO_DEBUG=1): a live office takes no "
                                   "test payments; configure a processor (STRIPE_*) and the bank (BANK_*, ACH_*)")
    BANK_ACCOUNT_KEY = BANK_ACCOUNT_KEY or base64.urlsafe_b64encode(
        hashlib.sha256(f"test bank key:{SECRET_KEY}".encode()).digest()).decode()
    ACH_ODFI_ROUTING = ACH_ODFI_ROUTING or "011000015"
    ACH_ODFI_NAME = ACH_ODFI_NAME or "TEST BANK"
    ACH_COMPANY_ID = ACH_COMPANY_ID or "9999999999"
    ACH_COMPANY_NAME = ACH_COMPANY_NAME or "TEST VILLAGE"
# The words in a bank's BAI2 credit that name a customer's bank bill-pay service: such a credit is posted to the
# account its reference names (remittance.bank_report), or goes to the exceptions queue.
BANK_BILLPAY_WORDS = setting("BANK_BILLPAY_WORDS")

# The Content-Security-Policy of every page (django-csp): scripts only from this site (or, should a page ever need
# an inline script, one carrying the request's nonce: <script nonce="{{ request.csp_nonce }}">); no plug-ins; no
# framing; images, fonts and fetches from this site only. Inline style attributes stay allowed (the admin's own
# widgets set them), and forms may post on to the processor's checkout. A violation is refused by the browser and
# logged in its console; tests/core/test_csp_browser.py walks the pages to keep that number at zero.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp.SELF],
        "script-src": [csp.SELF, csp.NONCE],
        "style-src": [csp.SELF, csp.UNSAFE_INLINE],
        "img-src": [csp.SELF, "data:"],
        "font-src": [csp.SELF],
        "connect-src": [csp.SELF],
        "object-src": [csp.NONE],
        "base-uri": [csp.SELF],
        "frame-ancestors": [csp.NONE],
    },
}

# Production hardening: secure, HTTP-only, SameSite cookies and HSTS.
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
if not DEBUG:
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_SSL_REDIRECT = setting("SECURE_SSL_REDIRECT")
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_HSTS_SECONDS = setting("SECURE_HSTS_SECONDS")
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": setting("LOG_LEVEL")},
    # A worker logs at INFO: WeasyPrint's and fontTools' steps of every PDF would fill its log.
    "loggers": {"weasyprint": {"level": "WARNING"}, "fontTools": {"level": "WARNING"}},
}
