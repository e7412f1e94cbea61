"""Text messages only with consent, kept as given; STOP, HELP and START answered; a number that stops or cannot be
reached falls back to e-mail or paper, and the clerk sees why; nothing goes in the quiet hours."""

import io
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse
from twilio.request_validator import RequestValidator

from accounts.models import PortalLink
from notices import sms
from notices.models import CustomerNotice, NoticePreference, TextConsent
from notices.services import notices_send_waiting, quiet_until
from tests.billing.steps import run
from tests.portal.conftest import billed_account, customer

pytestmark = pytest.mark.django_db
TOKEN = "twilio-auth-token-for-tests"
NUMBER = "+15165550100"
NY = ZoneInfo("America/New_York")


@pytest.fixture
def signed_in(mineola, client, settings):
    settings.TWILIO_AUTH_TOKEN = TOKEN
    settings.SITE_URL = "https://water.example.org"
    account = billed_account()  # $186.13 dated 2026-02-01, due 2026-03-01
    user = customer("dora@example.org")
    PortalLink.objects.create(user=user, account=account)
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client, account


def choose(client, account, **fields):
    """The customer's choices on the portal; a new text number is confirmed with the code texted to it."""
    data = {"by_email": "on", "language": "en", "kinds": ["due_soon", "late_notice", "usage_alert", "installment_due"], **fields}
    url = reverse("portal:notifications", kwargs={"public_id": account.public_id})
    response = client.post(url, data)
    if fields.get("by_text") and sms.outbox and "is your code" in sms.outbox[-1]["body"]:
        code = sms.outbox[-1]["body"][:6]
        sms.outbox.clear()
        client.post(url, {"confirm_code": "1", "code": code})
    return response


@pytest.fixture
def late_notice_night(django_capture_on_commit_callbacks):
    """The night of 2026-03-02: the late charges, then the notices; what follows their commit (a worker sending the
    notices queued) runs as it would."""
    def night():
        run("assess_penalties", "--date", "2026-03-02")
        with django_capture_on_commit_callbacks(execute=True):
            call_command("notices", "--date", "2026-03-02", stdout=io.StringIO())
    return night


def twilio_post(client, path: str, params: dict, *, token: str = TOKEN):
    url = "https://water.example.org" + path
    signature = RequestValidator(token).compute_signature(url, params)
    return client.post(path, params, HTTP_X_TWILIO_SIGNATURE=signature)


def test_texts_need_consent_to_the_words_shown_and_the_consent_is_kept(signed_in, late_notice_night):
    client, account = signed_in
    page = client.get(reverse("portal:notifications", kwargs={"public_id": account.public_id})).content.decode()
    assert "Reply STOP to end, HELP for help. Consent is not a condition of service." in page
    refused = choose(client, account, by_text="on", text_number="(516) 555-0100")
    assert refused.status_code == 400 and "tick the box to agree" in refused.content.decode()
    assert not TextConsent.objects.exists()
    assert choose(client, account, by_text="on", text_number="516 555 0100", consent="on").status_code == 302
    consent = TextConsent.objects.get()
    assert consent.number == NUMBER and consent.given_by.email == "dora@example.org" and consent.ended_at is None
    assert "I agree to receive text messages from Village of Mineola" in consent.words
    late_notice_night()
    ways = dict(CustomerNotice.objects.filter(kind="late_notice").values_list("channel", "sent_to"))
    assert ways["text"] == NUMBER and "dora@example.org" in ways["email"]
    (text,) = sms.outbox
    assert text["to"] == NUMBER and "Late notice" in text["body"] and "Reply STOP" in text["body"]


def test_stop_ends_texts_help_answers_and_start_restarts(signed_in, late_notice_night):
    client, account = signed_in
    choose(client, account, by_text="on", text_number=NUMBER, consent="on")
    inbound = reverse("notices:text_inbound")
    assert twilio_post(client, inbound, {"From": NUMBER, "Body": "STOP"}, token="wrong").status_code == 403
    answer = twilio_post(client, inbound, {"From": NUMBER, "Body": "Stop"})
    assert answer.status_code == 200 and "no more texts" in answer.content.decode()
    preference = NoticePreference.objects.get(account=account)
    assert "replied STOP" in preference.text_problem and not preference.texts_allowed
    assert TextConsent.objects.get().ended_how == "replied STOP"
    late_notice_night()
    assert sms.outbox == []  # STOP ended them: the late notice goes by e-mail only
    assert set(CustomerNotice.objects.values_list("channel", flat=True)) == {"email"}
    assert "Call" in twilio_post(client, inbound, {"From": NUMBER, "Body": "HELP"}).content.decode()
    assert "texts are on again" in twilio_post(client, inbound, {"From": NUMBER, "Body": "START"}).content.decode()
    assert NoticePreference.objects.get(account=account).texts_allowed


def test_a_text_that_cannot_be_delivered_falls_back_and_the_clerk_sees_why(signed_in, late_notice_night):
    client, account = signed_in
    account.owner.email = ""
    account.owner.save()
    choose(client, account, by_email="", by_text="on", text_number=NUMBER, consent="on")
    status = twilio_post(client, reverse("notices:text_status"),
                         {"To": NUMBER, "MessageStatus": "undelivered", "ErrorCode": "30003"})
    assert status.status_code == 204
    assert "could not be delivered (30003)" in NoticePreference.objects.get(account=account).text_problem
    late_notice_night()
    assert sms.outbox == [] and mail.outbox == []
    assert list(CustomerNotice.objects.values_list("channel", flat=True)) == ["paper"]  # no e-mail chosen: paper


def test_a_notice_turned_off_is_not_sent(signed_in, late_notice_night):
    client, account = signed_in
    choose(client, account, kinds=["due_soon"])
    late_notice_night()
    assert not CustomerNotice.objects.filter(kind="late_notice").exists()


def test_the_customer_chooses_spanish_for_the_notices(signed_in, late_notice_night):
    client, account = signed_in
    choose(client, account, language="es")
    late_notice_night()
    assert CustomerNotice.objects.get(kind="late_notice").subject.startswith("Aviso de atraso")


def test_nothing_goes_in_the_quiet_hours_and_the_morning_sends_it(signed_in, settings, late_notice_night):
    settings.NOTICES_QUIET_HOURS = (21, 8)
    assert quiet_until(datetime(2026, 3, 2, 12, 0, tzinfo=NY)) is None
    assert quiet_until(datetime(2026, 3, 2, 1, 30, tzinfo=NY)) == datetime(2026, 3, 2, 8, 0, tzinfo=NY)
    assert quiet_until(datetime(2026, 3, 2, 21, 30, tzinfo=NY)) == datetime(2026, 3, 3, 8, 0, tzinfo=NY)
    client, account = signed_in
    choose(client, account, by_text="on", text_number=NUMBER, consent="on")
    from unittest import mock

    from django.utils import timezone

    with mock.patch.object(timezone, "now", return_value=datetime(2026, 3, 2, 1, 30, tzinfo=NY)):
        late_notice_night()  # the nightly job's hour
        assert mail.outbox == [] and sms.outbox == []
        assert notices_send_waiting() == 0
    waiting = CustomerNotice.objects.filter(sent_at__isnull=True)
    assert {n.send_after for n in waiting} == {datetime(2026, 3, 2, 8, 0, tzinfo=NY)}
    assert notices_send_waiting(now=datetime(2026, 3, 2, 8, 5, tzinfo=NY)) == 2
    assert len(mail.outbox) == 1 and len(sms.outbox) == 1
    assert notices_send_waiting(now=datetime(2026, 3, 2, 8, 15, tzinfo=NY)) == 0  # once
    assert date(2026, 3, 2) == timezone.localtime(CustomerNotice.objects.first().send_after).date()


def test_a_bounced_address_is_e_mailed_no_more_and_the_clerk_sees_why(signed_in, late_notice_night):
    from anymail.signals import AnymailTrackingEvent, tracking

    client, account = signed_in
    tracking.send(sender=object, event=AnymailTrackingEvent(event_type="bounced", recipient="DORA@example.org"),
                  esp_name="Postmark")
    preference = NoticePreference.objects.get(account=account)
    assert preference.emails_off == ["DORA@example.org"]
    assert preference.email_problem.startswith("DORA@example.org: bounced (Postmark)")
    late_notice_night()
    notice = CustomerNotice.objects.get(kind="late_notice", channel="email")
    assert "dora@example.org" not in notice.sent_to.lower()  # the owner's address on file still gets it
    assert account.owner.email in notice.sent_to
