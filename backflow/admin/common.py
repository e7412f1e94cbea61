"""What the backflow admin pages share: the installed policy, links and words, and the base admin."""

from decimal import Decimal
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from accounts.models import Account
from core.errors import ApplicationError
from meters.units import size_inches

from ..documents import METHOD_WORDS
from ..models import ComplianceNotice
from ..policy import BackflowPolicy, backflow_policy

FORM_TEMPLATE = "admin/backflow/form.html"


def installed_policy() -> BackflowPolicy | None:
    try:
        return backflow_policy()
    except ApplicationError:
        return None


def no_policy_redirect(request) -> HttpResponseRedirect:
    messages.error(request, "No preset with backflow rules is installed (manage.py setup_utility PRESET).")
    return HttpResponseRedirect(reverse("admin:index"))


def admin_url(name: str, *args, **query) -> str:
    url = reverse(f"admin:{name}", args=args)
    return f"{url}?{urlencode(query)}" if query else url


def kind_words(kind: str) -> str:
    return ComplianceNotice.Kind(kind).label if kind in ComplianceNotice.Kind.values else kind


def rule_words(kind: str, policy: BackflowPolicy) -> str:
    rule = policy.notices[kind]
    window = (f"{rule.days} days from the {'date of the notice' if rule.counted_from == 'served' else 'receipt'}"
              if rule.days else "effective on service")
    return (f"{kind_words(kind)}: {window}, by " + " or ".join(METHOD_WORDS[m] for m in rule.methods)
            + f" ({rule.citation})")


def account_link(account: Account) -> str:
    return format_html('<a href="{}">{}</a> · {} · {}', reverse("admin:accounts_account_change", args=[account.pk]),
                       account.account_no, account.owner.name, account.premises.service_address)


# --- forms: each calls one service ----------------------------------------------------------------------


class InchesField(forms.CharField):
    """A size in inches as a clerk writes it: 2, 1.5 or 1 1/2."""

    def to_python(self, value):
        text = (super().to_python(value) or "").replace('"', "").strip()
        if not text:
            return None
        try:
            inches = size_inches(text)
        except (ValueError, ZeroDivisionError):
            raise forms.ValidationError(f"'{value}' is not a size in inches (2, 1.5 or 1 1/2)") from None
        if inches <= 0:
            raise forms.ValidationError(f"'{value}' is not a size in inches: it must be more than 0")
        return Decimal(inches.numerator) / Decimal(inches.denominator)


# --- shared page parts ------------------------------------------------------------------------------------


def header_links(request) -> list[tuple[str, str]]:
    user, links = request.user, []
    if user.has_perm("backflow.view_device"):
        links.append(("Backflow reports", reverse("admin:backflow_device_reports")))
    if user.has_perm("backflow.view_compliancenotice"):
        links.append(("Noncompliance", reverse("admin:backflow_compliancenotice_noncompliance")))
        policy = installed_policy()
        if policy is not None and policy.fine is not None:
            links.append(("Fine accrued", reverse("admin:backflow_compliancenotice_fine")))
    return links


class BackflowAdmin(admin.ModelAdmin):
    """A backflow list with the backflow pages in its header, an add button that says what it does, and
    read-only pages whose buttons (``page_buttons``) lead to their forms."""

    add_label = "Add"

    @admin.display(description="account", ordering="account__account_no")
    def account_no(self, obj):
        return obj.account.account_no

    @admin.display(description="account")
    def account_link(self, obj):
        return account_link(obj.account)

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {**(extra_context or {}), "add_label": self.add_label,
                                                 "header_links": header_links(request)})

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        return []

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id) if str(object_id).isdigit() else None
        buttons = self.page_buttons(request, obj) if obj is not None and self.has_view_permission(request, obj) else []
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "page_buttons": buttons})

    def _context(self, request, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def _form_page(self, request, form, *, title: str, intro: str = "", obj=None, facts=(), back: str = ""):
        return TemplateResponse(request, FORM_TEMPLATE, self._context(
            request, form=form, title=title, intro=intro, obj=obj, facts=facts, back=back,
            obj_url=reverse(f"admin:backflow_{self.model._meta.model_name}_change", args=[obj.pk]) if obj else ""))

    def _service_add_page(self, request, make_form, *, done_url, title: str, intro: str, level=None):
        """An "add" page whose form calls one service: refused without the add permission, sent to the preset
        setup without a backflow policy; on success the service's message (at ``level(form)``, success by
        default) and ``done_url(form)``."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        policy = installed_policy()
        if policy is None:
            return no_policy_redirect(request)
        form = make_form(policy)
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, level(form) if level else messages.SUCCESS)
                return HttpResponseRedirect(done_url(form))
        return self._form_page(request, form, title=title, intro=intro)

    def _need(self, request, perm: str) -> None:
        if not request.user.has_perm(perm):
            raise PermissionDenied
