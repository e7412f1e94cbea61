"""The "Import CSV" pages of meters' two importers, each behind an upload form.

Mix one in before the ModelAdmin base: ``class ReadingAdmin(ReadingImportMixin, SimpleHistoryAdmin)`` adds
``<admin>/meters/reading/import/`` (URL name ``admin:meters_reading_import``), open to staff with
``meters.add_reading``; ``AccountImportMixin`` on the account admin (``waterbilling/admin.py``) adds
``<admin>/accounts/account/import/`` (``admin:accounts_account_import``), open to staff with
``accounts.add_account``. Each puts an "Import CSV" button on its change list.
"""

from django import forms

from core.admin_imports import CsvImportAdminMixin, CsvImportForm

from .account_imports import ACCOUNTS_LAYOUT
from .imports import READINGS_LAYOUT


class ReadingsImportForm(CsvImportForm):
    mapping = forms.ChoiceField(label="Layout", required=False,
                                help_text="Our CSV, or a meter system's own file read through its mapping "
                                          "(READ_MAPPINGS_DIR: the shipped ones and the office's own).")

    def __init__(self, *args, **kwargs):
        from .readfiles import mappings_available

        super().__init__(*args, **kwargs)
        self.fields["file"].label = "Readings file"
        self.fields["mapping"].choices = [("", "Our CSV: meter_serial,read_date,reading,read_type"),
                                          *mappings_available()]


class ReadingImportMixin(CsvImportAdminMixin):
    importer = "meters.imports.readings_import"
    import_permission = "meters.add_reading"
    import_layout = READINGS_LAYOUT
    import_title = "Import meter readings from a file"
    import_noun = "readings"
    import_form = ReadingsImportForm

    def import_options(self, form) -> dict:
        return {"mapping": form.cleaned_data["mapping"]} if form.cleaned_data.get("mapping") else {}

    import_help = (
        "One row per reading: read_date YYYY-MM-DD, reading the register value in the meter's unit, "
        "read_type actual (default), estimated or final. A row already recorded with the same value is "
        "skipped, so a file can safely be imported twice. The whole file is imported, or nothing is. A handheld's, "
        "drive-by or AMI file is read through its layout's mapping: flags become meter alerts, daily reads are "
        "kept by month.")



class AccountImportMixin(CsvImportAdminMixin):
    importer = "meters.account_imports.accounts_import"
    import_permission = "accounts.add_account"
    import_layout = ACCOUNTS_LAYOUT
    import_title = "Import accounts from a CSV file"
    import_noun = "accounts"
    import_help = (
        "One row per account. category is one_two_family, other or nonprofit; book 1–10; meter_size in "
        "inches (5/8, 3/4, 1, 1 1/2, 2, …); meter_unit gal or cf; initial_read_date YYYY-MM-DD; status (optional) "
        "active or vacant, blank for active. An account "
        "number already on file updates its owner, occupant and addresses only. The whole file is "
        "imported, or nothing is.")
