from core.import_command import CsvImportCommand
from remittance.lockbox import LOCKBOX_LAYOUT, lockbox_import


class Command(CsvImportCommand):
    help = (f"Import the bank's lockbox detail file ({LOCKBOX_LAYOUT.describe()}): checks matched by the bill stub's "
            "scan line are posted; the others go to the exceptions queue.")
    noun = "checks"

    def run_import(self, *, file, as_of, actor, progress):
        return lockbox_import(file=file, as_of=as_of, actor=actor, progress=progress)
