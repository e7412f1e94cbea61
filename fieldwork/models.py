"""Work orders for the field crew: re-read a meter, change a meter, shut off or turn on the water; each completed
from the field with what was found, and the completion does the work on the books (``fieldwork.services``).

A shut-off for nonpayment is not one of these: it is a termination case's own order (``termination.WorkOrder``),
carried out only when the case allows it. The crew's day sheet lists both, in route order.
"""

from django.conf import settings
from django.db import models
from django.db.models import Q

from core.workflow import Workflow


class FieldOrder(models.Model):
    class Kind(models.TextChoices):
        REREAD = "reread", "Re-read the meter"
        METER_CHANGE = "meter_change", "Change the meter"
        SHUT_OFF = "shut_off", "Shut off the water"
        TURN_ON = "turn_on", "Turn on the water"

    class Status(models.TextChoices):
        OPEN = "open", "To do"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled"

    account = models.ForeignKey("accounts.Account", on_delete=models.PROTECT, related_name="field_orders")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN)
    # The crew completes it or the office cancels it, through core.workflow.transition.
    workflow = Workflow("status", {Status.OPEN: {Status.DONE, Status.CANCELLED}})
    reason = models.CharField(max_length=200, help_text="Why, for the crew: 'reading looks high', 'customer moving "
                                                        "in', 'meter stopped'.")
    scheduled_on = models.DateField(help_text="The day the crew is to do it.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    done_on = models.DateField(null=True, blank=True)
    done_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    result = models.TextField(blank=True, help_text="What the crew found and did.")
    reading = models.ForeignKey("meters.Reading", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                                help_text="The reading taken (a re-read; a meter change's final reading).")
    new_meter = models.ForeignKey("meters.Meter", null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["scheduled_on", "id"]
        verbose_name = "work order"
        # Completing is the crew's (the change permission); cancelling belongs to the office.
        permissions = [("cancel_fieldorder", "Can cancel a work order")]
        constraints = [
            models.UniqueConstraint(fields=["account", "kind"], condition=Q(status="open"),
                                    name="one_open_field_order_per_account_and_kind",
                                    violation_error_message="This account already has an open order of this kind."),
            models.CheckConstraint(condition=~Q(status="done") | Q(done_on__isnull=False),
                                   name="field_order_done_is_dated"),
            models.CheckConstraint(condition=~Q(reason=""), name="field_order_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.number}: {self.get_kind_display()} at {self.account}"

    @property
    def number(self) -> str:
        return f"WO-{self.pk:06d}" if self.pk else "WO-new"
