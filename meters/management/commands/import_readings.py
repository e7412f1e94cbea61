from core.csvimport import CsvImportCommand
from meters.imports import READINGS_LAYOUT, readings_import


class Command(CsvImportCommand):
    help = (f"Import meter readings from a CSV file ({READINGS_LAYOUT.describe()}), all or nothing; "
            "read_type is actual, estimated or final (default actual).")
    noun = "readings"

    def run_import(self, *, file, as_of, actor, progress):
        return readings_import(file=file, as_of=as_of, actor=actor, progress=progress)
