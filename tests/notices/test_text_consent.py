"""Consent that belongs to the number: a number is confirmed by a code texted to it before texts start, so no one
signs another's phone up; a number that replied STOP is started again only by START from it, never from another
account's page; the number's consent history is the clerk's to read."""

import pytest
from django.urls import reverse

from accounts.models import PortalLink
from notices import sms
from notices.models import NoticePreference, TextConsent, TextNumber, TextVerification
from tests.notices.test_text_messages import NUMBER, choose, signed_in, twilio_post  # noqa: F401
from tests.office.conftest import staff
from tests.portal.conftest import billed_account, customer

pytestmark = pytest.mark.django_db


def page_of(account):
    return reverse("portal:notifications", kwargs={"public_id": account.public_id})


def test_texts_start_only_when_the_code_texted_to_the_number_comes_back(signed_in):  # noqa: F811
    client, account = signed_in
    sms.outbox.clear()
    data = {"by_email": "on", "language": "en", "by_text": "on", "text_number": NUMBER, "consent": "on"}
    client.post(page_of(account), data)
    assert len(sms.outbox) == 1 and sms.outbox[0]["to"] == NUMBER and "is your code" in sms.outbox[0]["body"]
    assert not TextConsent.objects.exists() and not NoticePreference.objects.get(account=account).texts_allowed
    page = client.get(page_of(account)).content.decode()
    assert 'id="confirm-number"' in page
    wrong = client.post(page_of(account), {"confirm_code": "1", "code": "000000"}, follow=True)
    assert "does not match" in wrong.content.decode() and not TextConsent.objects.exists()
    code = sms.outbox[0]["body"][:6]
    client.post(page_of(account), {"confirm_code": "1", "code": code})
    consent = TextConsent.objects.get()
    assert consent.number == NUMBER and consent.given_how == "portal, number confirmed by code"
    assert NoticePreference.objects.get(account=account).texts_allowed


def test_another_account_cannot_sign_a_number_up_or_undo_its_stop(signed_in, client):  # noqa: F811
    owner_client, account = signed_in
    choose(owner_client, account, by_text="on", text_number=NUMBER, consent="on")
    assert twilio_post(owner_client, reverse("notices:text_inbound"), {"From": NUMBER, "Body": "STOP"}).status_code \
        == 200
    assert TextNumber.objects.get(number=NUMBER).stopped_at is not None
    # Another customer types that number on their own account and ticks the box: refused, nothing texted.
    other = billed_account()
    stranger = customer("eve@example.org")
    PortalLink.objects.create(user=stranger, account=other)
    owner_client.logout()
    client.force_login(stranger, backend="django.contrib.auth.backends.ModelBackend")
    sms.outbox.clear()
    response = client.post(page_of(other), {"by_email": "on", "language": "en", "by_text": "on",
                                            "text_number": NUMBER, "consent": "on"})
    assert response.status_code == 400 and "replied STOP" in response.content.decode()
    assert sms.outbox == [] and not TextConsent.objects.filter(account=other).exists()
    # A number that never said STOP: the stranger's code goes to the number's owner, and no consent without it.
    client.post(page_of(other), {"by_email": "on", "language": "en", "by_text": "on", "text_number": "5165550199",
                                 "consent": "on"})
    assert sms.outbox[-1]["to"] == "+15165550199" and not TextConsent.objects.filter(account=other).exists()
    assert not NoticePreference.objects.get(account=other).texts_allowed
    # START from the number itself starts texts again.
    answer = twilio_post(client, reverse("notices:text_inbound"), {"From": NUMBER, "Body": "START"})
    assert "texts are on again" in answer.content.decode()
    assert TextNumber.objects.get(number=NUMBER).stopped_at is None
    assert NoticePreference.objects.get(account=account).texts_allowed


def test_a_stop_from_a_number_sent_only_a_code_is_kept(signed_in):  # noqa: F811
    client, account = signed_in
    client.post(page_of(account), {"by_email": "on", "language": "en", "by_text": "on", "text_number": "5165550188",
                                   "consent": "on"})
    twilio_post(client, reverse("notices:text_inbound"), {"From": "+15165550188", "Body": "STOP"})
    code = sms.outbox[-2]["body"][:6] if len(sms.outbox) > 1 else sms.outbox[-1]["body"][:6]
    client.post(page_of(account), {"confirm_code": "1", "code": code})
    assert not TextConsent.objects.filter(number="+15165550188").exists()
    assert TextVerification.objects.get(number="+15165550188").confirmed_at is None


def test_the_clerk_reads_the_numbers_consent_history(signed_in, client):  # noqa: F811
    owner_client, account = signed_in
    choose(owner_client, account, by_text="on", text_number=NUMBER, consent="on")
    twilio_post(owner_client, reverse("notices:text_inbound"), {"From": NUMBER, "Body": "STOP"})
    number = TextNumber.objects.get(number=NUMBER)
    client.force_login(staff("clara", "Clerk"))
    page = client.get(reverse("admin:notices_textnumber_change", args=[number.pk]))
    said = page.content.decode()
    assert page.status_code == 200 and account.account_no in said and "replied STOP" in said


def test_no_one_can_flood_a_phone_with_codes(signed_in):  # noqa: F811
    from datetime import timedelta
    from unittest import mock

    from django.utils import timezone

    client, account = signed_in
    sms.outbox.clear()
    data = {"by_email": "on", "language": "en", "by_text": "on", "text_number": "5165550177", "consent": "on"}
    client.post(page_of(account), data)
    client.post(page_of(account), data)  # saved twice in a row: one code
    assert len(sms.outbox) == 1
    start = timezone.now()
    for minutes in range(2, 12, 2):
        with mock.patch.object(timezone, "now", return_value=start + timedelta(minutes=minutes)):
            response = client.post(page_of(account), data)
    assert len(sms.outbox) == 5 and response.status_code == 400
    assert "Too many codes" in response.content.decode()
