"""The field's forms: an order made at the office, completed from the field (what shows depends on its kind)."""

from django import forms

from accounts.selectors import account_find
from core.admin import DATE_WIDGET, LINE_WIDGET, TEXT_WIDGET, DayField, ServiceForm
from core.clock import today
from core.errors import ApplicationError
from meters.models import Meter

from .models import FieldOrder
from .services import field_order_cancel, field_order_complete, field_order_create


class FieldOrderForm(ServiceForm):
    submit = "Make the work order"
    account_no = forms.CharField(label="Account number", max_length=20)
    kind = forms.ChoiceField(label="Work", choices=FieldOrder.Kind.choices)
    reason = forms.CharField(label="Why", max_length=200, required=False, widget=LINE_WIDGET,
                             help_text="For the crew: 'reading looks high', 'customer moving in'.")
    scheduled_on = forms.DateField(label="Day to do it", widget=DATE_WIDGET, initial=today)

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        account = account_find(d["account_no"])
        if account is None:
            raise ApplicationError(f"no account '{d['account_no']}'", field="account_no")
        self.order = field_order_create(account=account, kind=d["kind"], reason=d["reason"],
                                        scheduled_on=d["scheduled_on"], actor=actor)
        return f"{self.order.number} made: {self.order.get_kind_display().lower()} at {account.account_no}."


class CompleteForm(ServiceForm):
    submit = "Done"
    aliases = {"final_value": "value", "read_on": "done_on"}
    done_on = DayField(label="Done on", initial=today)
    value = forms.IntegerField(label="Reading", required=False, min_value=0)
    new_serial = forms.CharField(label="New meter's serial", max_length=40, required=False)
    new_size = forms.ChoiceField(label="New meter's size", required=False,
                                 choices=[("", "—"), *Meter._meta.get_field("size").choices])
    start_value = forms.IntegerField(label="New meter's first reading", required=False, min_value=0)
    result = forms.CharField(label="What was found", required=False, widget=TEXT_WIDGET)

    def __init__(self, *args, order: FieldOrder, **kwargs):
        self.order = order
        super().__init__(*args, **kwargs)
        if order.kind != FieldOrder.Kind.METER_CHANGE:
            for name in ("new_serial", "new_size", "start_value"):
                del self.fields[name]
        else:
            self.fields["value"].label = "Old meter's final reading"
        if order.kind not in (FieldOrder.Kind.REREAD, FieldOrder.Kind.METER_CHANGE):
            del self.fields["value"]

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        order = field_order_complete(order=self.order, done_on=d["done_on"], actor=actor, result=d["result"],
                                     value=d.get("value"), new_serial=d.get("new_serial", ""),
                                     new_size=d.get("new_size", ""), start_value=d.get("start_value"), as_of=today())
        return f"{order.number} done: {order.get_kind_display().lower()} at {order.account.account_no}."


class CancelForm(ServiceForm):
    submit = "Cancel the order"
    reason = forms.CharField(label="Why", required=False, widget=LINE_WIDGET)

    def __init__(self, *args, order: FieldOrder, **kwargs):
        self.order = order
        super().__init__(*args, **kwargs)

    def perform(self, *, actor) -> str:
        order = field_order_cancel(order=self.order, reason=self.cleaned_data["reason"], actor=actor)
        return f"{order.number} cancelled."
