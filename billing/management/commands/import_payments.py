from billing.services.payments import PAYMENTS_LAYOUT, payments_import
from core.import_command import CsvImportCommand


class Command(CsvImportCommand):
    help = (f"Import payments from a CSV file ({PAYMENTS_LAYOUT.describe()}), all or nothing; a reference "
            "already posted is skipped, not posted twice. Every payment of the file is tendered 'bank_file'; "
            "the command prints how many were posted and skipped and the dollars posted.")
    noun = "payments"

    def run_import(self, *, file, as_of, actor, progress):
        return payments_import(file=file, as_of=as_of, actor=actor, progress=progress)
