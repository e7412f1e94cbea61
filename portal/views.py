"""Customer portal pages: thin views over ``portal.selectors`` and ``portal.services``.

Every page that shows an account or a bill looks it up by its public UUID through the signed-in
customer's links, so another customer's identifiers answer 404; a termination case is looked up by its
number the same way.
"""

from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError, transaction
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from arrears.models import PaymentPlan
from arrears.services import plan_standing
from backflow.services.compliance import device_get, test_record
from billing.charts import consumption_chart_svg
from billing.services.bill_pdfs import bill_pdf_bytes
from core import clock
from core.dates import fmt_day
from core.errors import ApplicationError
from core.i18n import office_language
from core.net import client_ip
from core.ratelimit import rate_limit_hit
from remittance.autopay import autopay_active
from remittance.configured import processor_configured
from remittance.vault import vault_ready
from termination.documents import determination_pdf_store, notice_pdf_store
from termination.services.cases import hearing_request

from . import selectors, services
from .forms import (
    ChoosePasswordForm,
    DeviceTestForm,
    HearingRequestForm,
    LinkAccountForm,
    PaperlessForm,
    PortalPasswordResetForm,
    SignInForm,
    SignUpForm,
)
from .middleware import SESSION_KEY, remember_account_language


def _add_errors(form, exc: ApplicationError) -> None:
    for error in exc.errors:
        form.add_error(error.field if error.field in form.fields else None, error.message[:1].upper()
                       + error.message[1:])


def _chart(points, element_id: str):
    from django.utils.safestring import mark_safe

    svg = consumption_chart_svg(points, tooltips=True, element_id=element_id,
                                title=_("Water use in gallons per bill, last 24 months (table below)"))
    return mark_safe(svg)  # noqa: S308 - every text in it is escaped by consumption_chart_svg


def _daily(account) -> dict:
    from .daily_use import account_daily_use, daily_chart

    days = account_daily_use(account, through=timezone.localdate())
    return {"daily_days": days, "daily_chart": daily_chart(days)} if days else {}


def utility_context(request):
    """The utility's name and contact for every portal page (used as a context helper, not a processor)."""
    ordinance = selectors.installed_ordinance(timezone.localdate())
    return ordinance.utility if ordinance is not None else None


def _render(request, template: str, context: dict, status: int = 200):
    """A portal page; the utility is looked up for it unless the context has it already."""
    if "utility" not in context:
        context = {"utility": utility_context(request), **context}
    return render(request, template, {"online": processor_configured() is not None, "autopay": vault_ready(),
                                      **context}, status=status)


def home(request):
    if not request.user.is_authenticated:
        return _render(request, "portal/welcome.html", {})
    return _render(request, "portal/home.html", {
        **selectors.home_overview(request.user, as_of=timezone.localdate()), "link_form": LinkAccountForm(),
    })


def sign_up(request):
    """The same answer whether or not the email already has a login: "check your email"."""
    if request.user.is_authenticated:
        return redirect("portal:home")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            services.customer_sign_up_request(email=form.cleaned_data["email"], ip_address=client_ip(request),
                                              now=timezone.now())
        except services.SignUpThrottled as exc:
            _add_errors(form, exc)
            return _render(request, "portal/signup.html", {"form": form}, status=429)
        return redirect("portal:signup_sent")
    return _render(request, "portal/signup.html", {"form": form}, status=400 if form.errors else 200)


def sign_up_sent(request):
    return _render(request, "portal/signup_sent.html", {})


def sign_up_finish(request, token):
    """The emailed link: choose a password, and be signed in."""
    email = services.sign_up_token_read(token=token)
    if email is None:
        return _render(request, "portal/signup_finish.html", {"invalid": True}, status=400)
    if get_user_model().objects.filter(username__iexact=email).exists():
        return _render(request, "portal/signup_finish.html", {"finished": True}, status=400)
    form = ChoosePasswordForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = services.customer_sign_up(email=email, password=form.cleaned_data["password1"])
        except ApplicationError as exc:
            _add_errors(form, exc)
        else:
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, _("Welcome. Link your water account with the number and access code on "
                                        "your bill."))
            return redirect("portal:home")
    return _render(request, "portal/signup_finish.html", {"form": form, "email": email},
                   status=400 if form.errors else 200)


class SignInView(auth_views.LoginView):
    template_name = "portal/login.html"
    authentication_form = SignInForm
    next_page = reverse_lazy("portal:home")
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        return {"utility": utility_context(self.request), **super().get_context_data(**kwargs)}


class SignOutView(auth_views.LogoutView):
    next_page = reverse_lazy("portal:login")


class _UtilityContext:
    def get_context_data(self, **kwargs):
        return {"utility": utility_context(self.request), **super().get_context_data(**kwargs)}


class PasswordResetView(_UtilityContext, auth_views.PasswordResetView):
    template_name = "portal/password_reset_form.html"
    email_template_name = "portal/email/password_reset.txt"
    subject_template_name = "portal/email/password_reset_subject.txt"
    form_class = PortalPasswordResetForm
    success_url = reverse_lazy("portal:password_reset_done")


class PasswordResetDoneView(_UtilityContext, auth_views.PasswordResetDoneView):
    template_name = "portal/password_reset_done.html"


class PasswordResetConfirmView(_UtilityContext, auth_views.PasswordResetConfirmView):
    template_name = "portal/password_reset_confirm.html"
    success_url = reverse_lazy("portal:password_reset_complete")


class PasswordResetCompleteView(_UtilityContext, auth_views.PasswordResetCompleteView):
    template_name = "portal/password_reset_complete.html"


@login_required
def account_link(request):
    form = LinkAccountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            account = services.account_link(user=request.user, account_no=form.cleaned_data["account_no"],
                                            access_code=form.cleaned_data["access_code"],
                                            ip_address=client_ip(request))
        except services.LinkThrottled as exc:
            _add_errors(form, exc)
            return _render(request, "portal/link.html", {"form": form}, status=429)
        except ApplicationError as exc:
            _add_errors(form, exc)
        else:
            if not request.session.get(SESSION_KEY):  # the first account linked: its language is the portal's
                remember_account_language(request, request.user)
            messages.success(request, _("Account %(number)s is now linked.") % {"number": account.account_no})
            return redirect("portal:account", public_id=account.public_id)
    return _render(request, "portal/link.html", {"form": form}, status=400 if form.errors else 200)


@login_required
def account_detail(request, public_id):
    account = selectors.account_get_for_customer(request.user, public_id)
    overview = selectors.account_overview(account=account, as_of=timezone.localdate())
    plan = (PaymentPlan.objects.filter(account=account).exclude(status=PaymentPlan.Status.CANCELLED)
            .order_by("-started_on", "-id").prefetch_related("installments").first())
    return _render(request, "portal/account.html", {
        "account": account, **overview, **selectors.account_cases(account=account, as_of=timezone.localdate()),
        "plan": plan, "plan_standing": plan_standing(plan, as_of=timezone.localdate())
        if plan is not None and plan.status == PaymentPlan.Status.ACTIVE else None,
        "chart": _chart(overview["points"], "chart-account"),
        **_daily(account),
        "paperless_form": PaperlessForm(initial={"paperless": account.paperless}),
        "autopay_enrolment": autopay_active(account),
    })


@login_required
@require_POST
def account_paperless(request, public_id):
    account = selectors.account_get_for_customer(request.user, public_id)
    form = PaperlessForm(request.POST)
    if form.is_valid():
        services.account_paperless_set(account=account, paperless=form.cleaned_data["paperless"],
                                       actor=request.user)
        messages.success(request, _("Paperless bills are on: we will email you when a bill is ready.")
                         if account.paperless else _("Paperless bills are off: bills will come by mail."))
    return redirect("portal:account", public_id=account.public_id)


@login_required
def bill_detail(request, public_id):
    bill = selectors.bill_get_for_customer(request.user, public_id)
    detail = selectors.bill_detail(bill=bill, as_of=timezone.localdate())
    return _render(request, "portal/bill.html", {
        "bill": bill, "account": bill.account, **detail, "chart": _chart(detail["points"], "chart-bill"),
    })


# A bill's PDF is rendered once and then read from storage; the limit keeps one customer (or a script with
# their session) from making the site render or read files without end.
PDF_DOWNLOADS = 30
PDF_WINDOW_SECONDS = 600


def _form_throttled(request, form, *, scope: str, limit: int, window_seconds: int, message, page):
    """A form's POST counted against the customer's limit: None within it; past it, the form's page (``page``,
    given the status) with ``message`` above the form, 429 and when to try again."""
    wait = rate_limit_hit(scope=scope, key=str(request.user.pk), limit=limit, window_seconds=window_seconds)
    if wait is None:
        return None
    form.is_valid()
    form.add_error(None, message)
    response = page(429)
    response["Retry-After"] = str(wait)
    return response


def _too_many_downloads(request, wait: int, kind: str):
    response = _render(request, "portal/too_many_downloads.html", {
        "kind": kind, "limit": PDF_DOWNLOADS, "window_minutes": PDF_WINDOW_SECONDS // 60,
        "wait_minutes": (wait + 59) // 60,
    }, status=429)
    response["Retry-After"] = str(wait)
    return response


@login_required
def bill_pdf(request, public_id):
    wait = rate_limit_hit(scope="bill-pdf", key=str(request.user.pk), limit=PDF_DOWNLOADS,
                          window_seconds=PDF_WINDOW_SECONDS)
    if wait is not None:
        return _too_many_downloads(request, wait, "bill")
    bill = selectors.bill_get_for_customer(request.user, public_id)
    response = HttpResponse(bill_pdf_bytes(bill=bill), content_type="application/pdf")
    response["Content-Disposition"] = f'attachment; filename="water-bill-{bill.number}.pdf"'
    response["Cache-Control"] = "private, no-store"
    return response


# --- Termination cases ----------------------------------------------------------------------------------

# A customer asks for their hearing once; the limit keeps a script with their session from posting without end.
HEARING_REQUEST_POSTS = 10
HEARING_REQUEST_WINDOW_SECONDS = 600
HEARING_REQUEST_THROTTLED = gettext_lazy("Too many tries to send a request in the last 10 minutes. Wait a few minutes "
                                  "and try again, or call the water office.")


def _case_page(request, case, form=None, status: int = 200):
    detail = selectors.case_detail(case=case, user=request.user, as_of=timezone.localdate())
    if form is None and detail["can_request"]:
        form = HearingRequestForm()
    return _render(request, "portal/termination_case.html", {**detail, "form": form}, status=status)


@login_required
def termination_case(request, number):
    return _case_page(request, selectors.case_get_for_customer(request.user, number))


@login_required
@require_POST
def termination_request(request, number):
    """The customer's written request for the hearing, received today; a late one is accepted and flagged."""
    case = selectors.case_get_for_customer(request.user, number)
    form = HearingRequestForm(request.POST)
    if throttled := _form_throttled(request, form, scope="hearing-request", limit=HEARING_REQUEST_POSTS,
                                    window_seconds=HEARING_REQUEST_WINDOW_SECONDS, message=HEARING_REQUEST_THROTTLED,
                                    page=lambda status: _case_page(request, case, form, status=status)):
        return throttled
    if not selectors.case_request_open(case):
        form.is_valid()
        stage = str(selectors.CUSTOMER_STAGE[case.status])
        form.add_error(None, (
            _("A hearing can no longer be asked for online: %(stage)s.") % {"stage": stage[0].lower() + stage[1:]}
            if case.request_received_on is None else
            _("Your request for a hearing was already received on %(day)s.") % {
                "day": fmt_day(case.request_received_on)})
            + " " + _("Call or write to the water office."))
    elif form.is_valid():
        try:
            with office_language():
                case = hearing_request(case=case, received_on=clock.today(), actor=request.user, via="portal",
                                       text=form.cleaned_data["text"], by="customer online")
        except ApplicationError as exc:
            _add_errors(form, exc)
        else:
            messages.success(request, selectors.request_confirmation(case))
            return redirect("portal:termination_case", number=case.number)
    return _case_page(request, case, form, status=400)


def _case_pdf_refused(request):
    """The download limit, shared by a case's papers (apart from the bills' own)."""
    wait = rate_limit_hit(scope="case-pdf", key=str(request.user.pk), limit=PDF_DOWNLOADS,
                          window_seconds=PDF_WINDOW_SECONDS)
    return None if wait is None else _too_many_downloads(request, wait, "notice")


def _stored_pdf(field, filename: str):
    response = FileResponse(field.open("rb"), content_type="application/pdf", as_attachment=True, filename=filename)
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
def termination_notice_pdf(request, number, notice_id):
    """A notice served on the account: the stored paper, rendered and stored first if it is not yet."""
    if refused := _case_pdf_refused(request):
        return refused
    notice = selectors.notice_get_for_customer(request.user, number, notice_id)
    if not notice.pdf:
        notice_pdf_store(notice_id=notice.pk)
        notice.refresh_from_db(fields=["pdf"])
    return _stored_pdf(notice.pdf, f"termination-notice-{notice.case.number}-{notice.role}.pdf")


@login_required
def termination_determination_pdf(request, number):
    """The notice of the determination (or of the final decision on appeal), once there is one."""
    if refused := _case_pdf_refused(request):
        return refused
    case = selectors.case_get_for_customer(request.user, number)
    if not case.determination_mailed_on:
        raise Http404("no determination yet")
    if not case.determination_pdf:
        determination_pdf_store(case_id=case.pk)
        case.refresh_from_db(fields=["determination_pdf"])
    return _stored_pdf(case.determination_pdf, f"termination-determination-{case.number}.pdf")


# --- Backflow testers --------------------------------------------------------------------------------------

# A tester may enter a day's tests in one sitting; the limit keeps a script with their session from posting
# without end.
TEST_SUBMIT_POSTS = 30
TEST_SUBMIT_WINDOW_SECONDS = 600
TEST_SUBMIT_THROTTLED = ("Too many tests sent in the last 10 minutes. Wait a few minutes and try again, or call "
                         "the water office.")


def _not_a_tester(request):
    """A login that is no tester's: said plainly, with whom to call."""
    return _render(request, "portal/not_a_tester.html", {}, status=403)


@login_required
def tester_home(request):
    tester = selectors.tester_for_user(request.user)
    if tester is None:
        return _not_a_tester(request)
    return _render(request, "portal/tester_home.html", selectors.tester_overview(tester=tester, as_of=clock.today()))


def _submit_page(request, tester, form, status: int = 200):
    return _render(request, "portal/tester_submit.html", {
        "tester": tester, "form": form,
        "certification": selectors.tester_certification(tester, as_of=clock.today())}, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def tester_submit(request):
    """The form, and its POST: the test recorded online, where it waits for the clerk to accept it."""
    tester = selectors.tester_for_user(request.user)
    if tester is None:
        return _not_a_tester(request)
    if request.method != "POST":
        return _submit_page(request, tester, DeviceTestForm(today=clock.today()))
    today = clock.today()
    form = DeviceTestForm(request.POST, today=today)
    if throttled := _form_throttled(request, form, scope="tester-submit", limit=TEST_SUBMIT_POSTS,
                                    window_seconds=TEST_SUBMIT_WINDOW_SECONDS, message=TEST_SUBMIT_THROTTLED,
                                    page=lambda status: _submit_page(request, tester, form, status=status)):
        return throttled
    if form.is_valid():
        values = form.cleaned_data
        try:
            with transaction.atomic(), office_language():
                test = test_record(
                    device=device_get(values["serial"]), tester=tester, tested_on=values["tested_on"],
                    result=values["result"], actor=request.user, as_of=today, online=True,
                    check_valve_1=values["check_valve_1_psid"], check_valve_2=values["check_valve_2_psid"],
                    relief_valve=values["relief_valve_opening_psid"], repairs=values["repairs"])
        except ApplicationError as exc:
            _add_errors(form, exc)
        except IntegrityError:
            # The same test sent twice at the same moment (a double click): the first one was recorded.
            form.add_error("tested_on", "This test of the device on that day is already recorded.")
        else:
            return redirect("portal:tester_test", test_id=test.pk)
    return _submit_page(request, tester, form, status=400)


@login_required
def tester_test(request, test_id):
    """One of the tester's tests: right after sending it, the confirmation that it was received."""
    tester = selectors.tester_for_user(request.user)
    if tester is None:
        return _not_a_tester(request)
    return _render(request, "portal/tester_test.html", {"tester": tester,
                                                        "test": selectors.tester_test_get(tester, test_id)})
