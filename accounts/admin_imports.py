"""The "Import CSV" page on the Account change list: the ``import_accounts`` importer behind an upload form.

Mix it in before the ModelAdmin base: ``class AccountAdmin(AccountImportMixin, SimpleHistoryAdmin)``. It
adds ``<admin>/accounts/account/import/`` (URL name ``admin:accounts_account_import``), open to staff
with ``accounts.add_account``, and an "Import CSV" button on the change list.
"""

from core.admin_imports import CsvImportAdminMixin

from .imports import ACCOUNTS_LAYOUT


class AccountImportMixin(CsvImportAdminMixin):
    importer = "accounts.imports.accounts_import"
    import_permission = "accounts.add_account"
    import_layout = ACCOUNTS_LAYOUT
    import_title = "Import accounts from a CSV file"
    import_noun = "accounts"
    import_help = (
        "One row per account. category is one_two_family, other or nonprofit; book 1–10; meter_size in "
        "inches (5/8, 3/4, 1, 1 1/2, 2, …); meter_unit gal or cf; initial_read_date YYYY-MM-DD. An account "
        "number already on file updates its owner, occupant and addresses only. The whole file is "
        "imported, or nothing is.")

