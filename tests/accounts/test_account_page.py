"""The account page: everything a "why is my bill this much?" call needs, on one page.

The Mineola worked example (docs/ordinances.md, § 45.29 E), worked by hand: a $186.13 bill dated 2026-02-01, due
2026-03-01; $100.00 paid on 2026-02-15 pays $100.00 of the bill's water; on 2026-03-02 the penalty is 5% of
the $86.13 unpaid = $4.31 (4.3065 half-up); $90.44 paid on 2026-03-10 pays the $86.13 of water left, then the
$4.31 penalty: the balance is $0.00.
"""

import re
from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from accounts.models import Account, AccountNote, Customer
from accounts.services import account_note_add
from billing.models import Adjustment, Bill
from billing.selectors import account_ledger
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, pay, read, run

pytestmark = pytest.mark.django_db


def text(response) -> str:
    html = re.sub(r"</?a[^>]*>", "", response.content.decode())
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


@pytest.fixture
def worked(mineola):
    account, meter = account_with_meter(book=1)
    account.occupant = Customer.objects.create(name="Olive Occupant", mailing_address="12 Elm St\nMineola NY 11501")
    account.save()
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    pay(account, "100.00", "2026-02-15", "P-1")
    run("assess_penalties", "--date", "2026-03-02")
    pay(account, "90.44", "2026-03-10", "P-2")
    return account, Bill.objects.get(account=account)


@pytest.fixture
def clerk(client, mineola):
    user = get_user_model().objects.create_user("clerk", password="x", is_staff=True, first_name="Carla",
                                                last_name="Clerk")
    user.groups.add(Group.objects.get(name="Clerk"))
    client.force_login(user)
    return client


def page(client, account, *, edit=False):
    response = client.get(reverse("admin:accounts_account_change", args=[account.pk]), {"edit": 1} if edit else {})
    assert response.status_code == 200
    return response


def test_the_ledger_shows_the_running_balance_and_what_each_payment_paid(worked):
    account, bill = worked
    rows = account_ledger(account=account, as_of=date(2026, 3, 31))
    assert [(r.on, r.kind, str(r.amount), str(r.balance)) for r in rows] == [
        (date(2026, 2, 1), "bill", "186.13", "186.13"),
        (date(2026, 2, 15), "payment", "-100.00", "86.13"),
        (date(2026, 3, 2), "penalty", "4.31", "90.44"),
        (date(2026, 3, 10), "payment", "-90.44", "0.00"),
    ]
    assert rows[0].label == f"Bill {bill.number}"
    first, second = rows[1], rows[3]
    assert [(p.what, p.category, str(p.amount)) for p in first.paid] == [(f"bill {bill.number}", "water", "100.00")]
    assert [(p.what, p.category, str(p.amount)) for p in second.paid] == [
        (f"bill {bill.number}", "water", "86.13"), (f"bill {bill.number}", "penalty", "4.31")]


def test_the_page_shows_the_account_at_a_glance_and_the_ledger(clerk, worked):
    account, bill = worked
    html = text(page(clerk, account))
    for words in (account.owner.name, "Olive Occupant", account.premises.service_address, "Book 1",
                  "Balance $0.00", "Past due now: $0.00", bill.number, "$186.13", "−$100.00", "$86.13", "$4.31",
                  "−$90.44", "Payment P-1", "Payment P-2", f"paid $100.00 of bill {bill.number}, water",
                  f"paid $86.13 of bill {bill.number}, water", f"paid $4.31 of bill {bill.number}, penalty",
                  "Latest readings", "view PDF", "reprint", "Credit/debit memo", "Statement PDF", "Charge a fee",
                  "Post a payment", "Start a final bill"):
        assert words in html, words
    counter = reverse("admin:billing_payment_counter") + f"?account={account.account_no}"
    assert counter in page(clerk, account).content.decode()


def test_the_page_shows_past_due_while_the_bill_is_unpaid(clerk, mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    pay(account, "100.00", "2026-02-15", "P-1")
    html = text(page(clerk, account))
    # Today is after the due date and no penalty is assessed in this test: $86.13 is owed, all past due.
    assert "Balance $86.13" in html and "Past due now: $86.13" in html


def test_the_bill_pdf_and_the_statement_pdf(clerk, worked):
    account, bill = worked
    pdf = clerk.get(reverse("admin:billing_bill_pdf", args=[bill.pk]))
    assert pdf.status_code == 200 and pdf.content.startswith(b"%PDF")
    again = clerk.get(reverse("admin:billing_bill_pdf", args=[bill.pk]) + "?reprint=1")
    assert again.content.startswith(b"%PDF")
    url = reverse("admin:accounts_account_statement_pdf", args=[account.pk])
    statement = clerk.get(url + "?as_of=2026-03-31")
    assert statement.status_code == 200 and statement["Content-Type"] == "application/pdf"
    assert statement.content.startswith(b"%PDF")
    refused = clerk.get(url + "?as_of=31/03/2026", follow=True)
    assert "as_of: &#x27;31/03/2026&#x27; is not a date" in refused.content.decode()


def test_notes_are_added_and_shown_with_the_clerk_newest_first(clerk, worked):
    account, _ = worked
    add = reverse("admin:accounts_account_note_add", args=[account.pk])
    assert clerk.post(add, {"text": "Called about the March bill."}).status_code == 302
    clerk.post(add, {"text": "Promised to pay by the 15th."})
    refused = clerk.post(add, {"text": "   "}, follow=True)
    assert "text: a note needs some text" in refused.content.decode()
    assert list(AccountNote.objects.values_list("text", flat=True)) == ["Promised to pay by the 15th.",
                                                                         "Called about the March bill."]
    html = text(page(clerk, account))
    assert html.index("Promised to pay") < html.index("Called about") and "Carla Clerk" in html
    with pytest.raises(ApplicationError, match="text"):
        account_note_add(account=account, text="", actor=None)


def test_a_memo_by_bill_number(clerk, worked):
    account, bill = worked
    url = reverse("admin:billing_account_memo", args=[account.pk])
    assert clerk.get(url).status_code == 200
    refused = clerk.post(url, {"bill": "999999-9-99999", "kind": "credit", "amount": "10.00", "reason": "leak"})
    assert "no bill numbered '999999-9-99999' on account" in refused.context["form"].errors["bill"][0]
    assert not Adjustment.objects.exists()
    done = clerk.post(url, {"bill": bill.number, "kind": "credit", "amount": "10.00", "reason": "Leak allowance"})
    assert done.status_code == 302
    memo = Adjustment.objects.get()
    assert memo.bill == bill and str(memo.amount.amount) == "10.00" and memo.created_by.username == "clerk"
    html = text(page(clerk, account))
    assert "Credit memo" in html and "Credit $10.00" in html and "Balance −$10.00" not in html


def test_the_adjustment_form_takes_the_bill_by_number(clerk, worked):
    _, bill = worked
    url = reverse("admin:billing_adjustment_add")
    refused = clerk.post(url, {"bill": "nope", "kind": "debit", "amount": "5.00", "reason": "x"})
    assert "no bill numbered 'nope'" in refused.context["adminform"].form.errors["bill"][0]
    assert clerk.post(url, {"bill": bill.number, "kind": "debit", "amount": "5.00", "reason": "x"}).status_code == 302


def test_an_account_is_never_deleted_and_its_number_never_changes(clerk, client, worked):
    account, _ = worked
    superuser = get_user_model().objects.create_superuser("root", password="x")
    client.force_login(superuser)
    assert client.get(reverse("admin:accounts_account_delete", args=[account.pk])).status_code == 403
    changelist = client.get(reverse("admin:accounts_account_changelist"))
    assert "delete_selected" not in changelist.content.decode()
    form = page(client, account, edit=True).context["adminform"].form
    assert "account_no" not in form.fields and "closed_on" not in form.fields and "book" in form.fields
    assert "account_no" in page(client, account, edit=True).context["adminform"].readonly_fields
    assert Account.objects.filter(pk=account.pk).exists()


def test_one_search_box(clerk, worked):
    account, _ = worked
    url = reverse("admin:accounts_account_changelist")
    assert clerk.get(url, {"q": account.account_no}).url == reverse("admin:accounts_account_change",
                                                                    args=[account.pk])  # a number opens it
    for q in (account.owner.name.split()[-1], "Olive", account.premises.service_address[:6]):
        found = clerk.get(url, {"q": q}).context["cl"].result_list
        assert account in list(found), q
    assert list(clerk.get(url, {"q": "no such thing zzz"}).context["cl"].result_list) == []


def test_the_page_answers_in_a_fixed_number_of_queries(clerk, worked, django_assert_max_num_queries):
    account, _ = worked
    with django_assert_max_num_queries(36):
        page(clerk, account)
    for n in range(1, 9):  # more rows on the ledger, and credits left over: not one more query
        pay(account, "5.00", f"2026-04-{n:02d}", f"EXTRA-{n}")
    account.notes.create(text="Asked for a statement.")
    with django_assert_max_num_queries(36):
        page(clerk, account)


def test_a_reversed_payment_shows_its_reversal_and_pays_nothing(clerk, worked):
    from billing.models import Payment
    from billing.selectors import account_amounts_due
    from billing.services.reversals import payment_reverse

    account, bill = worked
    payment_reverse(payment=Payment.objects.get(reference="P-1"), reversed_on=date(2026, 3, 5), reason="returned",
                    note="Returned by the bank", actor=None)
    rows = account_ledger(account=account, as_of=date(2026, 3, 31))
    reversal = next(r for r in rows if r.kind == "payment_reversal")
    paid_back = next(r for r in rows if r.label == "Payment P-1")
    assert reversal.label == "Payment reversed" and str(reversal.amount) == "100.00"
    assert reversal.on == date(2026, 3, 5)
    assert paid_back.reversed_on == date(2026, 3, 5) and paid_back.paid == ()
    due = account_amounts_due(account_ids=[account.id], as_of=date(2026, 3, 31))[account.id]
    assert rows[-1].balance == due.amount
    html = text(page(clerk, account))
    assert "Payment reversed" in html and "(reversed on Mar 5, 2026)" in html
