"""The clerk's desk for customers, premises and accounts.

The account page here knows only accounts; meters and billing add their parts (installations and
readings, the CSV import, balance and bills) in ``waterbilling/admin.py``, which composes the page the
clerk sees, since an app never imports the floors above it.

Every model here is kept by django-simple-history, so each admin is a ``HistoryAdmin`` (a
``SimpleHistoryAdmin``): the "History" button lists who changed what and when, with each changed field
shown old → new in words a clerk reads ("Active → Shut off", not "active → shut_off").
"""

import re
from collections.abc import Callable, Mapping
from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import AdminDateWidget, AutocompleteSelect
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from core.admin import HistoryAdmin, TabularInline, button_post
from core.clock import today
from core.csvimport import identifier_validator
from core.errors import ApplicationError

from .alerts import alert_problems
from .models import Account, AccountAlert, Customer, Ownership, PortalLink, Premises
from .selectors import account_by_code, account_search
from .services import account_note_add, account_owner_change, portal_links_end


class OwnershipInline(TabularInline):
    """Read-only: a sale goes through "Change owner", which also ends portal links and the access code."""

    model = Ownership
    fields = ("owner", "started_on", "ended_on")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name_plural = "ownership history (the open row is the current owner; a sale: “Change owner” above)"

    def has_add_permission(self, request, obj=None):
        return False


class PortalLinkInline(TabularInline):
    """Who sees the account online; each link is ended on a page of its own (the account page has no delete
    boxes: it is read as a page)."""

    model = PortalLink
    fields = ("user", "linked_at", "end")
    readonly_fields = fields
    extra = 0
    can_delete = False
    verbose_name_plural = "customer portal logins that see this account"

    def has_add_permission(self, request, obj=None):
        return False  # customers link accounts themselves, with the access code on the bill

    @admin.display(description="")
    def end(self, obj):
        return format_html('<a href="{}" class="end-link">End this link</a>',
                           reverse("admin:accounts_account_end_link", args=[obj.pk])) if obj.pk else ""


class EndLinkForm(forms.Form):
    reason = forms.CharField(label="Why", max_length=100, help_text="Kept in the link's history: 'sold the house', "
                                                                     "'asked by the owner'.")


class OwnerChangeForm(forms.Form):
    new_owner = forms.ModelChoiceField(
        queryset=Customer.objects.all(), label="New owner",
        help_text="Add the new owner as a customer first if they are not one yet (the + link).")
    on = forms.DateField(label="Owner from", widget=AdminDateWidget,
                         help_text="The date of the sale (the deed's date): the former owner's ownership ends then.")

    def __init__(self, *args, admin_site, **kwargs):
        super().__init__(*args, **kwargs)
        field = self.fields["new_owner"]
        field.widget = AutocompleteSelect(Account._meta.get_field("owner"), admin_site)
        field.widget.choices = field.choices


class AccountNoteForm(forms.Form):
    text = forms.CharField(label="Note", required=False, widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
                           help_text="What was said or done (dated and signed with your name; notes are never "
                                     "edited or deleted). Staff only: the customer never sees it.")


# The names an account's rate facts may carry are the rate structures' to say (billing.owrs.ACCOUNT_FIELDS:
# name -> what it is). Billing is a floor above accounts, so it hands them over when its admin loads
# (``rate_field_names_from``); until it has, no name is accepted.
_rate_field_names: list[Callable[[], Mapping[str, str]]] = []


def rate_field_names_from(provider: Callable[[], Mapping[str, str]]) -> None:
    """Say where the rate fields an account may carry come from (a callable: name -> what it is)."""
    _rate_field_names[:] = [provider]


def rate_field_names() -> Mapping[str, str]:
    return _rate_field_names[0]() if _rate_field_names else {}


# A number as a clerk types it (4.8, 4500, .5, -2); anything else is text.
_NUMBER = re.compile(r"-?(\d+(\.\d*)?|\.\d+)")


def rate_fields_lines(facts: Mapping[str, object] | None) -> str:
    """{"hhsize": "3", "water_type": "POTABLE"} as the lines the clerk edits: "hhsize = 3", one a line, by name
    (the database keeps a JSON object's keys in an order of its own)."""
    return "\n".join(f"{name} = {value}" for name, value in sorted((facts or {}).items()))


def rate_fields_parse(text: str) -> dict[str, str]:
    """The clerk's "name = value" lines as the account's rate facts; a number is kept as its decimal text
    ("4.8", never a float), text as typed. Refuses a line that is not "name = value", a name written
    twice or a name with no value, naming each line."""
    facts, errors = {}, []
    for number, raw in enumerate((text or "").splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        name, equals, value = (part.strip() for part in line.partition("="))
        if not equals or not name:
            errors.append(f"line {number}: '{line}' is not 'name = value' (e.g. hhsize = 3)")
        elif not value:
            errors.append(f"line {number}: {name} has no value; write e.g. {name} = 3, or remove the line")
        elif name in facts:
            errors.append(f"line {number}: {name} is given twice; keep one line for it")
        else:
            facts[name] = str(Decimal(value)) if _NUMBER.fullmatch(value) else value
    if errors:
        raise forms.ValidationError(errors)
    return facts


class RateFieldsField(forms.CharField):
    """``Account.rate_fields`` (a JSON dict) edited as lines ``name = value``."""

    def __init__(self, **kwargs):
        kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 4, "cols": 60}))
        super().__init__(**kwargs)

    def prepare_value(self, value):
        return rate_fields_lines(value) if isinstance(value, Mapping) else value

    def to_python(self, value):
        return rate_fields_parse(super().to_python(value))


class AccountForm(forms.ModelForm):
    rate_fields = RateFieldsField(
        label="Rate facts", required=False,
        help_text="One fact a line, as name = value (e.g. water_type = RECYCLED, hhsize = 3, irrigable_area = "
                  "4500). Only a general (OWRS) rate structure reads them; a bill whose rate class needs a "
                  "fact the account lacks is refused, naming it.")

    class Meta:
        model = Account
        fields = ("rate_fields",)  # the admin gives the rest from its fieldsets

    def clean_rate_fields(self):
        facts = self.cleaned_data["rate_fields"]
        known = rate_field_names()
        unknown = [name for name in facts if name not in known]
        if unknown:
            listed = ", ".join(f"{name} ({words})" for name, words in known.items()) or "none are installed"
            text = self.data.get(self.add_prefix("rate_fields")) or ""
            lines = {raw.partition("=")[0].strip(): number
                     for number, raw in enumerate(text.splitlines(), start=1) if raw.strip()}
            raise forms.ValidationError([f"line {lines.get(name, '?')}: {name} is not a rate field an account "
                                         f"carries; the fields are: {listed}" for name in unknown])
        return facts


RATE_FACTS = "Rate facts (general rate structures)"


@admin.register(Account)
class AccountAdmin(HistoryAdmin):
    list_display = ("account_no", "owner", "premises__service_address", "book", "category", "status")
    list_select_related = ("owner", "premises")
    list_filter = ("book", "category", "status", "paperless", "language")
    search_fields = ("account_no", "owner__name", "occupant__name", "premises__service_address",
                     "premises__sbl")
    search_help_text = ("An account number (or a bill stub scanned) opens the account; a name, an address or an SBL "
                        "lists the accounts that match.")
    autocomplete_fields = ("premises", "owner", "occupant")
    readonly_fields = ("public_id",)
    change_form_template = "admin/accounts/account/change_form.html"
    fieldsets = (
        (None, {"fields": ("account_no", "book", "category", "status", "opened_on", "closed_on", "paperless",
                           "language", "sprinkler_supply_inches", "units")}),
        ("Premises and people", {"fields": ("premises", "owner", "occupant")}),
        ("Customer portal", {"fields": ("access_code", "public_id"), "classes": ("collapse",)}),
    )
    inlines = (OwnershipInline, PortalLinkInline)
    form = AccountForm

    def get_fieldsets(self, request, obj=None):
        # Most accounts are billed by a preset's own rates and carry no rate facts: the section stays folded.
        classes = () if obj is not None and obj.rate_fields else ("collapse",)
        return [*super().get_fieldsets(request, obj), (RATE_FACTS, {
            "fields": ("rate_fields",), "classes": classes,
            "description": "Facts a general (OWRS) rate structure reads from the account: household size, "
                           "irrigable area, water type, the account's own rate class, …"})]

    def get_readonly_fields(self, request, obj=None):
        # After creation the owner changes only by "Change owner": a sale, with its date and consequences. The
        # number is printed on bills, notices and checks: it never changes. The closing date is the final
        # bill's to set.
        if obj:
            return (*self.readonly_fields, "account_no", "owner", "access_code", "closed_on")
        return (*self.readonly_fields, "closed_on")

    def has_delete_permission(self, request, obj=None):
        return False  # an account with a history is closed (its final bill), never deleted

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    RECENT = "recent_accounts"  # the session's accounts opened last, newest first
    RECENT_KEPT = 8

    def changelist_view(self, request, extra_context=None):
        """An exact account number, or a bill stub's scan line read by a scanner into the search box, opens the
        account itself; the list shows the accounts this user opened last."""
        typed = request.GET.get("q", "").strip()
        if typed and set(request.GET) <= {"q"}:
            account = account_by_code(typed)
            if account is not None:
                return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[account.pk]))
        recent_ids = request.session.get(self.RECENT, [])
        found = Account.objects.in_bulk(recent_ids)
        recent = [found[pk] for pk in recent_ids if pk in found]
        return super().changelist_view(request, {"recent_accounts": recent, **(extra_context or {})})

    def remember_opened(self, request, account) -> None:
        kept = request.session.get(self.RECENT, [])
        if kept[:1] == [account.pk]:
            return  # opened again: the session is not written
        recent = [account.pk, *(pk for pk in kept if pk != account.pk)]
        request.session[self.RECENT] = recent[:self.RECENT_KEPT]

    def get_search_results(self, request, queryset, search_term):
        """The one search box: number, owner, occupant, service address or SBL, by ``account_search``'s
        rules (the same as the API's and the counter's)."""
        if not search_term.strip():
            return queryset, False
        return queryset.filter(pk__in=account_search(q=search_term.strip()).values("pk")), False

    def get_urls(self):
        return [path("<int:pk>/change-owner/", self.admin_site.admin_view(self.change_owner_view),
                     name="accounts_account_change_owner"),
                path("<int:pk>/notes/add/", self.admin_site.admin_view(self.note_add_view),
                     name="accounts_account_note_add"),
                path("links/<int:link_id>/end/", self.admin_site.admin_view(self.end_link_view),
                     name="accounts_account_end_link"), *super().get_urls()]

    def end_link_view(self, request, link_id):
        """End one customer's portal link: the customer no longer sees the account or gets its e-mails."""
        if not request.user.has_perm("accounts.delete_portallink"):
            raise PermissionDenied
        link = get_object_or_404(PortalLink.objects.select_related("account", "user"), pk=link_id)
        account = link.account
        form = EndLinkForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            portal_links_end(links=[link], actor=request.user, reason=form.cleaned_data["reason"])
            self.message_user(request, f"{link.user.email or link.user.get_username()} no longer sees account "
                                       f"{account.account_no} online.", messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[account.pk]))
        return TemplateResponse(request, "admin/service_form.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
            "title": f"End a portal link to account {account.account_no}",
            "intro": "The customer no longer sees the account online or gets its e-mails; they may link it again "
                     "with the access code on a bill.",
            "facts": [("Account", f"{account.account_no}, {account.owner.name}"),
                      ("Login", f"{link.user.get_username()} ({link.user.email})"), ("Linked", str(link.linked_at))],
        }, status=400 if form.errors else 200)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """The account opens as an inquiry: read, in tabs, with each action a button to its own form. Its fields
        are edited on purpose, from "Edit the account" (``?edit=1``, which its form posts back to)."""
        account = (Account.objects.select_related("owner", "occupant", "premises").filter(pk=object_id).first()
                   if str(object_id).isdigit() else None)
        request.account_inquiry = account is not None and request.method == "GET" and "edit" not in request.GET
        if account is not None and request.account_inquiry and self.has_view_permission(request, account):
            self.remember_opened(request, account)
        if account is not None:
            extra_context = {**self.account_glance(request, account), "inquiry": request.account_inquiry,
                             "may_edit": self.may_edit(request),
                             "title": (f"Account {account.account_no}" if request.account_inquiry
                                       else f"Edit account {account.account_no}"),
                             "subtitle": f"{account.owner.name} · {account.premises.service_address}",
                             **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra_context)

    def may_edit(self, request) -> bool:
        """Whether the user may edit accounts (the inquiry itself is read-only for everyone)."""
        return request.user.has_perm("accounts.change_account")

    def has_change_permission(self, request, obj=None):
        if obj is not None and getattr(request, "account_inquiry", False):
            return False  # the inquiry shows the account's fields as text; "Edit the account" opens the form
        return super().has_change_permission(request, obj)

    def response_change(self, request, obj):
        """Saved: back to the account's inquiry (or the form again, for "Save and continue editing")."""
        response = super().response_change(request, obj)
        if "_continue" in request.POST or "_addanother" in request.POST or "_saveasnew" in request.POST:
            return response
        return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[obj.pk]))

    def account_glance(self, request, account: Account) -> dict:
        """Accounts' part of the page's top: who, where, and the clerk's notes with the form to add one."""
        return {"glance_account": account,
                "account_notes": list(account.notes.select_related("created_by")),
                "note_form": AccountNoteForm() if self.may_edit(request) else None}

    def note_add_view(self, request, pk):
        account = get_object_or_404(Account, pk=pk)
        if request.method != "POST" or not self.may_edit(request):
            raise PermissionDenied
        form = AccountNoteForm(request.POST)
        form.is_valid()

        def add_note() -> str:
            account_note_add(account=account, text=form.cleaned_data.get("text", ""), actor=request.user)
            return f"Note added to account {account.account_no}."

        return button_post(self, request, add_note, refused="No note added",
                           back=reverse("admin:accounts_account_change", args=[account.pk]) + "#account-notes")

    def change_owner_view(self, request, pk):
        account = get_object_or_404(Account.objects.select_related("owner"), pk=pk)
        if not self.has_change_permission(request, account):
            raise PermissionDenied
        form = OwnerChangeForm(request.POST or None, admin_site=self.admin_site)
        if request.method == "POST" and form.is_valid():
            try:
                change = account_owner_change(account=account, new_owner=form.cleaned_data["new_owner"],
                                              on=form.cleaned_data["on"], actor=request.user)
            except ApplicationError as exc:
                for error in exc.errors:
                    form.add_error(error.field if error.field in form.fields else None, error.message)
            else:
                self.message_user(request, (
                    f"Account {account.account_no} now belongs to {change.account.owner} from "
                    f"{form.cleaned_data['on']:%b %-d, %Y}. {change.links_ended} portal link(s) of the former owner "
                    "ended; a new access code goes on the next bill; paperless bills are off until the new owner "
                    "asks for them. Bills already issued keep the name and address they were issued to."),
                    messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[account.pk]))
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "account": account, "title": f"Change the owner of account {account.account_no}",
                   "links": account.portal_links.count(), "media": self.media + form.media}
        return TemplateResponse(request, "admin/accounts/account/change_owner.html", context)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        formfield = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "account_no":
            # Printed on bills and sent in e-mails: no control or invisible characters.
            formfield.validators.append(identifier_validator)
        return formfield

@admin.register(Customer)
class CustomerAdmin(HistoryAdmin):
    list_display = ("name", "mailing_first_line", "email", "phone")
    search_fields = ("name", "mailing_address", "email", "phone")

    @admin.display(description="mailing address")
    def mailing_first_line(self, obj: Customer) -> str:
        return obj.mailing_address.splitlines()[0] if obj.mailing_address else ""


@admin.register(Premises)
class PremisesAdmin(HistoryAdmin):
    list_display = ("service_address", "sbl", "use_category", "route_order")
    list_filter = ("use_category",)
    search_fields = ("service_address", "sbl")


@admin.register(Ownership)
class OwnershipAdmin(HistoryAdmin):
    list_display = ("account", "owner", "started_on", "ended_on")
    list_select_related = ("account", "owner")
    search_fields = ("account__account_no", "owner__name")
    autocomplete_fields = ("account", "owner")


@admin.register(PortalLink)
class PortalLinkAdmin(HistoryAdmin):
    list_display = ("user", "account", "linked_at")
    list_select_related = ("user", "account")
    search_fields = ("user__username", "user__email", "account__account_no")
    readonly_fields = ("user", "account", "linked_at")
    actions = ("end_links",)

    def has_add_permission(self, request):
        return False  # customers link accounts themselves, with the access code on the bill

    def has_change_permission(self, request, obj=None):
        return False

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    @admin.action(description="End the selected portal links", permissions=["delete"])
    def end_links(self, request, queryset):
        ended = portal_links_end(links=list(queryset), actor=request.user, reason="ended by the office")
        self.message_user(request, f"{ended} portal link(s) ended; those logins no longer see the account or get "
                                   "its emails.", messages.SUCCESS)


@admin.register(PortalLink.history.model)
class EndedPortalLinkAdmin(admin.ModelAdmin):
    """Who had an account online, until when, and who ended it (a sale, or the office)."""

    list_display = ("user", "account", "linked_at", "history_date", "history_user", "history_change_reason")
    list_select_related = ("user", "account", "history_user")
    search_fields = ("user__email", "account__account_no")

    def get_queryset(self, request):
        return super().get_queryset(request).filter(history_type="-")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class AccountAlertForm(forms.ModelForm):
    class Meta:
        model = AccountAlert
        fields = ("account", "kind", "note", "starts_on", "ends_on")
        widgets = {"starts_on": AdminDateWidget, "ends_on": AdminDateWidget}

    def clean(self):
        data = super().clean()
        kind = data.get("kind", getattr(self.instance, "kind", ""))
        for error in alert_problems(kind=kind, note=data.get("note", getattr(self.instance, "note", "")),
                                    starts_on=data.get("starts_on", getattr(self.instance, "starts_on", None)),
                                    ends_on=data.get("ends_on")):
            self.add_error(error.field if error.field in self.fields else None, error.message)
        return data


@admin.register(AccountAlert)
class AccountAlertAdmin(HistoryAdmin):
    """Flags on an account that everyone sees on opening it (the account page, the counter, the crew's day sheet).
    A clerk sets one; a supervisor ends one (its last day), so that "do not shut off" is lifted on purpose. Those
    that bear on a shut-off are checked by the shut-off guard while they run."""

    form = AccountAlertForm
    list_display = ("account", "kind", "note", "starts_on", "ends_on", "set_by")
    list_filter = ("kind",)
    search_fields = ("account__account_no", "account__premises__service_address", "note")
    autocomplete_fields = ("account",)
    list_select_related = ("account", "set_by")

    def get_readonly_fields(self, request, obj=None):
        return ("account", "kind", "note", "starts_on", "set_by") if obj is not None else ("set_by",)

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        number = request.GET.get("account")
        if number:
            found = Account.objects.filter(account_no=number).values_list("pk", flat=True).first()
            initial["account"] = found
        initial.setdefault("starts_on", today())
        return initial

    def has_delete_permission(self, request, obj=None):
        return False  # an alert ends on a day; it is never unsaid

    def save_model(self, request, obj, form, change):
        if not change:
            obj.set_by = request.user
        obj._history_user = request.user
        super().save_model(request, obj, form, change)
