"""Webhooks only from the provider: without its secret a webhook answers 404 and changes nothing; with it, a call
that does not carry it is refused. A forged bounce and a forged STOP change nothing. A production site that sends
real mail or texts without the secrets is named by ``readiness`` and fails ``check --deploy``."""

import base64
import json

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.urls import reverse

from notices.models import NoticePreference, TextConsent
from tests.notices.test_text_messages import NUMBER, choose, signed_in, twilio_post  # noqa: F401

pytestmark = pytest.mark.django_db
BOUNCE = {"RecordType": "Bounce", "Type": "HardBounce", "TypeCode": 1, "Email": "dora@example.org",
          "BouncedAt": "2026-12-01T10:00:00Z", "Description": "forged", "MessageID": "00000000-0000-0000-0000-0",
          "ID": 1, "Tag": "", "Details": "", "Inactive": True, "CanActivate": True, "Subject": "x"}


def bounce(client, auth: str | None = None):
    headers = {"HTTP_AUTHORIZATION": "Basic " + base64.b64encode(auth.encode()).decode()} if auth else {}
    return client.post("/anymail/postmark/tracking/", json.dumps(BOUNCE), content_type="application/json", **headers)


def emails_off(account) -> list:
    preference = NoticePreference.objects.filter(account=account).first()
    return preference.emails_off if preference else []


def test_a_forged_bounce_changes_nothing(signed_in, settings):  # noqa: F811
    client, account = signed_in
    client.logout()
    settings.ANYMAIL = {"WEBHOOK_SECRET": ""}
    assert bounce(client).status_code == 404  # no secret: the webhook is off
    settings.ANYMAIL = {"WEBHOOK_SECRET": "postmark:s3cret-words"}
    assert bounce(client).status_code in (400, 401, 403)
    assert bounce(client, "postmark:guessed").status_code in (400, 401, 403)
    assert emails_off(account) == []
    # The provider's own call, with the secret, is heard.
    assert bounce(client, "postmark:s3cret-words").status_code == 200
    assert emails_off(account) == ["dora@example.org"]


def test_a_forged_stop_changes_nothing(signed_in, settings):  # noqa: F811
    client, account = signed_in
    choose(client, account, by_text="on", text_number=NUMBER, consent="on")
    inbound = reverse("notices:text_inbound")
    assert twilio_post(client, inbound, {"From": NUMBER, "Body": "STOP"}, token="forger").status_code == 403
    settings.TWILIO_AUTH_TOKEN = ""  # an empty token is a key anyone can sign with: the webhooks are off
    assert twilio_post(client, inbound, {"From": NUMBER, "Body": "STOP"}, token="").status_code == 404
    assert twilio_post(client, reverse("notices:text_status"), {"To": NUMBER, "MessageStatus": "failed"},
                       token="").status_code == 404
    assert NoticePreference.objects.get(account=account).texts_allowed
    assert TextConsent.objects.get().ended_at is None


def test_readiness_and_check_deploy_name_the_missing_secrets(mineola, settings):
    from waterbilling.readiness import readiness_findings

    settings.DEBUG = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.ANYMAIL = {"WEBHOOK_SECRET": ""}
    settings.SMS_BACKEND = "notices.sms.TwilioBackend"
    settings.TWILIO_ACCOUNT_SID, settings.TWILIO_AUTH_TOKEN, settings.TWILIO_FROM = "AC123", "", "+15165550000"
    said = [f.what for f in readiness_findings()]
    assert any("ANYMAIL_WEBHOOK_SECRET" in what for what in said)
    assert any("TWILIO_AUTH_TOKEN is empty" in what for what in said)
    with pytest.raises(SystemCheckError, match="TWILIO_AUTH_TOKEN is empty"):
        call_command("check", "--deploy", "--fail-level", "ERROR")
    settings.ANYMAIL = {"WEBHOOK_SECRET": "postmark:s3cret-words"}
    settings.TWILIO_AUTH_TOKEN = "token"
    said = [f.what for f in readiness_findings()]
    assert not any("ANYMAIL_WEBHOOK_SECRET" in what or "TWILIO" in what for what in said)
