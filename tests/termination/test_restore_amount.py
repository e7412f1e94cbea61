"""Once the water is off, one amount restores it: everything the account owes, the disconnect charge waiting for the
next bill included, and the charge for restoring paid ahead (Mineola § 45.28 A(3)). The counter, its fill button, the
account's page, the case's page and the customer's pages all name it; paid at the counter, it restores service and
leaves nothing owing once the restoration's charge is billed."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from accounts.models import PortalLink
from billing.balances import balances
from billing.models import PendingCharge
from core.clock import today
from core.money import fmt_dollars
from termination.models import TerminationCase
from termination.selectors import case_pay, restore_owed
from termination.services.shutoff import restore_refusals, service_restore, shutoff_carry_out
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.28 A(3)")]


def shut_off_case():
    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    term("shutoff", number, date_="2026-05-05")
    shutoff_carry_out(case=TerminationCase.objects.get(number=number), done_on=date(2026, 5, 6), actor=None)
    return account, TerminationCase.objects.get(number=number)


def test_before_the_shut_off_the_amount_stops_it_after_it_the_amount_restores(mineola, client):
    account, case = shut_off_case()
    pay = case_pay(case, as_of=today())
    owed, waiting = restore_owed(case, as_of=today())
    assert waiting == Decimal("50.00")  # the disconnect charge, waiting for the next bill
    assert pay.restores and pay.words == "To restore service, pay"
    assert pay.amount == owed + Decimal("50.00")  # and the connect charge for restoring, paid ahead
    assert pay.detail == "disconnect charge (termination of service) $50.00 and connect charge (initiation of service) $50.00 included"
    # The amount that stopped the shut-off is not enough now: it leaves the charges of the shut-off owing.
    stop = case.amount_delinquent
    assert pay.amount > stop + Decimal("50.00")

    client.force_login(staff("clara", "Clerk"))
    counter = client.get(reverse("admin:billing_payment_counter"), {"account": account.account_no}).content.decode()
    text = fmt_dollars(pay.amount)
    assert (f'<th scope="row">To restore service, pay</th><td id="counter-stop">{text} (case {case.number}; '
            f"{pay.detail})") in counter
    assert f'data-amount="{pay.amount}">To restore service, pay: {text}</button>' in counter
    assert "To stop the shut-off" not in counter
    looked_up = client.get(reverse("admin:billing_payment_counter_lookup"), {"account": account.account_no}).json()
    assert looked_up["stop"]["amount"] == f"{pay.amount}" and looked_up["stop"]["restores"] is True
    page = client.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
    assert f"— to restore service, pay {text}" in page
    case_page = client.get(reverse("admin:termination_terminationcase_change", args=[case.pk])).content.decode()
    assert f"To restore service, pay: {text}" in case_page

    # Paid at the counter, as the fill button offers it: service is restored and nothing is left owing.
    response = client.post(reverse("admin:billing_payment_counter"), {
        "account_no": account.account_no, "amount": f"{pay.amount}", "paid_on": today().isoformat(),
        "tender": "cash", "check_number": "", "reference": ""})
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert restore_refusals(case, as_of=today()) == []
    service_restore(case=case, as_of=today(), actor=None)
    owed, waiting = restore_owed(TerminationCase.objects.get(pk=case.pk), as_of=today())
    assert owed == Decimal("0.00") and waiting == Decimal("100.00")  # both charges wait, paid ahead by the credit
    assert set(PendingCharge.objects.filter(account=account).values_list("code", flat=True)) == {"disconnect",
                                                                                                 "connect"}
    assert balances([account.pk], through=today())[account.pk].balance == Decimal("-100.00")


def test_paying_only_what_stopped_the_shut_off_does_not_restore(mineola):
    account, case = shut_off_case()
    from billing.services.payments import payment_post

    payment_post(account_no=account.account_no, amount=case.amount_delinquent, paid_on=today(), reference="STOP")
    refusal = restore_refusals(case, as_of=today())
    assert len(refusal) == 1 and "is still owed" in refusal[0].message and "$50.00 of it charged for the next bill" \
        in refusal[0].message


def test_the_customer_sees_the_amount_that_restores(mineola, media, client):
    account, case = shut_off_case()
    pay = case_pay(case, as_of=today())
    from tests.portal.conftest import customer

    dora = customer("dora@example.org")
    PortalLink.objects.create(user=dora, account=account)
    client.force_login(dora, backend="django.contrib.auth.backends.ModelBackend")
    box = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert f"<dt>To restore service, pay</dt><dd>{fmt_dollars(pay.amount)}</dd>" in box
    assert "Service is shut off." in box and "To stop the shut-off" not in box
    page = client.get(reverse("portal:termination_case", kwargs={"number": case.number})).content.decode()
    assert f"<dt>To restore service, pay</dt><dd>{fmt_dollars(pay.amount)}</dd>" in page
    client.cookies["django_language"] = "es"
    page = client.get(reverse("portal:termination_case", kwargs={"number": case.number}),
                      HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "Para restablecer el servicio, pague" in page


def test_the_customer_is_told_the_amount_that_restores_when_the_water_is_shut_off(mineola,
                                                                                  django_capture_on_commit_callbacks):
    from notices.models import CustomerNotice

    account, _ = delinquent_account(occupant=False)
    account.owner.email = "owner@example.org"
    account.owner.save()
    account.language = "es"
    account.save()
    number = terminated_case(account, occupant=False)
    term("shutoff", number, date_="2026-05-05")
    case = TerminationCase.objects.get(number=number)
    with django_capture_on_commit_callbacks(execute=True):
        shutoff_carry_out(case=case, done_on=date(2026, 5, 6), actor=None)
    case.refresh_from_db()
    pay = case_pay(case, as_of=date(2026, 5, 6))
    assert pay.restores and pay.amount == Decimal("286.13")  # $186.13 owed, the $50.00 disconnect and connect charges
    notice = CustomerNotice.objects.get(kind="service_shut_off")
    assert notice.language == "es" and notice.fact == f"shut-off:{case.pk}:2026-05-06"
    assert notice.subject == f"Su servicio de agua está cortado (cuenta {account.account_no})"
    assert f"Para restablecer el servicio, pague {fmt_dollars(pay.amount)}" in notice.body
