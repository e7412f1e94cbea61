"""``manage.py backflow SUBCOMMAND``: backflow and cross-connection compliance (docs/backflow.md, its commands).

Every subcommand takes ``--date`` (the day it acts as of; default today). A refusal prints every reason with
its section and exits 1, and nothing is saved."""

import json
from decimal import Decimal, InvalidOperation

from django.core.management.base import CommandError

from accounts.selectors import account_get
from core.commands import SubcommandCommand, day_option, read_each
from core.errors import ApplicationError
from core.money import fmt_dollars

from ...models import ComplianceNotice
from ...policy import device_rule
from ...reports import annual_summary_csv, annual_summary_pdf
from ...services import compliance as svc
from ...services import fines


def _inches(value: str | None, name: str) -> Decimal | None:
    if value is None:
        return None
    text = value.strip().replace('"', "")
    try:
        if " " in text or "/" in text:
            whole, _, frac = text.rpartition(" ")
            num, _, den = frac.partition("/")
            number = Decimal(whole or 0) + (Decimal(num) / Decimal(den) if den else Decimal(num))
        else:
            number = Decimal(text)
    except (InvalidOperation, ArithmeticError, ValueError):
        raise ApplicationError(f"'{value}' is not a size in inches (2, 1.5 or 1 1/2)", field=f"--{name}") from None
    return number


def _dollars(value: str | None, name: str) -> Decimal | None:
    if value is None:
        return None
    try:
        return Decimal(value)
    except InvalidOperation:
        raise ApplicationError(f"'{value}' is not an amount in dollars", field=f"--{name}") from None




class Command(SubcommandCommand):
    help = "Backflow and cross-connection compliance: assessments, devices, testers, tests, notices, fines."

    def add_subcommands(self):
        add = self.subcommand

        add("conditions", "the condition codes of the preset's device rule, with their citations")

        p = add("require", "record the premises' assessment and answer which devices are allowed")
        p.add_argument("account_no")
        p.add_argument("--condition", action="append", default=[], metavar="CODE")
        p.add_argument("--note", default="", help="the inspector's determination, where the rule needs one")
        p.add_argument("--reason", default="", help="why an air gap cannot reasonably be met, where asked")
        p.add_argument("--json", action="store_true")

        p = add("device", "register a device; a type the premises' rule does not allow is flagged")
        p.add_argument("account_no")
        p.add_argument("--type", required=True, choices=["AG", "RPZ", "DCA", "AVB", "PVB"])
        p.add_argument("--serial", required=True)
        p.add_argument("--size", required=True, metavar="INCHES")
        p.add_argument("--installed-on", required=True, metavar="D")
        p.add_argument("--make", default="")
        p.add_argument("--model", default="")
        p.add_argument("--location", default="")

        p = add("tester", "register (or update) a certified tester")
        p.add_argument("certification_no")
        p.add_argument("--name", required=True)
        p.add_argument("--expires", required=True, metavar="D")
        p.add_argument("--gauge-calibrated-on", metavar="D")
        p.add_argument("--company", default="")

        p = add("test", "record a test; a tester whose certification has lapsed is refused")
        p.add_argument("serial")
        p.add_argument("--tested-on", required=True, metavar="D")
        p.add_argument("--tester", required=True, metavar="CERT_NO")
        p.add_argument("--result", required=True, choices=["pass", "fail"])
        p.add_argument("--cv1", metavar="PSID")
        p.add_argument("--cv2", metavar="PSID")
        p.add_argument("--rv", metavar="PSID", help="relief valve opening")
        p.add_argument("--repairs", default="")
        p.add_argument("--by-department", action="store_true",
                       help="the Department's own agents performed it (Old Westbury: the test its fee is for)")

        p = add("notice", "serve a compliance notice; its deadline follows the preset")
        p.add_argument("account_no")
        p.add_argument("--kind", required=True)
        p.add_argument("--served-on", required=True, metavar="D")
        p.add_argument("--method", default="")
        p.add_argument("--received-on", metavar="D")
        p.add_argument("--article-number", default="")
        p.add_argument("--largest-pipe", metavar="INCHES")
        p.add_argument("--per-day", metavar="DOLLARS",
                       help="the daily fine imposed on the notice, where the section lets the office set it")
        p.add_argument("--device", metavar="SERIAL")

        p = add("shorten", "shorten a notice's window for exigent circumstances (Old Westbury)")
        p.add_argument("notice", type=int)
        p.add_argument("--to", required=True, metavar="D")
        p.add_argument("--by", required=True)
        p.add_argument("--reason", required=True)

        p = add("hearing-requested", "the owner's written request for a hearing on a notice was received")
        p.add_argument("notice", type=int)
        p.add_argument("--on", required=True, metavar="D")

        p = add("cured", "the owner complied with a notice (or paid the fee demanded)")
        p.add_argument("notice", type=int)
        p.add_argument("--on", required=True, metavar="D")

        p = add("fine", "the fine accrued on the date for the account's open notices")
        p.add_argument("account_no")
        p.add_argument("--json", action="store_true")
        p.add_argument("--post", action="store_true", help="charge it for the next bill, once")
        p.add_argument("--amount", metavar="DOLLARS", help="the fine the clerk imposes, up to the maximum where the "
                                                           "section sets only one (\"shall not exceed\")")

        p = add("due", "devices whose test is due or overdue on the date")
        p.add_argument("--json", action="store_true")
        p.add_argument("--within", type=int, default=30, metavar="DAYS")

        p = add("noncompliance", "premises that qualify for discontinuance")
        p.add_argument("--act", metavar="ACCOUNT_NO", help="open the termination case (or log the health hazard)")

        p = add("summary", "the annual summary for the Health Department")
        p.add_argument("--year", type=int, required=True)
        p.add_argument("--format", choices=["csv", "pdf"], default="csv")
        p.add_argument("--out", metavar="FILE")

    def do_conditions(self, as_of, o):
        for condition in device_rule().conditions():
            self.say(f"{condition.code:<32} {condition.label} ({condition.citation})")

    def do_require(self, as_of, o):
        assessment = svc.assessment_record(account=account_get(account_no=o["account_no"]), codes=o["condition"],
                                           as_of=as_of, actor=None, note=o["note"], reason=o["reason"])
        answer = {"required": assessment.required, "allowed": assessment.allowed, "citation": assessment.citation}
        if o["json"]:
            self.say(json.dumps(answer))
            return
        self.say(("Required: " + ", ".join(assessment.allowed)) if assessment.required else "No device required")
        self.say(f"({assessment.citation})")
        for line in assessment.trace:
            self.say(f"  {line}")

    def do_device(self, as_of, o):
        device = svc.device_register(account=account_get(account_no=o["account_no"]), type=o["type"],
                                     serial=o["serial"], size=o["size"],
                                     installed_on=day_option(o, "installed_on"), actor=None, make=o["make"],
                                     model=o["model"], location=o["location"])
        self.say(f"Device {device.type} {device.serial} registered at account {device.account.account_no}"
                  + (f"; FLAGGED: {device.flag_reason}" if device.flagged else ""))

    def do_tester(self, as_of, o):
        tester = svc.tester_register(certification_no=o["certification_no"], name=o["name"],
                                     certification_expires=day_option(o, "expires"),
                                     gauge_calibrated_on=day_option(o, "gauge_calibrated_on"),
                                     company=o["company"])
        self.say(f"Tester {tester}: certified until {tester.certification_expires}")

    def do_test(self, as_of, o):
        got = read_each(device=lambda: svc.device_get(o["serial"]), tester=lambda: svc.tester_get(o["tester"]),
                    tested_on=lambda: day_option(o, "tested_on"))
        device = got["device"]
        test = svc.test_record(device=device, tester=got["tester"], tested_on=got["tested_on"], result=o["result"],
                               actor=None, as_of=as_of, check_valve_1=o["cv1"], check_valve_2=o["cv2"],
                               relief_valve=o["rv"], repairs=o["repairs"], by_department=o["by_department"])
        due = svc.device_due(device, as_of=max(as_of, test.tested_on))
        self.say(f"Test of {device.serial} on {test.tested_on}: {test.result}; next test due {due.due_on} "
                  f"({due.citation})")

    def do_notice(self, as_of, o):
        got = read_each(account=lambda: account_get(account_no=o["account_no"]),
                    device=lambda: svc.device_get(o["device"]) if o["device"] else None,
                    served_on=lambda: day_option(o, "served_on"),
                    received_on=lambda: day_option(o, "received_on"),
                    largest_pipe=lambda: _inches(o["largest_pipe"], "largest-pipe"),
                    per_day=lambda: _dollars(o["per_day"], "per-day"))
        notice = svc.notice_serve(account=got["account"], kind=o["kind"], served_on=got["served_on"], actor=None,
                                  method=o["method"], as_of=as_of, received_on=got["received_on"],
                                  article_number=o["article_number"], device=got["device"],
                                  largest_pipe=got["largest_pipe"], per_day=got["per_day"])
        self.say(f"Notice {notice.pk} ({notice.get_kind_display().lower()}) served on {notice.served_on}"
                  + (f"; deadline {notice.deadline}" if notice.deadline else "") + f" ({notice.citation})")

    def do_shorten(self, as_of, o):
        notice = svc.notice_shorten(notice=_notice(o["notice"]), to=day_option(o, "to"), by=o["by"],
                                    reason=o["reason"])
        self.say(f"Notice {notice.pk}: window shortened to {notice.deadline} by {notice.shortened_by}")

    def do_hearing_requested(self, as_of, o):
        notice = svc.notice_hearing_request(notice=_notice(o["notice"]), received_on=day_option(o, "on"), actor=None,
                                            as_of=as_of)
        self.say(f"Notice {notice.pk}: written request for a hearing received {notice.hearing_requested_on}")

    def do_cured(self, as_of, o):
        notice = svc.notice_cure(notice=_notice(o["notice"]), cured_on=day_option(o, "on"))
        self.say(f"Notice {notice.pk}: complied with on {notice.cured_on}")

    def do_fine(self, as_of, o):
        account = account_get(account_no=o["account_no"])
        quote = fines.fine_quote(account=account, as_of=as_of)
        if o["post"]:
            posted = fines.fine_post(account=account, as_of=as_of, actor=None,
                                   amount=_dollars(o["amount"], "amount") if o["amount"] else None)
            quote["posted"] = [{"notice": c.notice_id, "amount": f"{c.charge.amount.amount:.2f}",
                                "computation": c.computation} for c in posted]
        if o["json"]:
            self.say(json.dumps(quote, indent=2))
            return
        self.say(f"Fine accrued on {as_of} for account {account.account_no}: {fmt_dollars(Decimal(quote['amount']))}")
        for line in fines.fine_lines(account=account, as_of=as_of):
            self.say(f"  notice {line.notice.pk}: {line.computation} ({line.citation})")
        for posted in quote.get("posted", []):
            self.say(f"  charged for the next bill: ${posted['amount']} ({posted['computation']})")

    def do_due(self, as_of, o):
        rows = svc.devices_due(as_of=as_of, within_days=o["within"])
        if o["json"]:
            self.say(json.dumps([{"serial": d.device.serial, "type": d.device.type,
                                   "account_no": d.device.account.account_no, "due_on": d.due_on.isoformat(),
                                   "overdue": d.overdue, "citation": d.citation} for d in rows], indent=2))
            return
        for d in rows:
            self.say(f"{d.device.serial:<14} {d.device.type:<4} {d.device.account.account_no:<10} due {d.due_on}"
                      + ("  OVERDUE" if d.overdue else ""))
        self.say(f"{len(rows)} devices due or overdue on {as_of}")

    def do_noncompliance(self, as_of, o):
        if o["act"]:
            found = svc.noncompliance_act(account=account_get(account_no=o["act"]), as_of=as_of, actor=None)
            self.say(f"Account {found.account.account_no}: noncompliance acted on ({found.section})")
            return
        rows = svc.noncompliance(as_of=as_of)
        for n in rows:
            self.say(f"{n.account.account_no:<10} {n.section}: {'; '.join(n.reasons)}")
        self.say(f"{len(rows)} premises qualify for discontinuance on {as_of}")

    def do_summary(self, as_of, o):
        data = (annual_summary_pdf if o["format"] == "pdf" else annual_summary_csv)(year=o["year"], as_of=as_of)
        if o["out"]:
            with open(o["out"], "wb") as f:
                f.write(data if isinstance(data, bytes) else data.encode())
            self.say(f"Wrote {o['out']}")
        else:
            self.stdout.write(data if isinstance(data, str) else data.decode("latin-1"))


def _notice(pk: int) -> ComplianceNotice:
    notice = ComplianceNotice.objects.select_related("account").filter(pk=pk).first()
    if notice is None:
        raise CommandError(f"refused: notice: no backflow notice {pk}")
    return notice
