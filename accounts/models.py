"""Customers, premises and the accounts billed for them.

An account is billed for one premises; it has an owner (who receives the bill and is liable, with a
history of owners kept in ``Ownership``) and optionally an occupant. The book (1–10) decides the billing
calendar. Every clerk change is kept by django-simple-history.
"""

import secrets
import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from simple_history.models import HistoricalRecords


class Customer(models.Model):
    name = models.CharField(max_length=200, db_index=True)
    mailing_address = models.TextField(help_text="Full mailing address, one line per row, as on an envelope.")
    email = models.EmailField(blank=True)
    phone = models.CharField(max_length=40, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Premises(models.Model):
    class UseCategory(models.TextChoices):
        RESIDENTIAL = "residential", "Residential"
        COMMERCIAL = "commercial", "Commercial"
        INDUSTRIAL = "industrial", "Industrial"
        INSTITUTIONAL = "institutional", "Institutional"
        MUNICIPAL = "municipal", "Municipal"

    service_address = models.CharField(max_length=200, db_index=True)
    sbl = models.CharField("tax-map SBL", max_length=40, blank=True, db_index=True,
                           help_text="Section-block-lot on the tax map.")
    use_category = models.CharField(max_length=20, choices=UseCategory.choices,
                                    default=UseCategory.RESIDENTIAL)
    route_order = models.PositiveIntegerField(
        "route stop", null=True, blank=True,
        help_text="Its stop on the book's meter-reading route: lists for the field (shut-offs, work orders) follow "
                  "it. Blank: after the numbered stops, by address.")
    meter_location = models.CharField(
        "where the meter is", max_length=200, blank=True, db_default="",
        help_text="For the crew and the reader: the basement by the stairs, a pit by the curb, the key at the office.")
    history = HistoricalRecords()

    class Meta:
        verbose_name_plural = "premises"
        ordering = ["service_address"]

    def __str__(self) -> str:
        return self.service_address


class PremisesDistrict(models.Model):
    """The district a premises is in from a day on (``ordinance.District``): a dated history, so a premises moved
    from one district to another by a change of boundaries is billed by the days in each (``billing.districts``).
    A premises with no row is in no district: the installation's own tables bill it, as every village's do."""

    premises = models.ForeignKey(Premises, on_delete=models.PROTECT, related_name="districts")
    district = models.ForeignKey("ordinance.District", on_delete=models.PROTECT, related_name="premises_in")
    effective_on = models.DateField(help_text="The first day the premises is in the district.")
    note = models.CharField(max_length=200, blank=True, help_text="The resolution or local law that moved it.")
    history = HistoricalRecords()

    class Meta:
        verbose_name = "premises district"
        ordering = ["premises", "-effective_on"]
        constraints = [models.UniqueConstraint(fields=["premises", "effective_on"],
                                               name="one_district_change_a_day")]

    def __str__(self) -> str:
        return f"{self.premises} in {self.district} from {self.effective_on}"


def new_access_code() -> str:
    # Printed on the bill; a customer types it to link the account online. No 0/O/1/I ambiguity.
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(8))


class Account(models.Model):
    class Category(models.TextChoices):
        ONE_TWO_FAMILY = "one_two_family", "One- and two-family use"
        OTHER = "other", "All other uses"
        NONPROFIT = "nonprofit", "Nonprofit organization"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        VACANT = "vacant", "Vacant"
        SHUT_OFF = "shut_off", "Shut off"
        CLOSED = "closed", "Closed"

    account_no = models.CharField("account number", max_length=20, unique=True)
    public_id = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    access_code = models.CharField(max_length=12, default=new_access_code,
                                   help_text="Printed on bills; links the account in the customer portal.")
    book = models.PositiveSmallIntegerField(db_index=True)
    category = models.CharField(max_length=20, choices=Category.choices)
    premises = models.ForeignKey(Premises, on_delete=models.PROTECT, related_name="accounts")
    owner = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="owned_accounts")
    occupant = models.ForeignKey(Customer, on_delete=models.PROTECT, null=True, blank=True,
                                 related_name="occupied_accounts")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE, db_index=True)
    paperless = models.BooleanField(default=False, help_text="Email a link instead of mailing paper.")
    # A database default too: bulk loads (COPY of a conversion, the demo) name only the columns they fill.
    language = models.CharField(
        max_length=5, choices=settings.LANGUAGES, default="en", db_default="en",
        help_text="The language of the account's bills and, for the customers who linked it, of the portal.")
    sprinkler_supply_inches = models.CharField(
        max_length=6, blank=True,
        help_text="Supply pipe of an automatic sprinkler system (§ 45.28 C), e.g. 2, 3, 4, 6, 8.")
    units = models.PositiveSmallIntegerField(
        "dwelling or commercial units", default=1, db_default=1,
        help_text="The residences or commercial units the service supplies; a rate schedule whose minimum is charged "
                  "\"for each unit\" multiplies its minimum and allowance by it.")
    rate_fields = models.JSONField(
        default=dict, blank=True,
        help_text="Facts a general (OWRS) rate structure reads from the account, by field name: "
                  '{"water_type": "RECYCLED", "hhsize": 3, "irrigable_area": 4500, "et_amount": 4.8, '
                  '"cust_class": "IRRIGATION"}. Numbers are written as numbers; a rate structure that needs a '
                  "field the account lacks refuses its bill, naming the field.")
    opened_on = models.DateField(null=True, blank=True)
    closed_on = models.DateField(null=True, blank=True,
                                 help_text="The day service under this account ended (a move-out or a sale). "
                                           "Accounts are closed, never deleted.")
    history = HistoricalRecords()

    class Meta:
        ordering = ["account_no"]
        constraints = [
            models.CheckConstraint(condition=Q(book__gte=1) & Q(book__lte=10), name="account_book_1_to_10"),
            models.CheckConstraint(condition=Q(units__gte=1) & Q(units__lte=9999), name="account_units_1_to_9999"),
            models.CheckConstraint(condition=Q(category__in=["one_two_family", "other", "nonprofit"]),
                                   name="account_category_valid"),
            models.CheckConstraint(condition=Q(closed_on__isnull=True) | Q(status="closed"),
                                   name="account_closed_on_only_when_closed"),
        ]

    def __str__(self) -> str:
        return self.account_no


class AccountNote(models.Model):
    """A clerk's note on an account ("called about the March bill; promised to pay by the 15th"): dated and
    signed, never edited."""

    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="notes")
    text = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=~Q(text=""), name="account_note_has_text")]

    def __str__(self) -> str:
        return f"{self.account} {self.created_at:%Y-%m-%d}: {self.text[:40]}"


class AccountAlert(models.Model):
    """A flag the office sets on an account for everyone who opens it: the account page, the counter, the crew's day
    sheet. Those that bear on a shut-off (``HOLDS_SHUTOFF``) are checked by the shut-off guard while they run: a
    medical certificate (N.Y. Public Service Law § 32 and 16 NYCRR § 14.4's model: no shut-off while a physician's
    certificate runs), a supervisor's "do not shut off", a bankruptcy stay (11 U.S.C. § 362)."""

    class Kind(models.TextChoices):
        MEDICAL = "medical", "Medical certificate on file: no shut-off while it runs"
        NO_SHUTOFF = "no_shutoff", "Do not shut off without the supervisor"
        BANKRUPTCY = "bankruptcy", "Bankruptcy stay: no shut-off, no collection"
        DOG = "dog", "Dog on the premises"
        METER_INSIDE = "meter_inside", "Meter inside: call ahead for access"
        OTHER = "other", "Other (see the note)"

    HOLDS_SHUTOFF = (Kind.MEDICAL, Kind.NO_SHUTOFF, Kind.BANKRUPTCY)

    account = models.ForeignKey(Account, on_delete=models.PROTECT, related_name="alerts")
    kind = models.CharField(max_length=14, choices=Kind.choices)
    note = models.CharField(max_length=200, blank=True, help_text="What the crew and the counter should know.")
    starts_on = models.DateField()
    ends_on = models.DateField(null=True, blank=True, help_text="The last day it holds (a medical certificate's "
                                                                "end); blank: until the office ends it.")
    set_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                               related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["-starts_on", "-id"]
        verbose_name = "account alert"
        constraints = [
            models.CheckConstraint(condition=Q(ends_on__isnull=True) | Q(ends_on__gte=models.F("starts_on")),
                                   name="account_alert_ends_after_it_starts"),
            models.CheckConstraint(condition=~Q(kind="other") | ~Q(note=""), name="account_alert_other_has_a_note"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.account}"

    def active_on(self, day) -> bool:
        return self.starts_on <= day and (self.ends_on is None or day <= self.ends_on)

    @property
    def words(self) -> str:
        """As everyone reads it: "Dog on the premises (a large one; knock first), until Jan 5, 2027"."""
        from core.dates import fmt_day

        return (self.get_kind_display() + (f" ({self.note})" if self.note else "")
                + (f", until {fmt_day(self.ends_on)}" if self.ends_on else ""))


class Ownership(models.Model):
    """Who owned the account's premises, and when. The open row (no end date) is the current owner."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="ownerships")
    owner = models.ForeignKey(Customer, on_delete=models.PROTECT, related_name="ownerships")
    started_on = models.DateField()
    ended_on = models.DateField(null=True, blank=True)
    history = HistoricalRecords()

    class Meta:
        ordering = ["account", "-started_on"]
        constraints = [
            models.UniqueConstraint(fields=["account"], condition=Q(ended_on__isnull=True),
                                    name="one_current_owner_per_account"),
            models.CheckConstraint(condition=Q(ended_on__isnull=True) | Q(ended_on__gte=models.F("started_on")),
                                   name="ownership_ends_after_start"),
        ]

    def __str__(self) -> str:
        return f"{self.owner} from {self.started_on}"


class PortalLink(models.Model):
    """A customer's portal login linked to an account (after typing its number and access code)."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account_links")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="portal_links")
    linked_at = models.DateTimeField(auto_now_add=True)
    # Ending a link deletes it; the history keeps who had it, who ended it, when and why.
    history = HistoricalRecords()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "account"], name="one_link_per_user_account")]

    def __str__(self) -> str:
        return f"{self.user} → {self.account}"
