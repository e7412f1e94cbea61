"""The office words its notices: a supervisor edits a notice's subject and text (English and Spanish) from the shipped
words, with the variables listed and a preview on a real account; the next notice uses them; every change is kept."""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from accounts.roles import roles_install
from notices.models import CustomerNotice, NoticeTemplate
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db
URL = "/admin/notices/noticetemplate/"


@pytest.fixture
def supervisor(client, mineola):
    roles_install()
    user = get_user_model().objects.create_user("supervisor", is_staff=True)
    user.groups.add(Group.objects.get(name="Supervisor"))
    client.force_login(user)
    return client


def late_account(language="en"):
    account, meter = account_with_meter(book=1)
    account.owner.email = "owner@example.com"
    account.owner.save()
    account.language = language
    account.save()
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-03-02")
    return account


def test_a_wording_the_supervisor_edits_shows_in_the_next_notice(supervisor, mineola):
    page = supervisor.get(URL + "add/?kind=late_notice&language=en").content.decode()
    assert "Late notice: your water bill is past due (account {{ account.account_no }})" in page  # shipped words
    assert "{{ pay_by }}</code>: the last day to pay it" in page  # the variables listed
    saved = supervisor.post(URL + "add/", {
        "kind": "late_notice", "language": "en", "subject": "PAST DUE: water account {{ account.account_no }}",
        "body": "Bill {{ bill_number }} is past due: {{ past_due }}. Pay {{ amount }} by {{ pay_by }} "
                "({{ citation }}).\n{{ utility.name }}"})
    assert saved.status_code == 302
    account = late_account()
    run("notices", "--date", "2026-03-02")
    notice = CustomerNotice.objects.get(kind="late_notice")
    assert notice.subject == f"PAST DUE: water account {account.account_no}"
    bill = account.bills.get()
    assert notice.body == (f"Bill {bill.number} is past due: $195.44. Pay $186.13 by April 1, 2026 (§ 45.29 E).\n"
                           f"{mineola.name}")
    wording = NoticeTemplate.objects.get()
    assert wording.history.count() == 1
    page = supervisor.get(URL + f"{wording.pk}/change/?preview={account.account_no}").content.decode()
    assert f"PAST DUE: water account {account.account_no}" in page  # the preview, on the real account


def test_spanish_keeps_its_own_words(supervisor):
    supervisor.post(URL + "add/", {"kind": "late_notice", "language": "en", "subject": "PAST DUE",
                                   "body": "{{ past_due }}"})
    late_account(language="es")
    run("notices", "--date", "2026-03-02")
    assert CustomerNotice.objects.get().subject.startswith("Aviso de atraso")


def test_a_variable_the_notice_does_not_offer_or_a_tag_is_refused_naming_it(supervisor):
    refused = supervisor.post(URL + "add/", {"kind": "late_notice", "language": "en", "subject": "Hi",
                                             "body": "Pay {{ amout }} now"})
    assert refused.status_code == 200 and "{{ amout }} is not a variable of this notice" in refused.content.decode()
    refused = supervisor.post(URL + "add/", {"kind": "late_notice", "language": "en", "subject": "Hi",
                                             "body": "{% load static %}"})
    assert "not {% tags %}" in refused.content.decode().replace("&#x27;", "'")
    assert not NoticeTemplate.objects.exists()


def test_a_clerk_cannot_change_the_wording(client, mineola):
    roles_install()
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    client.force_login(clerk)
    assert client.get(URL + "add/").status_code == 403


@pytest.mark.parametrize("kind", CustomerNotice.Kind.values)
def test_every_notice_has_its_variables_and_shipped_words_in_both_languages(kind):
    from notices.wording import VARIABLES, shipped_words, wording_check

    assert VARIABLES.get(kind), f"{kind}: no variables listed for the office's wording"
    english, spanish = shipped_words(kind, "en"), shipped_words(kind, "es")
    assert all(english) and all(spanish) and english != spanish
    for subject, body in (english, spanish):
        wording_check(kind, subject, body)  # the shipped words, as the office starts from them, are accepted
