"""``check --deploy``: a production site that sends real mail or texts must be able to tell its providers' events
from forgeries (``notices.webhooks``), and texts need their whole account."""

from django.conf import settings
from django.core.checks import Error, Tags, register

from notices.webhooks import mail_webhooks_on

TEST_EMAIL = ("console", "filebased", "locmem", "dummy")


def mail_backend_name() -> str:
    """The e-mail backend's short name: smtp, console, filebased, locmem, dummy, or a provider's."""
    backend = settings.EMAIL_BACKEND
    return backend.rsplit(".", 2)[-2] if "." in backend else backend


def sends_real_mail() -> bool:
    return mail_backend_name() not in TEST_EMAIL


def sends_real_texts() -> bool:
    return settings.SMS_BACKEND.endswith("TwilioBackend")


def provider_problems() -> list[tuple[str, str, str]]:
    """(setting, what is wrong, what to do) for the mail and text providers as configured."""
    found = []
    if sends_real_mail() and not mail_webhooks_on():
        found.append(("ANYMAIL_WEBHOOK_SECRET", "e-mail is sent but the mail provider's bounces and complaints are "
                      "not heard: its webhook is off without ANYMAIL_WEBHOOK_SECRET",
                      "set ANYMAIL_WEBHOOK_SECRET (user:password) and give the provider the webhook address with it "
                      "(docs/operations.md)"))
    if sends_real_texts():
        for name in ("TWILIO_ACCOUNT_SID", "TWILIO_AUTH_TOKEN", "TWILIO_FROM"):
            if not getattr(settings, name):
                found.append((name, f"texts are on (SMS_BACKEND is Twilio's) but {name} is empty" + (
                    ": replies (STOP) and delivery reports could be forged, so Twilio's webhooks are off"
                    if name == "TWILIO_AUTH_TOKEN" else ""), f"set {name} from the Twilio console "
                                                             "(docs/operations.md)"))
    return found


@register(Tags.security, deploy=True)
def providers_check(app_configs, **kwargs) -> list[Error]:
    if settings.DEBUG:
        return []
    return [Error(what, hint=fix, id=f"waterbilling.E{100 + n}")
            for n, (_name, what, fix) in enumerate(provider_problems())]
