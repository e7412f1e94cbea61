"""The backflow pages of the admin: each form calls one service and shows a refusal under the field it names;
records are read-only pages with buttons; the inspector accepts a test submitted online; the fine view works
Lansing's example and charges it once; the reports download; acting on noncompliance opens a case.

The premises are one account, 1-0001 (Acme Plating, 1 Main St), set up as the backflow command tests do
(tests/backflow/steps.py)."""

import csv
import io
import re
from datetime import date
from decimal import Decimal as D

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from backflow.models import Assessment, ComplianceNotice, Device, DeviceTest, NoticeCharge
from backflow.models import Tester as BackflowTester
from backflow.services.compliance import test_record as record_test
from billing.models import PendingCharge
from termination.models import Interruption, TerminationCase

from .steps import bf, village

pytestmark = pytest.mark.django_db


TODAY = date(2026, 12, 1)


@pytest.fixture(autouse=True)
def _today(monkeypatch):
    """What is due and overdue depends on today: these pages are looked at on Dec 1, 2026."""
    monkeypatch.setattr("django.utils.timezone.localdate", lambda *args, **kwargs: TODAY)


def staff(group: str, username: str):
    user = get_user_model().objects.create_user(username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def login(client):
    def as_(group: str, username: str = "staff"):
        client.force_login(staff(group, username))
        return client
    return as_


def errors(response, status=400) -> dict:
    """A refused form's errors: the page answers 400, with the form again and nothing recorded (a lookup answers
    ``status`` 200, with what was wrong under its field)."""
    assert response.status_code == status, response.status_code
    return response.context["form"].errors


def text(response) -> str:
    return re.sub(r"\s+", " ", response.content.decode())


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def add(name: str) -> str:
    return reverse(f"admin:backflow_{name}_add")


def device(serial="RP-1", type_="RPZ", installed_on="2025-06-01", date_="2026-01-05") -> Device:
    bf("device", "1-0001", "--type", type_, "--serial", serial, "--size", "2", "--installed-on", installed_on,
       date_=date_)
    return Device.objects.get(serial=serial)


def a_tester(cert="NY-1", expires="2027-12-31", name="Pat Tester") -> BackflowTester:
    bf("tester", cert, "--name", name, "--expires", expires, date_="2026-01-05")
    return BackflowTester.objects.get(certification_no=cert)


# --- assessments -------------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.45 H")
def test_assess_premises_records_the_answer_and_shows_why(tmp_path, login):
    village(tmp_path, "mineola")
    client = login("Backflow inspector")
    page = client.get(add("assessment"))
    assert page.status_code == 200
    assert "cross_connection: a physical connection (cross-connection) exists" in text(page)
    assert "(§ 45.45 H)" in text(page)
    assert errors(client.post(add("assessment"), {"account_no": "9-9999", "assessed_on": "2026-03-01"}))[
        "account_no"] == ["no account '9-9999'"]
    assert "in the future" in errors(client.post(add("assessment"), {
        "account_no": "1-0001", "assessed_on": "2027-03-01"}))["assessed_on"][0]
    assert "toxic" in errors(client.post(add("assessment"), {
        "account_no": "1-0001", "assessed_on": "2026-03-01", "conditions": ["toxic"]}))["conditions"][0]
    assert not Assessment.objects.exists()

    done = client.post(add("assessment"), {"account_no": "1-0001", "assessed_on": "2026-03-01",
                                           "conditions": ["cross_connection", "back_pressure", "hazardous"]},
                       follow=True)
    assessment = Assessment.objects.get()
    assert done.redirect_chain[-1][0] == reverse("admin:backflow_assessment_change", args=[assessment.pk])
    html = text(done)
    assert "Account 1-0001: a device is required: AG, RPZ (§ 45.45 H)." in messages_of(done)
    assert "Required: AG, RPZ" in html and "§ 45.45 H" in html
    assert "cross_connection + back_pressure + hazardous → AG, RPZ (§ 45.45 H: subject to back pressure, " \
           "hazardous substances)" in html
    assert 'name="_save"' not in html
    listing = text(client.get(reverse("admin:backflow_assessment_changelist"),
                              {"account__id__exact": assessment.account_id}))
    assert "1-0001" in listing and "Required: AG, RPZ" in listing


@pytest.mark.citation("§ 169-34")
def test_a_determination_without_its_note_is_refused_under_the_note(tmp_path, login):
    village(tmp_path, "washingtonville")
    client = login("Backflow inspector")
    refused = client.post(add("assessment"), {"account_no": "1-0001", "assessed_on": "2026-03-01",
                                              "conditions": ["inspector_determination", "determined:RPZ"]})
    assert "determination in the note (§ 169-34)" in errors(refused)["note"][0]
    client.post(add("assessment"), {"account_no": "1-0001", "assessed_on": "2026-03-01", "note": "a car wash",
                                    "conditions": ["inspector_determination", "determined:RPZ"]})
    assert Assessment.objects.get().allowed == ["RPZ"]


# --- devices and tests -------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.45 H")
def test_register_device_flags_a_type_not_allowed_and_refuses_bad_input(tmp_path, login):
    village(tmp_path, "mineola")
    bf("require", "1-0001", "--condition", "cross_connection", "--condition", "back_pressure", "--condition",
       "hazardous", date_="2026-01-05")
    client = login("Backflow inspector")
    form = {"account_no": "1-0001", "type": "DCA", "serial": "DC-1", "size": "1 1/2", "installed_on": "2026-01-06"}
    assert errors(client.post(add("device"), {**form, "size": "big"}))["size"] == [
        "'big' is not a size in inches (2, 1.5 or 1 1/2)"]
    assert errors(client.post(add("device"), {**form, "account_no": "9-9999"}))["account_no"] == ["no account '9-9999'"]
    assert "is not one of the available choices" in errors(client.post(add("device"), {**form, "type": "XYZ"}))[
        "type"][0]
    done = client.post(add("device"), form, follow=True)
    registered = Device.objects.get(serial="DC-1")
    assert registered.flagged and registered.size == "1 1/2"
    assert "a DCA is not allowed at these premises: AG, RPZ (§ 45.45 H)" in text(done)
    assert errors(client.post(add("device"), form))["serial"] == ["a device with serial DC-1 is already registered"]


def test_the_device_list_shows_due_overdue_and_flagged_and_filters_them(tmp_path, login):
    village(tmp_path, "lansing")
    bf("require", "1-0001", "--condition", "private_hydrant", date_="2026-01-05")
    late, current = device("RP-LATE", installed_on="2025-06-01"), device("RP-NEW", installed_on="2026-01-05")
    device("RP-SOON", installed_on="2025-12-20")
    flagged = device("DC-BAD", type_="DCA", installed_on="2026-01-05")
    a_tester()
    bf("test", "RP-NEW", "--tested-on", "2026-11-02", "--tester", "NY-1", "--result", "pass", date_="2026-11-02")
    client = login("Backflow inspector")
    changelist = reverse("admin:backflow_device_changelist")
    html = text(client.get(changelist))
    assert "Jun 1, 2026" in html and "Nov 2, 2027" in html  # each device's next test due
    assert html.count('<span class="overdue">overdue</span>') == 1
    assert "a DCA is not allowed at these premises: RPZ (§ 141-13)" in html
    assert "1 Main St" in html
    assert [d.serial for d in client.get(changelist, {"test": "overdue"}).context["cl"].result_list] == [late.serial]
    assert [d.serial for d in client.get(changelist, {"test": "current"}).context["cl"].result_list] == [
        flagged.serial, current.serial]  # due Jan 5, 2027 and Nov 2, 2027
    assert [d.serial for d in client.get(changelist, {"flagged__exact": "1"}).context["cl"].result_list] == [
        flagged.serial]
    assert [d.serial for d in client.get(changelist, {"test": "due"}).context["cl"].result_list] == ["RP-SOON"]
    assert [d.serial for d in client.get(changelist, {"type__exact": "RPZ"}).context["cl"].result_list] == [
        "RP-LATE", "RP-NEW", "RP-SOON"]


@pytest.mark.citation("§ 141-4 C")
def test_record_test_from_the_device_page(tmp_path, login):
    village(tmp_path, "lansing")
    rp = device("RP-9", installed_on="2025-03-01")
    a_tester("NY-123", expires="2026-03-31")
    lapsed = BackflowTester.objects.get()
    client = login("Backflow inspector")
    page = client.get(reverse("admin:backflow_device_change", args=[rp.pk]))
    assert [label for label, _ in page.context["page_buttons"]] == ["Record test", "Serve notice"]
    assert 'name="_save"' not in page.content.decode()
    record = dict(page.context["page_buttons"])["Record test"]
    assert client.get(record).context["form"].initial["serial"] == "RP-9"
    form = {"serial": "RP-9", "tester": lapsed.pk, "tested_on": "2026-04-02", "result": "pass"}
    assert "expired on 2026-03-31" in errors(client.post(add("devicetest"), form))["tester"][0]
    refused = client.post(add("devicetest"), {**form, "tested_on": "2026-03-02", "check_valve_1": "lots"})
    assert errors(refused)["check_valve_1"] == ["'lots' is not a number of psid"]
    assert errors(client.post(add("devicetest"), {**form, "serial": "NOPE"}))["serial"] == ["no device with serial 'NOPE'"]
    assert not DeviceTest.objects.exists()
    done = client.post(add("devicetest"), {**form, "tested_on": "2026-03-02", "check_valve_1": "5.2",
                                           "check_valve_2": "2.1", "relief_valve": "3.0"}, follow=True)
    assert "next test due Mar 2, 2027 (§ 141-4 C; § 141-10 F)" in " ".join(messages_of(done))
    test = DeviceTest.objects.get()
    assert (test.status, test.check_valve_1_psid, test.reviewed_by.username) == ("accepted", D("5.2"), "staff")
    assert "Mar 2, 2027" in text(done)  # back on the device page, with its test inline


def test_testers_are_added_and_changed_and_a_lapsed_one_is_marked(tmp_path, login):
    village(tmp_path, "lansing")
    a_tester("NY-OLD", expires="2026-03-31", name="Old Hand")
    client = login("Backflow inspector")
    form = {"certification_no": "NY-7", "name": "Robin Gauge", "company": "Gauge & Co",
            "certification_expires": "2027-06-30", "gauge_calibrated_on": "2026-10-01", "email": "robin@example.org"}
    assert errors(client.post(add("tester"), {**form, "certification_no": "NY-OLD"}))["certification_no"] == [
        "NYS certification NY-OLD is already registered to Old Hand"]
    assert errors(client.post(add("tester"), {**form, "login": "nobody"}))["login"] == ["no login 'nobody'"]
    assert "in the future" in errors(client.post(add("tester"), {**form, "gauge_calibrated_on": "2027-01-01"}))[
        "gauge_calibrated_on"][0]
    get_user_model().objects.create_user("robin", password="x")
    client.post(add("tester"), {**form, "login": "robin"})
    robin = BackflowTester.objects.get(certification_no="NY-7")
    assert (robin.company, robin.user.username) == ("Gauge & Co", "robin")
    change = reverse("admin:backflow_tester_change", args=[robin.pk])
    assert client.get(change).context["form"].initial["login"] == "robin"
    client.post(change, {**form, "certification_expires": "2028-06-30", "login": ""})
    robin.refresh_from_db()
    assert robin.certification_expires == date(2028, 6, 30) and robin.user is None
    listing = text(client.get(reverse("admin:backflow_tester_changelist")))
    assert '<span class="lapsed">lapsed Mar 31, 2026</span>' in listing and "Jun 30, 2028" in listing
    lapsed = client.get(reverse("admin:backflow_tester_changelist"), {"certification": "lapsed"})
    assert [t.name for t in lapsed.context["cl"].result_list] == ["Old Hand"]


@pytest.mark.citation("§ 141-4 C")
def test_an_inspector_accepts_a_test_submitted_online_and_the_next_due_moves_a_year(tmp_path, login):
    village(tmp_path, "lansing")
    rp = device("RP-5", installed_on="2025-11-01")
    certified = a_tester()
    record_test(device=rp, tester=certified, tested_on=date(2026, 10, 20), result="pass", actor=None,
                as_of=date(2026, 10, 20))
    submitted = record_test(device=rp, tester=certified, tested_on=date(2026, 11, 20), result="pass", actor=None,
                            as_of=date(2026, 11, 20), online=True)
    client = login("Backflow inspector")
    listing = client.get(reverse("admin:backflow_devicetest_changelist"))
    assert [t.pk for t in listing.context["cl"].result_list][0] == submitted.pk  # awaiting the clerk: first
    page = client.get(reverse("admin:backflow_devicetest_change", args=[submitted.pk]))
    html = page.content.decode()
    accept = reverse("admin:backflow_devicetest_accept", args=[submitted.pk])
    assert accept == f"/admin/backflow/devicetest/{submitted.pk}/accept/"
    assert f'action="{accept}"' in html and ">Accept test</button>" in html
    assert reverse("admin:backflow_devicetest_reject", args=[submitted.pk]) in html
    assert "Oct 20, 2027" in text(page)  # due from the accepted test only

    done = client.post(accept, follow=True)
    submitted.refresh_from_db()
    assert submitted.status == "accepted" and submitted.reviewed_by.username == "staff"
    assert "next test due Nov 20, 2027" in " ".join(messages_of(done))
    assert "Nov 20, 2027" in text(done) and ">Accept test</button>" not in done.content.decode()
    again = client.post(accept, follow=True)
    assert "already accepted" in " ".join(messages_of(again))


def test_a_rejected_test_says_why(tmp_path, login):
    village(tmp_path, "lansing")
    rp = device("RP-6", installed_on="2025-11-01")
    submitted = record_test(device=rp, tester=a_tester(), tested_on=date(2026, 11, 20), result="pass", actor=None,
                            as_of=date(2026, 11, 20), online=True)
    client = login("Backflow inspector")
    reject = reverse("admin:backflow_devicetest_reject", args=[submitted.pk])
    assert errors(client.post(reject, {"note": " "}))["note"] == ["a rejected test says why"]
    client.post(reject, {"note": "The gauge's calibration is older than a year."})
    submitted.refresh_from_db()
    assert (submitted.status, submitted.review_note) == ("rejected", "The gauge's calibration is older than a year.")


# --- notices, fines and noncompliance -----------------------------------------------------------------------

@pytest.mark.citation("backflow enforcement B(2)–(3)")
def test_serve_shorten_and_cure_an_old_westbury_violation_notice(tmp_path, login):
    village(tmp_path, "old_westbury")
    client = login("Clerk")
    form = {"account_no": "1-0001", "kind": "violation", "method": "personal", "served_on": "2026-05-04"}
    assert "by personal or suitable age and mail or registered mail (backflow enforcement B(2)–(3))" in errors(
        client.post(add("compliancenotice"), {**form, "method": "first_class_mail"}))["method"][0]
    assert "in the future" in errors(client.post(add("compliancenotice"), {**form, "served_on": "2027-05-04"}))[
        "served_on"][0]
    assert "is not one of the available choices" in errors(client.post(add("compliancenotice"),
                                                                       {**form, "kind": "certification"}))["kind"][0]
    assert errors(client.post(add("compliancenotice"), {**form, "device": "NOPE"}))["device"] == [
        "no device with serial 'NOPE'"]
    client.post(add("compliancenotice"), form)
    notice = ComplianceNotice.objects.get()
    assert (notice.received_on, notice.deadline) == (date(2026, 5, 4), date(2026, 5, 11))

    page = client.get(reverse("admin:backflow_compliancenotice_change", args=[notice.pk]))
    assert [label for label, _ in page.context["page_buttons"]] == ["Shorten window", "Hearing requested",
                                                                    "Complied / paid"]
    shorten = reverse("admin:backflow_compliancenotice_shorten", args=[notice.pk])
    refused = errors(client.post(shorten, {"to": "2026-05-12"}))
    assert refused["to"] == ["2026-05-12 does not shorten the window ending 2026-05-11"]
    assert "the Board of Trustees or the Superintendent" in refused["by"][0]
    client.post(shorten, {"to": "2026-05-06", "by": "the Superintendent", "reason": "a cross-connection to a pool"})
    notice.refresh_from_db()
    assert (notice.deadline, notice.shortened_by) == (date(2026, 5, 6), "the Superintendent")

    pdf = client.get(reverse("admin:backflow_compliancenotice_pdf", args=[notice.pk]))
    assert pdf.status_code == 200 and pdf["Content-Type"] == "application/pdf"
    assert b"".join(pdf.streaming_content).startswith(b"%PDF")
    notice.refresh_from_db()
    assert notice.pdf  # rendered once and stored

    hearing = reverse("admin:backflow_compliancenotice_hearing", args=[notice.pk])
    assert "before the notice was served" in errors(client.post(hearing, {"received_on": "2026-05-01"}))[
        "received_on"][0]
    done = client.post(hearing, {"received_on": "2026-05-05"}, follow=True)
    assert "no test fee follows while the hearing is pending" in " ".join(messages_of(done))
    notice.refresh_from_db()
    assert (notice.status, notice.hearing_requested_on) == ("hearing_requested", date(2026, 5, 5))

    cure = reverse("admin:backflow_compliancenotice_cure", args=[notice.pk])
    assert errors(client.post(cure, {"cured_on": "2026-05-01"}))["cured_on"] == [
        "2026-05-01 is before the notice (2026-05-04)"]
    client.post(cure, {"cured_on": "2026-05-05"})
    notice.refresh_from_db()
    assert (notice.cured_on, notice.status) == (date(2026, 5, 5), "cured")
    assert client.get(reverse("admin:backflow_compliancenotice_change", args=[notice.pk])).context[
        "page_buttons"] == []


@pytest.mark.citation("§ 141-11 B")
def test_the_fine_view_shows_lansings_worked_example_and_charges_it_once(tmp_path, login):
    """Notice 2026-01-01, largest pipe 2", certification still missing on 2026-07-15: 15 days beyond the 180th
    (Jul 1–15) × $25.00 × 2 = $750.00."""
    village(tmp_path, "lansing")
    client = login("Clerk")
    form = {"account_no": "1-0001", "kind": "certification", "method": "certified_mail", "served_on": "2026-01-01"}
    assert "give --largest-pipe (§ 141-11 B)" in errors(client.post(add("compliancenotice"), form))["largest_pipe"][0]
    assert "not a size in inches" in errors(client.post(add("compliancenotice"), {**form, "largest_pipe": "wide"}))[
        "largest_pipe"][0]
    client.post(add("compliancenotice"), {**form, "largest_pipe": "2"})
    notice = ComplianceNotice.objects.get()
    assert notice.largest_pipe_inches == D("2")

    fine = reverse("admin:backflow_compliancenotice_fine")
    page = client.get(fine, {"account_no": "1-0001", "as_of": "2026-07-15"})
    html = text(page)
    assert '<td id="fine-total">$750.00</td>' in html
    assert "15 days × $25.00 × 2 in = $750.00 (Jul 1, 2026–Jul 15, 2026)" in html and "§ 141-11 B" in html
    assert "Not yet charged: $750.00." in html and 'value="Charge to the next bill"' in html
    assert errors(client.get(fine, {"account_no": "9-9999", "as_of": "2026-07-15"}), status=200)["account_no"] == [
        "no account '9-9999'"]

    assert 'id="fine-amount" name="amount" value="750.00"' in html  # the maximum, proposed (§ 141-11 B)
    charge = {"account_no": "1-0001", "as_of": "2026-07-15", "amount": "750.00"}
    assert "more than the maximum of $750.00 § 141-11 B allows" in errors(
        client.post(fine, {**charge, "amount": "750.01"}))["amount"][0]
    first = client.post(fine, charge, follow=True)
    assert "Charged to account 1-0001's next bill: $750.00 (15 days × $25.00 × 2 in = $750.00" in " ".join(
        messages_of(first))
    assert "Every day of it is already charged." in text(first) and "waiting for the next bill" in text(first)
    second = client.post(fine, charge, follow=True)
    assert "Nothing more to charge to account 1-0001" in " ".join(messages_of(second))
    assert [c.amount.amount for c in PendingCharge.objects.all()] == [D("750.00")]
    assert NoticeCharge.objects.get().notice == notice

    inspector = login("Backflow inspector", "inspector")
    assert 'value="Charge to the next bill"' not in text(inspector.get(fine, charge))
    assert inspector.post(fine, {**charge, "as_of": "2026-07-20"}).status_code == 403
    assert PendingCharge.objects.count() == 1


def test_the_reports_page_lists_tests_due_and_downloads_the_annual_summary(tmp_path, login):
    village(tmp_path, "lansing")
    bf("require", "1-0001", "--condition", "private_hydrant", date_="2026-01-05")
    device("RP-LATE", installed_on="2025-06-01")
    device("RP-SOON", installed_on="2025-12-20")  # due Dec 20, 2026: this month
    client = login("Backflow inspector")
    page = client.get(reverse("admin:backflow_device_reports"), {"as_of": "2026-12-01"})
    assert [d.device.serial for d in page.context["overdue"]] == ["RP-LATE"]
    assert [d.device.serial for d in page.context["due_this_month"]] == ["RP-SOON"]
    assert [(key, len(devices)) for key, devices in page.context["by_hazard"]] == [("RPZ", 2)]
    summary = reverse("admin:backflow_device_summary")
    got = client.get(summary, {"year": "2026", "format": "csv"})
    assert got["Content-Type"].startswith("text/csv")
    assert got["Content-Disposition"] == 'attachment; filename="backflow-summary-2026.csv"'
    rows = list(csv.DictReader(io.StringIO(got.content.decode())))
    assert [(r["serial"], r["hazard_allowed"], r["overdue_at_year_end"]) for r in rows] == [
        ("RP-LATE", "RPZ", "yes"), ("RP-SOON", "RPZ", "")]  # as of today, Dec 1
    pdf = client.get(summary, {"year": "2026", "format": "pdf"})
    assert pdf["Content-Type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    refused = client.get(summary, {"year": "2999", "format": "csv"}, follow=True)
    assert "year: '2999' is not a year up to" in " ".join(messages_of(refused))


@pytest.mark.citation("§ 141-5")
def test_acting_on_noncompliance_opens_a_termination_case(tmp_path, login):
    village(tmp_path, "lansing")
    bf("require", "1-0001", "--condition", "private_hydrant", date_="2026-03-01")
    listing = reverse("admin:backflow_compliancenotice_noncompliance")
    inspector = login("Backflow inspector", "inspector")
    page = inspector.get(listing, {"as_of": "2026-03-02"})
    assert "no allowed device installed (RPZ; § 141-13)" in text(page) and "§ 141-5" in text(page)
    assert "Act on noncompliance" not in text(page)  # opening a case is the clerk's
    assert inspector.post(listing, {"account_no": "1-0001", "as_of": "2026-03-02"}).status_code == 403

    clerk = login("Clerk", "clerk")
    assert 'value="Act on noncompliance"' in text(clerk.get(listing, {"as_of": "2026-03-02"}))
    done = clerk.post(listing, {"account_no": "1-0001", "as_of": "2026-03-02"}, follow=True)
    case = TerminationCase.objects.get()
    assert (case.grounds, case.section, case.opened_on) == ("violation", "§ 141-5", date(2026, 3, 2))
    said = " ".join(messages_of(done))
    assert "a termination case is opened on violation grounds (§ 141-5)" in said
    assert reverse("admin:termination_terminationcase_changelist") + "?q=1-0001" in said
    again = clerk.post(listing, {"account_no": "1-0001", "as_of": "2026-03-02"}, follow=True)
    assert "already has case" in " ".join(messages_of(again)) and TerminationCase.objects.count() == 1


@pytest.mark.citation("backflow enforcement")
def test_old_westbury_noncompliance_logs_the_health_hazard(tmp_path, login):
    village(tmp_path, "old_westbury")
    bf("require", "1-0001", "--condition", "cross_connection", date_="2026-03-01")
    clerk = login("Clerk", "clerk")
    clerk.post(reverse("admin:backflow_compliancenotice_noncompliance"), {"account_no": "1-0001",
                                                                          "as_of": "2026-03-02"})
    assert not TerminationCase.objects.exists() and Interruption.objects.get().kind == "health_hazard"


def test_the_admin_home_links_the_backflow_pages_and_others_are_kept_out(tmp_path, login):
    village(tmp_path, "lansing")
    home = text(login("Backflow inspector", "inspector").get(reverse("admin:index")))
    for name in ("backflow_device_reports", "backflow_compliancenotice_noncompliance", "backflow_assessment_add"):
        assert reverse(f"admin:{name}") in home, name
    officer = login("Hearing officer", "officer")
    assert reverse("admin:backflow_device_reports") not in text(officer.get(reverse("admin:index")))
    for name in ("backflow_device_reports", "backflow_compliancenotice_noncompliance", "backflow_compliancenotice_fine",
                 "backflow_assessment_add", "backflow_device_add"):
        assert officer.get(reverse(f"admin:{name}")).status_code == 403, name


@pytest.mark.citation("§ 45.45 H")
def test_the_device_page_says_in_words_whether_its_type_is_allowed(tmp_path, login):
    """An allowed device reads "Yes" beside "type allowed by the premises' rule", never a ✖ beside "type not
    allowed"; a flagged one says "No" and why."""
    village(tmp_path, "mineola")
    bf("require", "1-0001", "--condition", "cross_connection", "--condition", "back_pressure", "--condition",
       "hazardous", date_="2026-01-05")
    allowed, not_allowed = device("RP-OK", type_="RPZ"), device("DC-NO", type_="DCA")
    client = login("Backflow inspector")
    page = text(client.get(reverse("admin:backflow_device_change", args=[allowed.pk])))
    assert "allowed by the premises&#x27; rule:</label> <div class=\"readonly\">Yes</div>" in page
    assert "icon-no.svg" not in page and "icon-yes.svg" not in page
    assert "is not one the premises" not in page
    page = text(client.get(reverse("admin:backflow_device_change", args=[not_allowed.pk])))
    assert "No: a DCA is not allowed at these premises: AG, RPZ (§ 45.45 H)" in page
