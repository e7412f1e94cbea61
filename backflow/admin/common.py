"""What the backflow admin pages share: the installed policy, links and words, and the base admin."""

from decimal import Decimal
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.urls import reverse
from django.utils.html import format_html

from accounts.models import Account
from core.admin import ServicePagesAdmin
from meters.units import size_inches

from ..documents import METHOD_WORDS
from ..models import ComplianceNotice
from ..policy import BackflowPolicy, backflow_policy


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


class BackflowAdmin(ServicePagesAdmin):
    """A backflow list with the backflow pages in its header and read-only pages whose buttons lead to their
    forms, each form calling one service under the installed preset's backflow rules."""

    rules = staticmethod(backflow_policy)
    rules_words = "backflow"
    change_list_template = "admin/backflow/change_list.html"
    change_form_template = "admin/backflow/change_form.html"

    @admin.display(description="account", ordering="account__account_no")
    def account_no(self, obj):
        return obj.account.account_no

    @admin.display(description="account")
    def account_link(self, obj):
        return account_link(obj.account)

    def header_links(self, request) -> list[tuple[str, str]]:
        user, links = request.user, []
        if user.has_perm("backflow.view_device"):
            links.append(("Backflow reports", reverse("admin:backflow_device_reports")))
        if user.has_perm("backflow.view_compliancenotice"):
            links.append(("Noncompliance", reverse("admin:backflow_compliancenotice_noncompliance")))
            policy = self.installed_rules()
            if policy is not None and policy.fine is not None:
                links.append(("Fine accrued", reverse("admin:backflow_compliancenotice_fine")))
        return links

    def service_add_page(self, request, make_form, *, done_url, title: str, intro: str, level=messages.SUCCESS):
        """An "add" page whose form (``make_form(policy)``) calls one service: refused without the add
        permission, sent to the preset setup without backflow rules."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        policy = self.installed_rules()
        if policy is None:
            return self.no_rules_redirect(request)
        return self.run_form(request, make_form(policy), done_url=done_url, level=level, title=title, intro=intro)
