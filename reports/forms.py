"""The Reports page's form: one report's dates, its filters and the format. The page shows and checks it; a report
made in the background (``reports.files``) is built from it again, so both read what was asked the same way."""

from django import forms

from accounts.models import Account
from core.clock import today
from core.errors import ApplicationError
from ordinance.selectors import districts

from .catalog import REPORTS, report_build, report_check
from .filters import AMOUNT_COLUMN, ReportFilter

DATE_WIDGET = forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"})
FORMATS = (("view", "View on this page"), ("csv", "Download CSV"), ("pdf", "Download PDF"))


class ReportForm(forms.Form):
    """One report's form: its dates and the format. Only the dates the report takes are shown."""

    report = forms.ChoiceField(choices=[(name, kind.title) for name, kind in REPORTS.items()],
                               widget=forms.HiddenInput)
    date = forms.DateField(label="As of", widget=DATE_WIDGET, required=False,
                           help_text="Default today.")
    bill_date = forms.DateField(label="Bill date", widget=DATE_WIDGET, required=False,
                                help_text="Default: the latest bill date on or before the “as of” date.")
    levy_date = forms.DateField(label="Levy date", widget=DATE_WIDGET, required=False,
                                help_text="Default: the “as of” date.")
    start = forms.DateField(label="From", widget=DATE_WIDGET, required=False,
                            help_text="Default: the “as of” date.")
    end = forms.DateField(label="To", widget=DATE_WIDGET, required=False, help_text="Default: the “as of” date.")
    district = forms.ChoiceField(label="District", required=False,
                                 help_text="A town's report of one water district; default: every district.")
    book = forms.IntegerField(label="Book", required=False, min_value=0, help_text="Default: every book.")
    minimum = forms.DecimalField(label="Owing at least ($)", required=False, min_value=0, max_digits=12,
                                 decimal_places=2, help_text="Default: every amount.")
    status = forms.ChoiceField(label="Accounts", required=False,
                               choices=[("", "Any status"), *Account.Status.choices])
    totals_only = forms.BooleanField(label="Totals only", required=False,
                                     help_text="The totals and the totals by book, without the accounts.")
    sort = forms.CharField(required=False, widget=forms.HiddenInput)
    dir = forms.ChoiceField(required=False, choices=(("asc", "asc"), ("desc", "desc")), widget=forms.HiddenInput)
    format = forms.ChoiceField(choices=FORMATS, initial="view")

    DATES = ("date", "bill_date", "levy_date", "start", "end")
    FILTERS = ("book", "minimum", "status", "totals_only")

    def __init__(self, *args, name: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.kind = REPORTS[name]
        self.fields["report"].initial = name
        for field in self.DATES:
            if field != "date" and field not in self.kind.params:
                del self.fields[field]
        if name not in AMOUNT_COLUMN:
            for field in self.FILTERS:
                del self.fields[field]
        town = districts()
        if town:
            self.fields["district"].choices = [("", "Every district"), *((code, d.name) for code, d in town.items())]
        else:
            del self.fields["district"]

    def chosen(self) -> ReportFilter:
        d = self.cleaned_data
        return ReportFilter(book=d.get("book"), minimum=d.get("minimum"), status=d.get("status") or "",
                            sort=d.get("sort") or "", descending=d.get("dir") == "desc",
                            totals_only=bool(d.get("totals_only")))

    def _refused(self, exc: ApplicationError) -> None:
        for error in exc.errors:
            self.add_error(error.field if error.field in self.fields else None, error.message)

    def _dates(self) -> dict:
        d = self.cleaned_data
        return {"name": self.kind.name, "as_of": d.get("date") or today(), "district": d.get("district") or None,
                **{field: d.get(field) for field in self.kind.params}}

    def build(self):
        """The report, or None with the refusal under the field it names."""
        try:
            return report_build(**self._dates())
        except ApplicationError as exc:
            self._refused(exc)
            return None

    def check(self) -> bool:
        """Whether the report can be built as asked, without building it; else the refusal is under its field."""
        try:
            report_check(**self._dates())
        except ApplicationError as exc:
            self._refused(exc)
            return False
        return True

    def params(self) -> dict:
        """What was asked, as the form takes it again (a worker builds the report from it): the "as of" date filled
        in, so the report is of the day it was asked for."""
        asked = {key: self.data.get(key, "") for key in self.fields}
        asked["date"] = asked.get("date") or today().isoformat()
        return asked
