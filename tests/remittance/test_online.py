"""Paying online through the processor: the checkout made by the real ``stripe`` client against the stand-in, the
webhook verified and posted once (a replay, a late event, an event out of order), a forged one refused with nothing
posted, a refund and a dispute reversed; the pages without a processor say how to pay by mail or at the office.

The account is docs/ordinances.md's Mineola example: billed $186.13 on 2026-02-01, due March 1.
"""

import json
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.models import LedgerEntry, Payment, PaymentReversal
from core.errors import ApplicationError
from remittance.lockbox import exception_post
from remittance.models import OnlinePayment, PaymentException, ProcessorEvent
from tests.portal.conftest import billed_account, customer, pay

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: online payment")]
WEBHOOK = "/pay/webhook/stripe/"


def stamp(day: date) -> int:
    return int(datetime(day.year, day.month, day.day, 17, tzinfo=UTC).timestamp())


@pytest.fixture
def linked(mineola, media):
    account = billed_account()
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return account, client


def start(client, account, amount="186.13"):
    response = client.post(reverse("remittance:pay_linked", kwargs={"public_id": account.public_id}),
                           {"amount": amount, "email": "pat@example.org"})
    assert response.status_code == 302, response.content.decode()[:2000]
    return response["Location"]


def post_event(payload: str, header: str):
    return Client().post(WEBHOOK, payload, content_type="application/json", HTTP_STRIPE_SIGNATURE=header)


def test_a_checkout_is_made_by_the_stripe_client_and_the_webhook_posts_once(linked, standin,
                                                                          django_capture_on_commit_callbacks):
    account, client = linked
    url = start(client, account)
    online = OnlinePayment.objects.get()
    assert url == f"{standin.url}/checkout/{online.checkout_id}"
    method, path, form = standin.requests[-1]
    assert (method, path) == ("POST", "/v1/checkout/sessions")
    assert form["line_items[0][price_data][unit_amount]"] == "18613"
    assert form["client_reference_id"] == str(online.public_id) and form["metadata[account_no]"] == account.account_no
    assert "card" not in "".join(v for k, v in form.items() if "number" in k)  # no card field is ever sent from here
    payload = standin.complete(online.checkout_id, created=stamp(date(2026, 2, 20)))
    with django_capture_on_commit_callbacks(execute=True):  # the receipt follows the commit
        response = post_event(payload, standin.signed(payload))
    assert response.status_code == 200 and "posted $186.13" in response.content.decode()
    payment = Payment.objects.get()
    assert (payment.account, payment.amount.amount, payment.paid_on, payment.tender) == (
        account, Decimal("186.13"), date(2026, 2, 20), "online")
    assert payment.reference == f"STRIPE-{standin.sessions[online.checkout_id]['payment_intent']}"
    online.refresh_from_db()
    assert (online.status, online.payment) == ("paid", payment)
    (receipt,) = mail.outbox
    assert receipt.to == ["pat@example.org"] and "$186.13" in receipt.body and payment.reference in receipt.body
    # The same event again, and a second event for the same payment: nothing more is posted.
    again = post_event(payload, standin.signed(payload))
    assert again.status_code == 200 and again.content.decode() == "already applied"
    late = standin.event("checkout.session.completed", standin.sessions[online.checkout_id],
                         created=stamp(date(2026, 3, 5)))
    assert "already posted" in post_event(late, standin.signed(late)).content.decode()
    assert Payment.objects.count() == 1 and LedgerEntry.objects.filter(kind="payment").count() == 1
    assert ProcessorEvent.objects.count() == 2
    page = client.get(reverse("remittance:done", kwargs={"public_id": online.public_id})).content.decode()
    assert "your payment is posted" in page and "Feb 20, 2026" in page


def test_a_forged_or_unsigned_webhook_is_refused_and_posts_nothing(linked, standin):
    account, client = linked
    start(client, account)
    online = OnlinePayment.objects.get()
    payload = standin.complete(online.checkout_id)
    assert post_event(payload, standin.signed(payload, secret="whsec_someone_else")).status_code == 400
    assert post_event(payload, "").status_code == 400
    tampered = payload.replace("18613", "1")
    assert post_event(tampered, standin.signed(payload)).status_code == 400
    stale = standin.signed(payload, timestamp=int(datetime.now(tz=UTC).timestamp()) - 3600)
    assert post_event(payload, stale).status_code == 400
    assert not Payment.objects.exists() and not ProcessorEvent.objects.exists()
    online.refresh_from_db()
    assert online.status == "open"


def test_the_books_do_not_depend_on_when_the_event_arrives(linked, standin):
    """The payment is dated the day the processor took it: an event that arrives after the due date (and after
    the penalty) still pays on time, and the penalty it kept away is corrected."""
    account, client = linked
    start(client, account)
    online = OnlinePayment.objects.get()
    payload = standin.complete(online.checkout_id, created=stamp(date(2026, 2, 27)))
    from tests.billing.steps import run

    run("assess_penalties", "--date", "2026-03-03")  # the 5% of March 2 is charged before the event arrives
    post_event(payload, standin.signed(payload))
    run("assess_penalties", "--date", "2026-03-03")
    assert Payment.objects.get().paid_on == date(2026, 2, 27)
    owed = sum(e.amount.amount for e in LedgerEntry.objects.filter(account=account))
    assert owed == Decimal("0.00")


def test_a_refund_and_a_dispute_reverse_the_payment_even_out_of_order(linked, standin):
    account, client = linked
    start(client, account)
    first = OnlinePayment.objects.get()
    paid = standin.complete(first.checkout_id, created=stamp(date(2026, 2, 20)))
    post_event(paid, standin.signed(paid))
    refund = standin.refund(first.checkout_id)
    assert "reversed" in post_event(refund, standin.signed(refund)).content.decode()
    reversal = PaymentReversal.objects.get()
    first.refresh_from_db()
    assert (reversal.payment, reversal.reason, first.status) == (first.payment, "refunded", "reversed")
    # A refund whose event arrives before the payment's: kept, and applied when the payment is posted.
    start(client, account, amount="100.00")
    second = OnlinePayment.objects.exclude(pk=first.pk).get()
    paid = standin.complete(second.checkout_id, created=stamp(date(2026, 2, 21)))
    refund = standin.refund(second.checkout_id)
    assert "kept" in post_event(refund, standin.signed(refund)).content.decode()
    assert "reversed" in post_event(paid, standin.signed(paid)).content.decode()
    assert PaymentReversal.objects.filter(reason="refunded", payment=Payment.objects.get(amount=Decimal("100.00")))
    # A dispute, weeks later, of a payment posted.
    start(client, account, amount="20.00")
    disputed = OnlinePayment.objects.get(amount=Decimal("20.00"))
    paid = standin.complete(disputed.checkout_id, created=stamp(date(2026, 2, 22)))
    post_event(paid, standin.signed(paid))
    dispute = standin.dispute(disputed.checkout_id)
    assert "reversed" in post_event(dispute, standin.signed(dispute)).content.decode()
    assert PaymentReversal.objects.get(payment=Payment.objects.get(amount=Decimal("20.00"))).reason == "disputed"
    # A partial refund goes to the exceptions queue for the clerk: a payment is reversed whole.
    start(client, account, amount="50.00")
    third = OnlinePayment.objects.get(amount=Decimal("50.00"))
    paid = standin.complete(third.checkout_id, created=stamp(date(2026, 2, 22)))
    post_event(paid, standin.signed(paid))
    partial = standin.refund(third.checkout_id, amount_cents=1000)
    assert "partial refund: to the exceptions queue as" in post_event(partial, standin.signed(partial)).content.decode()
    assert PaymentReversal.objects.count() == 3
    queued = PaymentException.objects.get(source="refund:stripe")
    third.refresh_from_db()
    assert queued.amount.amount == Decimal("10.00")
    assert queued.reason.startswith(f"the processor refunded $10.00 of {third.payment.reference} ($50.00)")
    # It is money paid back, never a payment: it cannot be posted to an account.
    from remittance.lockbox import exception_post_problems

    (problem,) = exception_post_problems(exception=queued, account_no=account.account_no, actor=None)
    assert "is a refund the processor made, not a payment" in problem.message


def test_the_amount_is_checked_before_the_processor_is_asked(linked, standin):
    account, client = linked
    url = reverse("remittance:pay_linked", kwargs={"public_id": account.public_id})
    for amount, said in (("0.50", "less than the least that can be paid online ($1.00)"),
                         ("500.00", "more than account " + account.account_no + " owes today ($186.13)")):
        response = client.post(url, {"amount": amount})
        assert response.status_code == 400 and said in response.content.decode()
    assert not OnlinePayment.objects.exists() and not standin.requests
    # Another customer's account is not theirs to pay from the portal.
    other = billed_account()
    assert client.get(reverse("remittance:pay_linked", kwargs={"public_id": other.public_id})).status_code == 404


def test_paying_from_the_bill_without_signing_in(linked, standin):
    account, _ = linked
    visitor = Client()
    find = reverse("remittance:find")
    wrong = visitor.post(find, {"account_no": account.account_no, "proof": "186.12"})
    assert wrong.status_code == 400 and "do not go together" in wrong.content.decode()
    unknown = visitor.post(find, {"account_no": "9-99999", "proof": "186.13"})
    assert unknown.content.decode().count("do not go together") == 1  # the same answer: no account is revealed
    found = visitor.post(find, {"account_no": account.account_no.lower(), "proof": "$186.13"})
    assert found.status_code == 302 and found["Location"] == reverse("remittance:pay_found")
    page = visitor.get(found["Location"]).content.decode()
    assert account.premises.service_address in page and "$186.13" in page
    response = visitor.post(reverse("remittance:pay_found"), {"amount": "186.13", "email": "guest@example.org"})
    assert response.status_code == 302 and response["Location"].startswith(standin.url)
    online = OnlinePayment.objects.get()
    assert online.started_by is None
    cancelled = reverse("remittance:cancelled", kwargs={"public_id": online.public_id})
    assert account.account_no in visitor.get(cancelled).content.decode()  # the browser that paid
    assert account.account_no not in Client().get(cancelled).content.decode()  # anyone else with the address
    # The ZIP code and the bill number can be guessed (one ZIP for the village; the month and the account number):
    # neither proves the account, and the answer is the same as for a wrong amount.
    zip_code = account.owner.mailing_address.split()[-1]
    for guess in (zip_code, account.bills.get().number):
        refused = Client().post(find, {"account_no": account.account_no, "proof": guess})
        assert refused.status_code == 400 and "do not go together" in refused.content.decode()
        assert account.premises.service_address not in refused.content.decode()


def test_after_a_payment_the_latest_bills_total_still_proves_the_account(linked, standin):
    account, _ = linked
    pay(account, "100.00", "2026-02-20", "CHK-1", as_of=date(2026, 2, 20))  # owes $86.13 now
    assert Client().post(reverse("remittance:find"), {"account_no": account.account_no,
                                                      "proof": "186.13"}).status_code == 302


def test_the_done_and_cancelled_pages_show_details_only_to_the_payer(linked, standin):
    account, client = linked
    start(client, account)
    online = OnlinePayment.objects.get()
    payload = standin.complete(online.checkout_id, created=stamp(date(2026, 2, 20)))
    post_event(payload, standin.signed(payload))
    done = reverse("remittance:done", kwargs={"public_id": online.public_id})
    cancelled = reverse("remittance:cancelled", kwargs={"public_id": online.public_id})
    mine = client.get(done).content.decode()
    assert "$186.13" in mine and account.account_no in mine and "pat@example.org" in mine
    for other in (Client(), signed_in("eve@example.org")):
        for url in (done, cancelled):
            page = other.get(url)
            text = page.content.decode()
            assert page.status_code == 200
            assert "186.13" not in text and account.account_no not in text and "pat@example.org" not in text
    # The guest who paid from the bill sees it in the same browser, and nobody else does.
    assert account.account_no in client.get(cancelled).content.decode()


def signed_in(email: str) -> Client:
    client = Client()
    client.force_login(customer(email), backend="django.contrib.auth.backends.ModelBackend")
    return client


def test_a_signed_event_whose_amount_differs_from_the_checkout_goes_to_the_exceptions_queue(linked, standin):
    account, client = linked
    start(client, account, amount="100.00")
    online = OnlinePayment.objects.get()
    standin.sessions[online.checkout_id]["amount_total"] = 1_260_000  # $12,600.00, validly signed
    payload = standin.complete(online.checkout_id, created=stamp(date(2026, 2, 20)))
    response = post_event(payload, standin.signed(payload))
    assert response.status_code == 200 and "to the exceptions queue" in response.content.decode()
    assert not Payment.objects.exists()
    queued = PaymentException.objects.get()
    assert (queued.amount.amount, queued.source, queued.tender) == (Decimal("12600.00"), "online:stripe", "online")
    assert "$12,600.00 paid for a checkout of $100.00" in queued.reason
    # A clerk looks, but $12,600.00 is over the clerk's limit and over what the account owes: the excess would
    # stand as a credit that could be refunded. The supervisor posts it (or records that it was sent back).
    from tests.office.conftest import staff

    with pytest.raises(ApplicationError) as refused:
        exception_post(exception=queued, account_no=account.account_no, note="called the customer",
                       actor=staff("clara", "Clerk"))
    assert "more than the $1,000.00 a clerk may post from the exceptions queue: a supervisor posts it" in str(
        refused.value)
    assert not Payment.objects.exists()
    exception_post(exception=queued, account_no=account.account_no, note="called the customer",
                   actor=staff("sam", "Supervisor"))
    assert Payment.objects.get().tender == "online"


@pytest.mark.parametrize("obj", ["a string", 12, None, ["a", "list"]])
def test_a_signed_event_of_the_wrong_shape_is_refused_400_and_logged(linked, standin, obj, caplog):
    payload = json.dumps({"id": "evt_bad", "object": "event", "type": "checkout.session.completed",
                          "created": stamp(date(2026, 2, 20)), "data": {"object": obj}})
    response = post_event(payload, standin.signed(payload))
    assert response.status_code == 400 and not Payment.objects.exists()
    assert "malformed event evt_bad" in caplog.text


def test_a_signed_event_with_an_amount_that_is_not_one_is_refused_400(linked, standin):
    account, client = linked
    start(client, account)
    online = OnlinePayment.objects.get()
    for bad in ("186.13", -18613, 10**30):
        standin.sessions[online.checkout_id]["amount_total"] = bad
        payload = standin.complete(online.checkout_id, created=stamp(date(2026, 2, 20)))
        assert post_event(payload, standin.signed(payload)).status_code == 400
    assert not Payment.objects.exists()


def test_too_many_tries_are_refused(linked, standin, settings):
    account, _ = linked
    visitor = Client()
    for _ in range(10):
        visitor.post(reverse("remittance:find"), {"account_no": account.account_no, "proof": "1.00"})
    response = visitor.post(reverse("remittance:find"), {"account_no": account.account_no, "proof": "186.13"})
    assert response.status_code == 429 and "Too many tries" in response.content.decode()


def test_without_keys_the_portal_says_how_to_pay_by_mail_or_at_the_office(linked, settings):
    account, client = linked
    settings.STRIPE_SECRET_KEY = settings.STRIPE_WEBHOOK_SECRET = ""
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "Pay $186.13 online" not in page and "How to pay" in page
    find = Client().get(reverse("remittance:find")).content.decode()
    assert "Online payment is not offered yet" in find and "Mail a check" in find and "Find my account" not in find
    assert Client().post(WEBHOOK, "{}", content_type="application/json").status_code == 404


def test_with_keys_the_account_page_offers_to_pay_the_amount_due(linked, standin):
    account, client = linked
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "Pay $186.13 online" in page


def owed(account) -> Decimal:
    return sum((e.amount.amount for e in LedgerEntry.objects.filter(account=account)), Decimal("0.00"))


def paid_online(linked, standin) -> tuple:
    """The account's bill of $186.13 paid online on 2026-02-20, and its online payment."""
    account, client = linked
    start(client, account, amount="186.13")
    online = OnlinePayment.objects.get()
    paid = standin.complete(online.checkout_id, created=stamp(date(2026, 2, 20)))
    post_event(paid, standin.signed(paid))
    online.refresh_from_db()
    return account, online


def test_a_dispute_the_village_wins_posts_the_payment_again_once(linked, standin):
    account, online = paid_online(linked, standin)
    assert owed(account) == Decimal("0.00")
    dispute = standin.dispute(online.checkout_id, created=stamp(date(2026, 2, 23)))
    post_event(dispute, standin.signed(dispute))
    assert owed(account) == Decimal("186.13")  # the dispute took the money back
    won = standin.dispute_won(online.checkout_id, created=stamp(date(2026, 2, 25)))
    said = post_event(won, standin.signed(won)).content.decode()
    assert "dispute won: $186.13 posted again as" in said
    reinstated = standin.dispute_won(online.checkout_id, kind="charge.dispute.funds_reinstated",
                                     created=stamp(date(2026, 2, 26)))
    assert "posted again already" in post_event(reinstated, standin.signed(reinstated)).content.decode()
    online.refresh_from_db()
    assert online.status == "paid" and online.reinstated.reference == f"{online.payment.reference}-R"
    assert (online.reinstated.amount.amount, online.reinstated.paid_on) == (Decimal("186.13"), date(2026, 2, 25))
    assert owed(account) == Decimal("0.00") and Payment.objects.count() == 2
    assert PaymentReversal.objects.get().payment == online.payment  # what happened in between stays


def test_a_dispute_won_that_never_reversed_the_payment_posts_nothing(linked, standin):
    account, online = paid_online(linked, standin)
    won = standin.dispute_won(online.checkout_id)  # its dispute's own event never reached us
    said = post_event(won, standin.signed(won)).content.decode()
    assert said == "dispute won, but the payment was not reversed for a dispute: nothing to do"
    online.refresh_from_db()
    assert online.status == "paid" and Payment.objects.count() == 1 and owed(account) == Decimal("0.00")


def test_a_dispute_lost_changes_nothing_more(linked, standin):
    account, online = paid_online(linked, standin)
    dispute = standin.dispute(online.checkout_id)
    post_event(dispute, standin.signed(dispute))
    lost = standin.event("charge.dispute.closed", {"id": "dp_1", "object": "dispute", "status": "lost",
                                                   "payment_intent": standin.sessions[online.checkout_id][
                                                       "payment_intent"], "amount": 18613})
    assert "nothing to do" in post_event(lost, standin.signed(lost)).content.decode()
    assert owed(account) == Decimal("186.13") and Payment.objects.count() == 1
