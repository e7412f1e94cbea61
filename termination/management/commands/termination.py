"""``manage.py termination SUBCOMMAND``: termination of service with due process (docs/termination.md, its commands).

Every subcommand takes ``--date`` (the day it acts as of; default today). A refusal prints every reason with
its section and exits 1, and nothing is saved."""

import json
from datetime import time

from django.core.management.base import CommandError

from accounts.selectors import account_get
from core.commands import SubcommandCommand, day_option
from core.money import fmt_dollars

from ...documents import notice_pdf, paper_pdf, work_order_paper
from ...models import TerminationCase, WorkOrder
from ...policy import termination_policy
from ...selectors import case_board, case_get, case_show, delinquencies, list_floor
from ...services import cases as svc
from ...services import shutoff
from ...services.nightly import nightly_deadlines


def _time(value: str | None) -> time | None:
    if not value:
        return None
    try:
        return time.fromisoformat(value)
    except ValueError:
        raise CommandError(f"--hearing-time: '{value}' is not a time; use HH:MM") from None


class Command(SubcommandCommand):
    help = "Termination of service with due process: cases, notices, hearings, appeals, shut-off and restoration."

    def add_subcommands(self):
        add = self.subcommand

        p = add("open", "open a case (prints its number)")
        p.add_argument("account_no")
        p.add_argument("--grounds", required=True, choices=["nonpayment", "violation"])
        p.add_argument("--section", default="",
                       help="the section violated (violation); nonpayment cites the preset's rule")
        p.add_argument("--detail", default="", help="the specific grounds, as the notice states them")
        p.add_argument("--json", action="store_true")

        p = add("open-delinquent", "open a nonpayment case for every delinquent account that has none")
        p.add_argument("account_nos", nargs="*", metavar="ACCOUNT_NO", help="only these accounts")

        p = add("delinquent", "the accounts delinquent on the date under the preset's rule")
        p.add_argument("--json", action="store_true")

        p = add("serve", "record service of the notice on one recipient and render the notice PDF")
        p.add_argument("case")
        p.add_argument("--to", required=True, choices=["owner", "occupant"])
        p.add_argument("--method", required=True,
                       choices=["personal", "certified_mail", "registered_mail", "suitable_age_and_mail"])
        p.add_argument("--served-on", required=True, metavar="D")
        p.add_argument("--received-on", metavar="D")
        p.add_argument("--hearing-on", required=True, metavar="D")
        p.add_argument("--hearing-time", metavar="HH:MM")
        p.add_argument("--hearing-place", default="")
        p.add_argument("--article-number", default="", help="certified or registered mail article number")

        p = add("received", "record the day a mailed notice was received (the return receipt)")
        p.add_argument("case")
        p.add_argument("--to", required=True, choices=["owner", "occupant"])
        p.add_argument("--received-on", required=True, metavar="D")

        p = add("request", "record a written request for the hearing")
        p.add_argument("case")
        p.add_argument("--received-on", required=True, metavar="D")
        p.add_argument("--text", default="")

        p = add("hearing", "record the hearing file: who appeared and the proof heard")
        p.add_argument("case")
        p.add_argument("--attendance", default="")
        p.add_argument("--evidence", default="")

        p = add("determine", "the hearing officer's determination")
        p.add_argument("case")
        p.add_argument("--outcome", required=True, choices=["terminate", "arrangement", "other", "dismiss"])
        p.add_argument("--mailed-on", required=True, metavar="D")
        p.add_argument("--notes", default="")

        p = add("appeal", "the appeal to the Commission")
        p.add_argument("case")
        p.add_argument("--filed-on", required=True, metavar="D")
        p.add_argument("--grounds", required=True)

        p = add("decide", "the Commission's final decision")
        p.add_argument("case")
        p.add_argument("--outcome", required=True, choices=["uphold", "reverse"])
        p.add_argument("--hearing-on", required=True, metavar="D")
        p.add_argument("--notice-mailed-on", required=True, metavar="D")

        p = add("shutoff", "issue the shut-off order (refused listing every unmet condition)")
        p.add_argument("case")
        p.add_argument("--out", metavar="FILE", help="write the work order PDF here")

        p = add("carried-out", "the crew shut the service off: the account is shut off, the disconnect charge charged")
        p.add_argument("case")

        p = add("restore", "restore service once the preset's conditions hold")
        p.add_argument("case")
        p.add_argument("--note", default="")

        p = add("dismiss", "withdraw a case before the shut-off, with the reason")
        p.add_argument("case")
        p.add_argument("--reason", required=True)

        p = add("emergency", "log an interruption the ordinance allows without a hearing")
        p.add_argument("account_no")
        p.add_argument("--kind", required=True)
        p.add_argument("--reason", required=True)
        p.add_argument("--ended-on", metavar="D")

        p = add("show", "the case")
        p.add_argument("case")
        p.add_argument("--json", action="store_true")

        p = add("board", "active cases by stage with each case's next deadline")

        p = add("deadlines", "advance what the calendar decides (the nightly step)")

        p = add("pdf", "write a paper of the case: the notice to a recipient, or a work order")
        p.add_argument("case")
        p.add_argument("--notice", choices=["owner", "occupant"])
        p.add_argument("--work-order", choices=["shut_off", "restore"])
        p.add_argument("--out", required=True, metavar="FILE")

    def do_open(self, as_of, o):
        case = svc.case_open(account=account_get(account_no=o["account_no"]), grounds=o["grounds"], as_of=as_of,
                             actor=None, section=o["section"], detail=o["detail"])
        if o["json"]:
            self.say(json.dumps(case_show(case), indent=2))
        else:
            self.say(case.number)

    def do_open_delinquent(self, as_of, o):
        opened = svc.cases_open_delinquent(as_of=as_of, actor=None, account_nos=o["account_nos"] or None)
        for case in opened:
            self.say(f"{case.number}  {case.account.account_no}  {fmt_dollars(case.amount_delinquent)}")
        self.say(f"{len(opened)} cases opened")

    def do_delinquent(self, as_of, o):
        rows = delinquencies(as_of=as_of)
        if o["json"]:
            self.say(json.dumps([{"account_no": d.account_no, "owner": d.owner, "service_address": d.service_address,
                                   "amount": f"{d.amount:.2f}", "case": d.case_number,
                                   "bills": [{"number": b.number, "due_date": b.due_date.isoformat(),
                                              "amount": f"{b.amount:.2f}"} for b in d.bills]} for d in rows], indent=2))
            return
        for d in rows:
            self.say(f"{d.account_no:<12} {fmt_dollars(d.amount):>12}  {d.owner}, {d.service_address}"
                      + (f"  [case {d.case_number}]" if d.case_number else ""))
        policy = termination_policy()
        if not policy.nonpayment:
            self.say(f"No account is listed: {policy.no_nonpayment}")
            return
        self.say(f"{len(rows)} accounts delinquent on {as_of} (accounts owing less than "
                  f"{fmt_dollars(list_floor())} are left off: office policy, set on the Utility page)")

    def do_serve(self, as_of, o):
        case = case_get(o["case"])
        notice = svc.notice_serve(case=case, role=o["to"], method=o["method"],
                                  served_on=day_option(o, "served_on"),
                                  received_on=day_option(o, "received_on"),
                                  hearing_on=day_option(o, "hearing_on"), hearing_time=_time(o["hearing_time"]),
                                  hearing_place=o["hearing_place"], article_number=o["article_number"], actor=None,
                                  as_of=as_of)
        self.say(f"Notice served on the {notice.role} ({notice.name}) of case {case.number}; hearing "
                  f"{notice.hearing_on}" + (f"; received {notice.received_on}" if notice.received_on else ""))

    def do_received(self, as_of, o):
        case = case_get(o["case"])
        notice = case.notices.filter(role=o["to"]).order_by("-served_on", "-id").first()
        if notice is None:
            raise CommandError(f"refused: to: case {case.number} has no notice served on the {o['to']}")
        svc.notice_received(notice=notice, received_on=day_option(o, "received_on"), actor=None, as_of=as_of)
        self.say(f"Receipt recorded for the notice to the {notice.role} of case {case.number}")

    def do_request(self, as_of, o):
        case = svc.hearing_request(case=case_get(o["case"]), received_on=day_option(o, "received_on"),
                                   actor=None, text=o["text"], as_of=as_of)
        late = " (late: flagged)" if case.request_late else ""
        self.say(f"Hearing request recorded for case {case.number}{late}")

    def do_hearing(self, as_of, o):
        case = svc.hearing_record(case=case_get(o["case"]), attendance=o["attendance"], evidence_notes=o["evidence"],
                                  actor=None, held_on=as_of)
        self.say(f"Hearing file recorded for case {case.number}")

    def do_determine(self, as_of, o):
        case = svc.determination_record(case=case_get(o["case"]), outcome=o["outcome"],
                                        mailed_on=day_option(o, "mailed_on"), actor=None, as_of=as_of,
                                        notes=o["notes"])
        self.say(f"Case {case.number}: {case.get_status_display()}"
                  + (" (by default)" if case.by_default else ""))

    def do_appeal(self, as_of, o):
        case = svc.appeal_file(case=case_get(o["case"]), filed_on=day_option(o, "filed_on"),
                               grounds=o["grounds"], actor=None, as_of=as_of)
        self.say(f"Appeal recorded for case {case.number}" + (" (late: flagged)" if case.appeal_late else ""))

    def do_decide(self, as_of, o):
        case = svc.appeal_decide(case=case_get(o["case"]), outcome=o["outcome"],
                                 hearing_on=day_option(o, "hearing_on"),
                                 notice_mailed_on=day_option(o, "notice_mailed_on"), actor=None,
                                 as_of=as_of)
        self.say(f"Case {case.number}: {case.get_status_display()}")

    def do_shutoff(self, as_of, o):
        order = shutoff.shutoff_order(case=case_get(o["case"]), as_of=as_of, actor=None)
        if o["out"]:
            with open(o["out"], "wb") as f:
                f.write(paper_pdf(work_order_paper(order)))
        self.say(f"Shut-off order {order.pk} issued for case {order.case.number} on {order.issued_on}")

    def do_carried_out(self, as_of, o):
        case = shutoff.shutoff_carry_out(case=case_get(o["case"]), done_on=as_of, actor=None)
        self.say(f"Case {case.number}: service shut off on {as_of}")

    def do_restore(self, as_of, o):
        case = shutoff.service_restore(case=case_get(o["case"]), as_of=as_of, actor=None, note=o["note"])
        self.say(f"Case {case.number}: service restored on {as_of}")

    def do_dismiss(self, as_of, o):
        case = svc.case_dismiss(case=case_get(o["case"]), reason=o["reason"], as_of=as_of, actor=None)
        self.say(f"Case {case.number} dismissed")

    def do_emergency(self, as_of, o):
        i = svc.interruption_log(account=account_get(account_no=o["account_no"]), kind=o["kind"], started_on=as_of,
                                 ended_on=day_option(o, "ended_on"), reason=o["reason"], actor=None)
        self.say(f"Interruption logged: {i.kind} at account {i.account.account_no} from {i.started_on} ({i.citation})")

    def do_show(self, as_of, o):
        case = case_get(o["case"])
        data = case_show(case)
        if o["json"]:
            self.say(json.dumps(data, indent=2))
            return
        self.say(f"Case {data['number']}  account {data['account_no']}  {case.get_status_display()}")
        self.say(f"Grounds: {case.grounds} ({case.section}); delinquent {fmt_dollars(case.amount_delinquent)}")
        for r in data["recipients"]:
            self.say(f"  {r['role']}: {r['method']}, served {r['served_on']}, received {r['received_on'] or '—'}")
        for k, v in data["deadlines"].items():
            self.say(f"  {k.replace('_', ' ')}: {v or '—'}")
        for e in data["events"]:
            self.say(f"  {e['on']}  {e['what']}  ({e['by']})")

    def do_board(self, as_of, o):
        for _status, label, rows in case_board(as_of=as_of):
            self.say(f"{label} ({len(rows)})")
            for case, step in rows:
                self.say(f"  {case.number}  {case.account.account_no:<10} {step.what}"
                          + (f" — {step.on}" if step.on else ""))

    def do_deadlines(self, as_of, o):
        counts = nightly_deadlines(as_of=as_of)
        self.say(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in counts.items()))

    def do_pdf(self, as_of, o):
        case = case_get(o["case"])
        if o["notice"]:
            notice = case.notices.filter(role=o["notice"]).order_by("-served_on", "-id").first()
            if notice is None:
                raise CommandError(f"refused: notice: case {case.number} has no notice to the {o['notice']}")
            data = notice_pdf(notice)
        elif o["work_order"]:
            order = case.orders.filter(kind=o["work_order"]).exclude(status=WorkOrder.Status.CANCELLED).first()
            if order is None:
                raise CommandError(f"refused: work_order: case {case.number} has no {o['work_order']} order")
            data = paper_pdf(work_order_paper(order))
        else:
            raise CommandError("refused: give --notice ROLE or --work-order KIND")
        with open(o["out"], "wb") as f:
            f.write(data)
        self.say(f"Wrote {o['out']}")


__all__ = ["Command", "TerminationCase"]
