from core.import_command import CsvImportCommand
from meters.account_imports import ACCOUNTS_LAYOUT, accounts_import


class Command(CsvImportCommand):
    help = (f"Import accounts from a CSV file ({ACCOUNTS_LAYOUT.describe()}), all or nothing; "
            "an account already on file gets its names and addresses updated.")
    noun = "accounts"

    def run_import(self, *, file, as_of, actor, progress):
        return accounts_import(file=file, as_of=as_of, actor=actor, progress=progress)
