"""The case pages: the read-only case, its steps, the delinquency list, the board, the timeline and the papers."""


from django import forms
from django.contrib import admin, messages
from django.contrib.admin.views.main import ChangeList
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from accounts.models import Account
from core.admin import (
    CsvExportMixin,
    ReadOnlyInline,
    StatusChangeInline,
)
from core.clock import refuse_future, today
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars
from core.papers import paper_pdf

from ..documents import determination_pdf_store, notice_pdf_store, work_order_paper
from ..models import CaseBill, CaseEvent, Notice, TerminationCase, WorkOrder
from ..policy import termination_policy
from ..selectors import (
    case_board,
    case_deadlines,
    case_next_step,
    case_pay,
    current_notices,
    delinquencies,
    list_floor,
)
from ..services import cases as svc
from ..services.cases import HEARD
from .actions import ACTIONS, CaseAction
from .common import PERMISSIONS, TerminationAdmin, day_param, installed_policy, pdf_response
from .forms import OpenCaseForm

# --- the case page ------------------------------------------------------------------------------------

class NoticeInline(ReadOnlyInline):
    model = Notice
    after = "Grounds"
    fields = readonly_fields = ("role", "name", "method", "article_number", "served_on", "received_on", "hearing_on",
                                "paper")
    verbose_name_plural = "notices served"

    @admin.display(description="PDF")
    def paper(self, obj):
        return format_html('<a href="{}">Notice PDF</a>',
                           reverse("admin:termination_terminationcase_notice_pdf", args=[obj.case_id, obj.pk]))


class CaseBillInline(ReadOnlyInline):
    model = CaseBill
    after = "Grounds"
    fields = readonly_fields = ("bill_link", "bill_date", "due_date", "delinquent_from", "amount_shown")
    verbose_name_plural = "bills delinquent when the case was opened"

    @admin.display(description="bill")
    def bill_link(self, obj):
        return format_html('<a href="{}">{}</a>', reverse("admin:billing_bill_change", args=[obj.bill_id]),
                           obj.bill.number)

    @admin.display(description="dated")
    def bill_date(self, obj):
        return obj.bill.bill_date

    @admin.display(description="due")
    def due_date(self, obj):
        return obj.bill.due_date

    @admin.display(description="unpaid then")
    def amount_shown(self, obj):
        return fmt_dollars(obj.amount)

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("bill")


class WorkOrderInline(ReadOnlyInline):
    model = WorkOrder
    after = "Appeal"
    fields = readonly_fields = ("kind", "status", "issued_on", "issued_by", "done_on", "cancel_reason", "paper")
    verbose_name_plural = "work orders"

    @admin.display(description="paper")
    def paper(self, obj):
        return format_html('<a href="{}">Print work order</a>',
                           reverse("admin:termination_terminationcase_work_order_pdf", args=[obj.case_id, obj.pk]))


class CaseEventInline(ReadOnlyInline):
    model = CaseEvent
    after = "Appeal"
    fields = readonly_fields = ("on", "what", "by", "needs_a_look")
    verbose_name_plural = "timeline"

    @admin.display(description="needs a look")
    def needs_a_look(self, obj):
        return "Yes: late" if obj.flagged else "—"


class CaseChangeList(ChangeList):
    """Works out each listed case's next step once per page, with the preset's rules read once."""

    def get_results(self, request):
        super().get_results(request)
        policy, as_of = installed_policy(), today()
        for case in self.result_list:
            case.next_step = case_next_step(case, as_of=as_of, policy=policy) if policy else None


@admin.register(TerminationCase)
class TerminationCaseAdmin(CsvExportMixin, TerminationAdmin):
    list_display = ("number", "account", "owner", "grounds", "amount_shown", "status", "hearing_on", "next_step_shown",
                    "next_step_on", "flagged")
    list_filter = ("status", "grounds")
    search_fields = ("number", "account__account_no", "account__owner__name")
    list_select_related = ("account", "account__owner", "account__occupant")
    change_form_template = "admin/termination/terminationcase/change_form.html"
    fieldsets = (
        (None, {"fields": ("number", "account_link", "status", "next_step_detail", "deadlines", "flag_detail")}),
        ("Grounds", {"fields": ("grounds", "section", "grounds_detail", "amount_shown", "unpaid_today",
                                "opened_on", "opened_by")}),
        ("Hearing", {"fields": ("hearing_on", "hearing_time", "hearing_place", "request_received_on", "request_via",
                                "request_timing", "request_text", "attendance", "evidence_notes")}),
        ("Determination", {"fields": ("outcome", "determination_basis", "determined_on", "determined_by",
                                      "determination_mailed_on", "outcome_notes", "determination_paper")}),
        ("Appeal", {"fields": ("appeal_filed_on", "appeal_timing", "appeal_grounds", "decision", "appeal_hearing_on",
                               "appeal_notice_mailed_on", "decided_on", "closed_on")}),
    )
    inlines = (NoticeInline, CaseBillInline, WorkOrderInline, CaseEventInline, StatusChangeInline)

    def get_readonly_fields(self, request, obj=None):
        return [name for _, options in self.fieldsets for name in options["fields"]]

    def has_add_permission(self, request):
        return request.user.has_perm("termination.add_terminationcase")

    def get_queryset(self, request):
        return super().get_queryset(request).prefetch_related("notices")

    def get_changelist(self, request, **kwargs):
        return CaseChangeList

    # -- columns and read-only fields

    @admin.display(description="owner", ordering="account__owner__name")
    def owner(self, obj):
        return obj.account.owner.name

    @admin.display(description="the case is for", ordering="amount_delinquent")
    def amount_shown(self, obj):
        return fmt_dollars(obj.amount_delinquent) if obj.grounds == "nonpayment" else "—"

    @admin.display(description="next step")
    def next_step_shown(self, obj):
        step = getattr(obj, "next_step", None)
        return step.what if step else "—"

    @admin.display(description="by")
    def next_step_on(self, obj):
        step = getattr(obj, "next_step", None)
        return step.on if step and step.on else "—"

    @admin.display(description="flagged", boolean=True)
    def flagged(self, obj):
        return obj.request_late or obj.appeal_late

    # Every yes/no a clerk reads here says in words what is true of the case: a bare ✖ beside "received after
    # the window closed" reads, in a hearing file, as the opposite of what it means.

    @admin.display(description="flagged for the hearing officer")
    def flag_detail(self, obj):
        late = [what for what, is_late in (
            ("the request for a hearing came after its window closed", obj.request_late),
            ("the appeal was filed after its window closed", obj.appeal_late)) if is_late]
        return "Yes: " + "; ".join(late) if late else "No"

    @admin.display(description="request timing")
    def request_timing(self, obj):
        if obj.request_received_on is None:
            return "No written request received"
        if obj.request_late:
            return "Late: received after the request window closed (accepted and flagged)"
        return "On time: received within the request window"

    @admin.display(description="determined")
    def determination_basis(self, obj):
        if not obj.outcome:
            return "—"
        if obj.by_default:
            return "By default: no timely written request for a hearing"
        return "After the hearing"

    @admin.display(description="appeal timing")
    def appeal_timing(self, obj):
        if obj.appeal_filed_on is None:
            return "No appeal filed"
        if obj.appeal_late:
            return "Late: filed after the appeal window closed (accepted and flagged)"
        return "On time: filed within the appeal window"

    @admin.display(description="account")
    def account_link(self, obj):
        account = obj.account
        return format_html('<a href="{}">{}</a> · {} · {}', reverse("admin:accounts_account_change", args=[account.pk]),
                           account.account_no, account.owner.name, account.premises.service_address)

    @admin.display(description="next step")
    def next_step_detail(self, obj):
        policy = installed_policy()
        if policy is None:
            return "—"
        step = case_next_step(obj, as_of=today(), policy=policy)
        if step.on is None:
            return step.what
        late = step.on < today() and obj.is_active
        return format_html('{} — <span class="{}">{}</span>', step.what, "overdue" if late else "",
                           fmt_day(step.on) + (" (overdue)" if late else ""))

    @admin.display(description="deadlines")
    def deadlines(self, obj):
        policy = installed_policy()
        if policy is None:
            return "—"
        d = case_deadlines(obj, policy=policy)
        rows = [(f"earliest lawful hearing ({policy.cite('notice')})", d.hearing_earliest),
                (f"written request by ({policy.cite('request')})", d.request_by),
                (f"appeal by ({policy.cite('appeal')})", d.appeal_by),
                (f"earliest appeal hearing ({policy.cite('appeal')})", d.appeal_hearing_earliest)]
        shown = [(label, fmt_day(day)) for label, day in rows if day]
        return format_html_join(" · ", "{}: {}", shown) or "—"

    @admin.display(description="to pay (today)")
    def unpaid_today(self, obj):
        pay = case_pay(obj, as_of=today())
        if pay is None:
            return "—"
        detail = f" ({pay.detail})" if pay.detail else ""
        return f"{pay.words}: {fmt_dollars(pay.amount)}{detail}"

    @admin.display(description="notice of the determination")
    def determination_paper(self, obj):
        if not obj.outcome:
            return "—"
        return format_html('<a href="{}">{} PDF</a>',
                           reverse("admin:termination_terminationcase_determination_pdf", args=[obj.pk]),
                           "Decision" if obj.decided_on else "Determination")

    # -- the pages

    def get_urls(self):
        view = self.admin_site.admin_view
        urls = [
            path("board/", view(self.board_view), name="termination_terminationcase_board"),
            path("delinquent/", view(self.delinquent_view), name="termination_terminationcase_delinquent"),
            path("docket/", view(self.docket_view), name="termination_terminationcase_docket"),
            path("<int:pk>/timeline/", view(self.timeline_view), name="termination_terminationcase_timeline"),
            path("<int:pk>/notices/<int:notice_pk>/pdf/", view(self.notice_pdf_view),
                 name="termination_terminationcase_notice_pdf"),
            path("<int:pk>/determination/pdf/", view(self.determination_pdf_view),
                 name="termination_terminationcase_determination_pdf"),
            path("<int:pk>/orders/<int:order_pk>/pdf/", view(self.work_order_pdf_view),
                 name="termination_terminationcase_work_order_pdf"),
        ]
        urls += [path(f"<int:pk>/{a.slug.replace('_', '-')}/", view(self.action_view), {"slug": a.slug},
                      name=a.url_name) for a in ACTIONS.values()]
        return urls + super().get_urls()

    def _case(self, request, pk) -> TerminationCase:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return get_object_or_404(TerminationCase.objects.select_related(
            "account", "account__owner", "account__occupant", "account__premises"), pk=pk)

    def offered_actions(self, request, case: TerminationCase) -> list[CaseAction]:
        return [a for a in ACTIONS.values() if request.user.has_perm(PERMISSIONS[a.permission]) and a.offered(case)]

    def header_links(self, request) -> list[tuple[str, str]]:
        return [("Case board", reverse("admin:termination_terminationcase_board")),
                ("Delinquency list", reverse("admin:termination_terminationcase_delinquent")),
                ("Hearing docket", reverse("admin:termination_terminationcase_docket"))]

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        return [(a.label, reverse(f"admin:{a.url_name}", args=[obj.pk])) for a in self.offered_actions(request, obj)]

    add_label = "Open a termination case"
    form_class = OpenCaseForm
    intro = ("Nonpayment needs an amount delinquent on the day under the preset's rule; the case keeps each "
             "delinquent bill and what it owed. A violation names the section violated. The delinquency list opens "
             "cases for many accounts at once.")

    def add_title(self) -> str:
        return "Open a termination case"

    def add_initial(self, request) -> dict:
        return {"grounds": "nonpayment"}

    def added_url(self, form) -> str:
        return self.object_url(form.case)

    def action_view(self, request, pk, slug):
        action = ACTIONS[slug]
        if not request.user.has_perm(PERMISSIONS[action.permission]):
            raise PermissionDenied
        case = self._case(request, pk)
        policy = self.installed_rules()
        if policy is None:
            return self.no_rules_redirect(request)
        case_url = self.object_url(case)
        if not action.offered(case):
            self.message_user(request, f"“{action.label}” is not a step for case {case.number}: it is "
                                       f"{case.get_status_display().lower()}.", messages.WARNING)
            return HttpResponseRedirect(case_url)
        # A date in the address (?issued_on=…) is the form's starting date: the conditions are shown for it.
        initial = {name: value for name, value in request.GET.items() if name in action.form.base_fields}
        form = action.form(request.POST or None, case=case, policy=policy, initial=initial)
        refusals = action.refusals(case, form.day) if action.refusals else None
        return self.run_form(request, form, done_url=case_url, obj=case, intro=action.intro, refusals=refusals,
                             refusals_title=action.refusals_title, refusals_day=form.day,
                             next_step=case_next_step(case, as_of=today(), policy=policy),
                             title=f"{action.label}: case {case.number}")

    def board_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if self.installed_rules() is None:
            return self.no_rules_redirect(request)
        as_of = day_param(request, "as_of") or today()
        stages = [(status, label, [(case, step, bool(step.on and step.on < as_of and status != "final"))
                                   for case, step in rows])
                  for status, label, rows in case_board(as_of=as_of)]
        return TemplateResponse(request, "admin/termination/terminationcase/board.html", self.page_context(
            request, stages=stages, as_of=as_of, title=f"Case board on {fmt_day(as_of)}",
            total=sum(len(rows) for _, _, rows in stages)))

    def docket_view(self, request):
        """The hearing officer's docket: every case waiting for its hearing, by hearing date, with its file, the
        notices served, the earliest lawful hearing date, and the one page that records the hearing and the
        determination once the day has come."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        policy = self.installed_rules()
        if policy is None:
            return self.no_rules_redirect(request)
        on = today()
        may_decide = request.user.has_perm(PERMISSIONS["determine"])
        hearing = reverse(f"admin:{ACTIONS['hearing'].url_name}", args=[0])
        cases = (TerminationCase.objects.filter(status__in=HEARD, hearing_on__isnull=False)
                 .select_related("account__owner", "account__premises").prefetch_related("notices")
                 .order_by("hearing_on", "number"))
        rows = [{"case": case, "deadlines": case_deadlines(case, policy=policy),
                 "notices": list(current_notices(case).values()), "due": case.hearing_on <= on,
                 "url": hearing.replace("/0/", f"/{case.pk}/") + f"?held_on={case.hearing_on.isoformat()}"
                 if may_decide and case.hearing_on <= on else ""} for case in cases]
        return TemplateResponse(request, "admin/termination/terminationcase/docket.html", self.page_context(
            request, rows=rows, on=on, may_decide=may_decide, title="Hearing docket"))

    def delinquent_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        if self.installed_rules() is None:
            return self.no_rules_redirect(request)
        as_of = day_param(request, "as_of") or today()
        try:
            refuse_future(as_of, field="as_of", doing="listed")
        except ApplicationError as exc:
            self.message_user(request, str(exc.errors[0].message), messages.ERROR)
            as_of = today()
        url = reverse("admin:termination_terminationcase_delinquent") + f"?as_of={as_of.isoformat()}"
        can_open = self.has_add_permission(request)
        if request.method == "POST":
            if not can_open:
                raise PermissionDenied
            chosen = request.POST.getlist("account_no")
            if not chosen:
                self.message_user(request, "No account was selected.", messages.WARNING)
            for account in Account.objects.filter(account_no__in=chosen).order_by("account_no"):
                try:
                    case = svc.case_open(account=account, grounds="nonpayment", as_of=as_of, actor=request.user)
                except ApplicationError as exc:
                    self.message_user(request, f"{account.account_no}: not opened: "
                                               + "; ".join(e.message for e in exc.errors), messages.WARNING)
                else:
                    self.message_user(request, format_html(
                        'Case <a href="{}">{}</a> opened for account {}: {} delinquent.',
                        reverse("admin:termination_terminationcase_change", args=[case.pk]), case.number,
                        account.account_no, fmt_dollars(case.amount_delinquent)), messages.SUCCESS)
            return HttpResponseRedirect(url)
        policy, floor = termination_policy(), list_floor()
        everyone = delinquencies(as_of=as_of, policy=policy, floor=ZERO)
        listed = [d for d in everyone if d.amount >= floor or d.case_number]
        narrowed = DelinquentListForm(request.GET or None)
        rows, shown = narrowed.rows(listed, page=request.GET.get("page"))
        cases = dict(TerminationCase.objects.filter(number__in=[d.case_number for d in shown if d.case_number])
                     .values_list("number", "pk"))
        return TemplateResponse(request, "admin/termination/terminationcase/delinquent.html", self.page_context(
            request, rows=shown, table_rows=_delinquent_rows(shown, cases, can_open=can_open), as_of=as_of,
            can_open=can_open and policy.nonpayment, rule=policy.trigger, policy=policy, floor=floor,
            below_floor=len(everyone) - len(listed), title=f"Delinquency list on {fmt_day(as_of)}",
            narrowed=narrowed, listed=len(listed), found=len(rows), page=shown,
            found_amount=fmt_dollars(sum((d.amount for d in rows), ZERO)),
            headers=narrowed.headers(request), pages=narrowed.page_links(request, shown)))

    def timeline_view(self, request, pk):
        case = self._case(request, pk)
        return TemplateResponse(request, "admin/termination/terminationcase/timeline.html", {
            "case": case, "events": case.events.select_related("actor"), "notices": list(case.notices.all()),
            "printed_on": today(), "utility": (installed_policy().utility_name if installed_policy() else ""),
            "title": f"Timeline of case {case.number}"})

    def notice_pdf_view(self, request, pk, notice_pk):
        case = self._case(request, pk)
        notice = get_object_or_404(Notice, pk=notice_pk, case=case)
        if not notice.pdf:
            notice_pdf_store(notice_id=notice.pk)
            notice.refresh_from_db()
        return pdf_response(notice.pdf, f"{case.number}-notice-{notice.role}.pdf")

    def determination_pdf_view(self, request, pk):
        case = self._case(request, pk)
        if not case.outcome:
            self.message_user(request, f"Case {case.number} has no determination yet.", messages.WARNING)
            return HttpResponseRedirect(reverse("admin:termination_terminationcase_change", args=[case.pk]))
        if not case.determination_pdf:
            determination_pdf_store(case_id=case.pk)
            case.refresh_from_db()
        kind = "decision" if case.decided_on else "determination"
        return pdf_response(case.determination_pdf, f"{case.number}-{kind}.pdf")

    def work_order_pdf_view(self, request, pk, order_pk):
        case = self._case(request, pk)
        order = get_object_or_404(WorkOrder.objects.select_related("case__account__premises"), pk=order_pk, case=case)
        response = HttpResponse(paper_pdf(work_order_paper(order)), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="{case.number}-work-order-{order.pk}.pdf"'
        return response


class DelinquentListForm(forms.Form):
    """The delinquency list narrowed (a book, a least amount, with or without a case), ordered by a column and
    shown a page at a time; refusals name their field and show every row."""

    PAGE_ROWS = 100
    # In the order of the table's columns (the service address and the bills, not sortable, stand before "since").
    SORTS = {"account": ("Account", lambda d: d.account_no), "owner": ("Owner", lambda d: d.owner.lower()),
             "since": ("Delinquent since", lambda d: min(b.delinquent_from for b in d.bills)),
             "amount": ("Amount", lambda d: d.amount)}

    book = forms.IntegerField(label="Book", required=False, min_value=0)
    minimum = forms.DecimalField(label="Owing at least ($)", required=False, min_value=0, max_digits=12,
                                 decimal_places=2)
    case = forms.ChoiceField(label="Case", required=False, choices=(
        ("", "With or without"), ("none", "No case yet"), ("open", "With a case")))
    sort = forms.ChoiceField(required=False, choices=[(key, key) for key in SORTS], widget=forms.HiddenInput)
    dir = forms.ChoiceField(required=False, choices=(("asc", "asc"), ("desc", "desc")), widget=forms.HiddenInput)

    def chosen(self) -> dict:
        return self.cleaned_data if self.is_bound and self.is_valid() else {}

    def rows(self, listed, *, page):
        """The rows chosen, and the page of them shown."""
        chosen = self.chosen()
        rows = listed
        if chosen.get("book") is not None:
            books = dict(Account.objects.filter(pk__in=[d.account_id for d in rows]).values_list("pk", "book"))
            rows = [d for d in rows if books.get(d.account_id) == chosen["book"]]
        if chosen.get("minimum") is not None:
            rows = [d for d in rows if d.amount >= chosen["minimum"]]
        if chosen.get("case"):
            rows = [d for d in rows if bool(d.case_number) == (chosen["case"] == "open")]
        sort = chosen.get("sort") or "account"
        rows = sorted(rows, key=self.SORTS[sort][1], reverse=chosen.get("dir") == "desc")
        return rows, Paginator(rows, self.PAGE_ROWS).get_page(page)

    def headers(self, request) -> list[dict]:
        chosen = self.chosen()
        on, descending = chosen.get("sort") or "account", chosen.get("dir") == "desc"
        headers = []
        for key, (label, _) in self.SORTS.items():
            query = request.GET.copy()
            query["sort"] = key
            query["dir"] = ("asc" if descending else "desc") if key == on else ("desc" if key == "amount" else "asc")
            query.pop("page", None)
            headers.append({"key": key, "label": label, "url": f"?{query.urlencode()}",
                            "aria_sort": ("descending" if descending else "ascending") if key == on else ""})
        return headers

    def page_links(self, request, page) -> dict:
        def url(number: int) -> str:
            query = request.GET.copy()
            query["page"] = str(number)
            return f"?{query.urlencode()}"

        return {"previous": url(page.previous_page_number()) if page.has_previous() else "",
                "next": url(page.next_page_number()) if page.has_next() else ""}


def _delinquent_rows(rows, cases: dict[str, int], *, can_open: bool):
    """The delinquency list's rows, written here rather than by a template loop: a village's two thousand
    delinquent accounts in milliseconds (the template's filters took most of the page's time)."""
    case_url = reverse("admin:termination_terminationcase_change", args=[0])

    def row(d) -> str:
        pick = format_html('<td><input type="checkbox" name="account_no" value="{}" id="open-{}" '
                           'aria-label="Open a case for account {}"></td>', d.account_no, d.account_no, d.account_no)
        bills = format_html_join(mark_safe("<br>"), "{} (due {}; ${} eligible since {})",
                                 ((b.number, fmt_day(b.due_date), b.amount, fmt_day(b.delinquent_from))
                                  for b in d.bills))
        case = (format_html('<a href="{}">{}</a>', case_url.replace("/0/", f"/{cases[d.case_number]}/"),
                            d.case_number) if d.case_number in cases else "—")
        return format_html('<tr>{}<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class="r">{}</td>'
                           "<td>{}</td></tr>",
                           (mark_safe("<td></td>") if d.case_number else pick) if can_open else "",
                           d.account_no, d.owner, d.service_address, bills,
                           fmt_day(min(b.delinquent_from for b in d.bills)), fmt_dollars(d.amount), case)

    return mark_safe("\n".join(row(d) for d in rows))  # each row escaped by format_html
