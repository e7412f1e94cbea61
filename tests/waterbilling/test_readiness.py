"""Go-live readiness: ``manage.py readiness`` and the Supervisor's admin page list what is still sample, default or
missing — each with what to do — and nothing on a site that is configured for real."""

import io
import json
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.urls import reverse

from accounts.roles import ROLE_PERMISSIONS
from billing.models import RateSchedule
from core.db import database_identity
from core.models import NightlyRun
from ordinance.models import Utility
from tests.factories import clerk_user
from tests.ordinance_steps import section_set

pytestmark = pytest.mark.django_db


def readiness() -> tuple[int, list[dict]]:
    out = io.StringIO()
    try:
        call_command("readiness", "--json", stdout=out)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, json.loads(out.getvalue())


def staff_in(role: str):
    user = get_user_model().objects.create_user(role.lower().replace(" ", "_"), is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    return user


def test_an_installed_preset_lists_its_samples_and_defaults(mineola):
    code, findings = readiness()
    assert code == 1
    said = " | ".join(f["what"] for f in findings)
    assert "holds the preset's sample rates" in said
    assert "returned check or debit charges no fee" in said
    assert "general ledger codes are the Uniform System's defaults" in said
    assert "e-mail is not sent" in said  # the tests' in-memory backend
    assert "the address printed on bills and e-mails is http://" in said
    assert "no one is in Clerk, Supervisor" in said
    assert "the nightly job has not run" in said
    assert "no backups are configured" in said
    assert all(f["fix"] for f in findings)


def configured(settings, tmp_path):
    """Everything a live site settles, but the restore drill."""
    settings.DEBUG = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.SMS_BACKEND = "notices.sms.TwilioBackend"
    settings.TWILIO_ACCOUNT_SID, settings.TWILIO_AUTH_TOKEN, settings.TWILIO_FROM = "AC1", "token", "+15165550100"
    settings.ANYMAIL = {"WEBHOOK_SECRET": "postmark:a-long-secret"}  # bounces and complaints heard
    settings.SITE_URL = "https://water.example-village.org"
    RateSchedule.objects.update(is_sample=False)
    Utility.objects.update(returned_payment_fee=Decimal("20.00"), is_demo_site=False)
    section_set("gl", fund="F", confirmed=True)
    for role in ROLE_PERMISSIONS:
        staff_in(role)
    NightlyRun.objects.create(run_on=NightlyRun._meta.get_field("run_on").to_python("2026-12-05"))
    settings.BACKUP_DIR = str(tmp_path)
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "waterbilling-2026-12-05.dump").write_bytes(b"PGDMP")


def drill_record(folder, *, identity: str, dump: str = "waterbilling-2026-12-05.dump") -> None:
    (folder / "restore-drill.json").write_text(json.dumps({
        "tied_out_at": "2026-12-06T04:10:00+00:00", "dump": dump,
        "database": {"name": "waterbilling_drill", "identity": identity}}))


def test_a_configured_site_lists_nothing(mineola, settings, tmp_path):
    configured(settings, tmp_path)
    _, findings = readiness()
    assert [f["what"] for f in findings] == ["no restore drill has tied out in the last 90 days"]
    drill_record(tmp_path, identity="postgresql:7716705120921708705:99999")  # a restored copy's
    code, findings = readiness()
    assert (code, findings) == (0, [])
    out = io.StringIO()
    call_command("readiness", stdout=out)
    assert out.getvalue().startswith("Ready to go live")


def test_a_drill_run_on_the_live_database_or_naming_no_dump_proves_no_restore(mineola, settings, tmp_path):
    configured(settings, tmp_path)
    drill_record(tmp_path, identity=database_identity())  # control_totals --compare run here, on the live books
    code, findings = readiness()
    assert code == 1
    assert [f["what"] for f in findings] == [
        "the last restore drill compared the live database, not a copy restored from a dump: it proves no restore"]
    assert "--dump DUMP" in findings[0]["fix"]
    drill_record(tmp_path, identity="postgresql:1:2", dump="")
    assert [f["what"] for f in readiness()[1]] == ["the last restore drill names no dump it was restored from"]
    (tmp_path / "restore-drill.json").write_text("{}")  # a record of the old kind, or anything else
    assert "does not say which database it compared" in readiness()[1][0]["what"]


def test_debugging_and_texts_that_go_nowhere_are_named_with_their_fix(mineola, settings, tmp_path):
    configured(settings, tmp_path)
    drill_record(tmp_path, identity="postgresql:1:2")
    settings.DEBUG = True
    settings.SMS_BACKEND = "notices.sms.ConsoleBackend"
    found = {f["what"].split(":")[0]: f["fix"] for f in readiness()[1]}
    assert set(found) == {"debugging is on (DJANGO_DEBUG)", "texts are not sent"}
    assert found["debugging is on (DJANGO_DEBUG)"].startswith("unset DJANGO_DEBUG")
    assert "SMS_BACKEND to notices.sms.TwilioBackend" in found["texts are not sent"]
    settings.DEBUG = False
    settings.SMS_BACKEND = "notices.sms.TwilioBackend"
    settings.TWILIO_AUTH_TOKEN = settings.TWILIO_FROM = ""
    said = [f["what"] for f in readiness()[1]]
    assert len(said) == 2 and all(s.startswith("texts are on (SMS_BACKEND is Twilio's) but TWILIO_") for s in said)
    settings.TWILIO_AUTH_TOKEN = settings.TWILIO_FROM = "x"
    settings.ANYMAIL = {"WEBHOOK_SECRET": ""}
    assert [f["what"] for f in readiness()[1]] == [
        "e-mail is sent but the mail provider's bounces and complaints are not heard: its webhook is off without "
        "ANYMAIL_WEBHOOK_SECRET"]


def test_half_set_up_payment_channels_are_named(mineola, settings):
    settings.STRIPE_SECRET_KEY, settings.STRIPE_WEBHOOK_SECRET = "sk_live_x", ""
    settings.BANK_ACCOUNT_KEY, settings.ACH_ODFI_ROUTING = "key", ""
    _, findings = readiness()
    said = " | ".join(f["what"] for f in findings)
    assert "online payment is half set up: STRIPE_WEBHOOK_SECRET is missing" in said
    assert "autopay is half set up: ACH_ODFI_ROUTING, ACH_ODFI_NAME, ACH_COMPANY_ID, ACH_COMPANY_NAME missing" in said


def test_the_supervisor_opens_the_page_and_the_clerk_does_not(mineola, client):
    client.force_login(staff_in("Supervisor"))
    page = client.get(reverse("admin:readiness"))
    assert page.status_code == 200
    assert "sample rates" in page.content.decode() and "What to do, and where" in page.content.decode()
    client.force_login(clerk_user())
    assert client.get(reverse("admin:readiness")).status_code == 403


def test_the_supervisors_home_page_says_what_is_left_before_going_live(mineola, client):
    client.force_login(staff_in("Supervisor"))
    home = client.get(reverse("admin:index")).content.decode()
    assert 'id="dashboard-readiness"' in home and "to settle before going live" in home
    assert reverse("admin:readiness") in home
    client.force_login(clerk_user())
    assert 'id="dashboard-readiness"' not in client.get(reverse("admin:index")).content.decode()


def test_a_drill_whose_record_cannot_be_written_says_where_and_why(mineola, settings, tmp_path):
    """The totals of a copy (here this database, the totals said to be another's) tie out, but BACKUP_DIR is no
    folder the site can write in: the command says so, naming it, rather than failing with a traceback."""
    out = io.StringIO()
    call_command("control_totals", "--json", stdout=out)
    before = json.loads(out.getvalue())
    before["database"]["identity"] = "postgresql:1:2"  # taken on the live database, this being the restored copy
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "not-a-folder").write_text("")
    settings.BACKUP_DIR = str(tmp_path / "not-a-folder")
    with pytest.raises(CommandError, match=r"the drill tied out but its record cannot be written in .*not-a-folder: "
                                           r"Not a directory; BACKUP_DIR must be writable by the site's user"):
        call_command("control_totals", "--compare", str(tmp_path / "before.json"), "--dump", "d.dump",
                     stdout=io.StringIO())
    settings.BACKUP_DIR = str(tmp_path)
    said = io.StringIO()
    call_command("control_totals", "--compare", str(tmp_path / "before.json"), "--dump", "d.dump", stdout=said)
    assert said.getvalue().splitlines()[-1] == f"Recorded in {tmp_path / 'restore-drill.json'}: " \
        f"{before['database']['name']}, restored from d.dump."
