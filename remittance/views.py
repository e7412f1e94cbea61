"""Paying online: from the portal (an account linked to the customer's login) or from the bill without an
account (its number and an amount printed on its latest bill), then the processor's checkout page; and the webhook
the processor calls. Without a processor configured, every page says how to pay by mail or at the office."""

import logging
from decimal import Decimal, InvalidOperation

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from accounts.models import Account, PortalLink
from accounts.selectors import account_find
from billing.ordinance import ordinance_on
from core.errors import ApplicationError
from core.money import fmt_dollars
from core.net import client_ip
from core.ratelimit import rate_limit_hit
from core.site import site_url

from .autopay import authorization_text, autopay_cancel, autopay_enrol
from .configured import processor_configured
from .forms import AutopayForm, FindAccountForm, PayForm
from .models import AutopayEnrolment, OnlinePayment
from .processors import EventRefused, ProcessorUnavailable
from .services import amount_owed, latest_bill_amounts, online_payment_start, processor_event_apply
from .vault import vault_ready

logger = logging.getLogger(__name__)
SESSION_KEY = "remittance_account"
FIND_LIMIT, FIND_WINDOW = 10, 900  # tries of an account number and proof per client address, per 15 minutes
CHECKOUTS_KEY = "remittance_checkouts"  # the online payments this browser session started


def _page(request, template: str, context: dict, status: int = 200):
    today = timezone.localdate()
    return render(request, template, {"utility": ordinance_on(today).utility, "online": processor_configured()
                                      is not None, **context}, status=status)


def _proves(account: Account, proof: str, *, owed: Decimal) -> bool:
    """An amount only the bill's reader knows, to the cent: the latest bill's total or the total due it printed,
    or what the account owes today. Nothing a guesser can know proves an account: not the ZIP code (one for the
    whole village), nor the bill number (the month and the account number)."""
    proof = proof.strip().lstrip("$").replace(",", "")
    try:
        amount = Decimal(proof).quantize(Decimal("0.01"))
    except InvalidOperation:
        return False
    if amount <= 0:
        return False
    return amount == owed or amount in latest_bill_amounts(account)


def find_account(request):
    form = FindAccountForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        wait = rate_limit_hit(scope="pay-find", key=client_ip(request) or "unknown", limit=FIND_LIMIT,
                              window_seconds=FIND_WINDOW)
        if wait is not None:
            form.add_error(None, _("Too many tries from here: try again in %(minutes)s minutes, or call the "
                                   "office.") % {"minutes": wait // 60 + 1})
            return _page(request, "remittance/find.html", {"form": form}, status=429)
        account = account_find(form.cleaned_data["account_no"], Account.objects.select_related("owner"))
        owed = amount_owed(account, as_of=timezone.localdate()) if account is not None else Decimal("0")
        if account is None or not _proves(account, form.cleaned_data["proof"], owed=owed):
            # One answer whichever was wrong: the page does not tell which account numbers exist.
            form.add_error(None, _("That account number and amount do not go together. Check them against your "
                                   "latest bill."))
            return _page(request, "remittance/find.html", {"form": form}, status=400)
        request.session[SESSION_KEY] = account.pk
        return redirect("remittance:pay_found")
    return _page(request, "remittance/find.html", {"form": form}, status=400 if form.errors else 200)


def pay_found(request):
    account_id = request.session.get(SESSION_KEY)
    if account_id is None:
        return redirect("remittance:find")
    account = get_object_or_404(Account.objects.select_related("premises"), pk=account_id)
    return _pay(request, account, user=None)


def _linked(request, public_id) -> Account:
    """An account linked to the signed-in customer (404 for any other)."""
    try:
        return Account.objects.select_related("premises").get(public_id=public_id, portal_links__user=request.user)
    except Account.DoesNotExist:
        raise Http404("no such account") from None


@login_required
def pay_linked(request, public_id):
    return _pay(request, _linked(request, public_id), user=request.user)


def _pay(request, account: Account, *, user):
    today = timezone.localdate()
    owed = amount_owed(account, as_of=today)
    form = PayForm(request.POST or None, initial={"amount": owed, "email": getattr(user, "email", "")})
    processor = processor_configured()
    context = {"account": account, "owed": owed, "form": form}
    if request.method == "POST" and processor is not None and form.is_valid():
        try:
            online, url = online_payment_start(processor=processor, account=account, amount=form.cleaned_data["amount"],
                                               as_of=today, user=user, email=form.cleaned_data["email"],
                                               site=site_url(request))
        except ApplicationError as exc:
            for error in exc.errors:
                form.add_error(error.field if error.field in form.fields else None, error.message)
        except ProcessorUnavailable as exc:  # say so, charge nothing
            logger.warning("checkout for account %s not created: %s", account.account_no, exc)
            form.add_error(None, "The payment service cannot be reached just now; nothing was charged. Try again "
                                 "in a few minutes, or pay by mail or at the office.")
        else:
            started = request.session.get(CHECKOUTS_KEY, [])[-19:]
            request.session[CHECKOUTS_KEY] = [*started, str(online.public_id)]
            return HttpResponseRedirect(url)
    return _page(request, "remittance/pay.html", context, status=400 if form.errors else 200)


def _yours(request, online: OnlinePayment) -> bool:
    """The browser session that started the checkout, or a signed-in owner of the account, sees its details."""
    if str(online.public_id) in request.session.get(CHECKOUTS_KEY, []):
        return True
    return request.user.is_authenticated and PortalLink.objects.filter(user=request.user,
                                                                       account=online.account_id).exists()


def done(request, public_id):
    online = get_object_or_404(OnlinePayment.objects.select_related("account", "payment"), public_id=public_id)
    shown = _yours(request, online)
    return _page(request, "remittance/done.html", {"payment": online if shown else None, "status": online.status,
                                                   "amount": fmt_dollars(online.amount.amount) if shown else ""})


def cancelled(request, public_id):
    online = get_object_or_404(OnlinePayment.objects.select_related("account"), public_id=public_id)
    return _page(request, "remittance/cancelled.html", {"payment": online if _yours(request, online) else None})


@csrf_exempt
@require_POST
def webhook(request, processor_name: str):
    processor = processor_configured()
    if processor is None or processor.name != processor_name:
        raise Http404("no such processor")
    try:
        event = processor.event_read(request.body, request.headers.get(processor.signature_header, ""))
    except EventRefused as exc:
        logger.warning("webhook refused: %s", exc)
        return HttpResponse("signature refused", status=400, content_type="text/plain")
    applied = processor_event_apply(processor.name, event)
    return HttpResponse(applied.outcome, status=200, content_type="text/plain")


def test_checkout(request, checkout_id: str):
    """The test processor's checkout page (``TEST_PAYMENTS``, development only): *Pay* sends the event a processor
    would, signed, through the webhook's reading; *Cancel* goes back as the processor's page would."""
    processor = processor_configured()
    if processor is None or processor.name != "test":
        raise Http404("test payments are off")
    from .test_processor import TestProcessor, signature

    online = get_object_or_404(OnlinePayment.objects.select_related("account"), processor="test",
                               checkout_id=checkout_id)
    if request.method == "POST":
        if "cancel" in request.POST:
            return redirect("remittance:cancelled", public_id=online.public_id)
        payload = TestProcessor.paid_event(online)
        processor_event_apply(processor.name, processor.event_read(payload, signature(payload)))
        return redirect("remittance:done", public_id=online.public_id)
    return _page(request, "remittance/test_checkout.html", {"payment": online,
                                                            "amount": fmt_dollars(online.amount.amount)})


@login_required
def autopay(request, public_id):
    """Set up, see or cancel autopay for an account linked to the customer's login."""
    account = _linked(request, public_id)
    current = AutopayEnrolment.objects.filter(account=account).exclude(
        status=AutopayEnrolment.Status.CANCELLED).first()
    form = AutopayForm(request.POST if request.POST.get("action") == "enrol" else None,
                       initial={"email": request.user.email})
    if request.method == "POST" and request.POST.get("action") == "cancel" and current is not None:
        autopay_cancel(enrolment=current, why=f"cancelled online by {request.user.email}", actor=request.user)
        messages.success(request, _("Autopay is off: no more debits. Bills are paid as before."))
        return redirect("remittance:autopay", public_id=account.public_id)
    if form.is_bound and vault_ready() and form.is_valid():
        try:
            enrolment = autopay_enrol(account=account, holder_name=form.cleaned_data["holder_name"],
                                      routing=form.cleaned_data["routing_number"],
                                      account_number=form.cleaned_data["account_number"],
                                      account_type=form.cleaned_data["account_type"], email=form.cleaned_data["email"],
                                      agreed=form.cleaned_data["agree"], user=request.user,
                                      ip_address=client_ip(request))
        except ApplicationError as exc:
            for error in exc.errors:
                form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, _("Autopay is on: each bill is debited on its due date from the account "
                                        "ending %(last4)s, with an email before.") % {"last4": enrolment.account_last4})
            return redirect("remittance:autopay", public_id=account.public_id)
    wording = authorization_text(account=account)
    return _page(request, "remittance/autopay.html", {"account": account, "current": current, "form": form,
                                                       "ready": vault_ready(), "wording": wording},
                 status=400 if form.errors else 200)
