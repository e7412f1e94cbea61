from core.import_command import CsvImportCommand
from meters.imports import READINGS_LAYOUT, readings_import


class Command(CsvImportCommand):
    help = (f"Import meter readings from a CSV file ({READINGS_LAYOUT.describe()}), all or nothing; "
            "read_type is actual, estimated or final (default actual). With --mapping, a meter system's own file "
            "(a handheld's or AMR/AMI export, CSV or fixed width, register or daily reads) read through the mapping.")
    noun = "readings"

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--mapping", metavar="NAME|PATH", default=None,
                            help="a read-file mapping: a name in READ_MAPPINGS_DIR (fixtures/readfiles), or a .toml "
                                 "path")

    def handle(self, *args, **options):
        self.mapping = options.pop("mapping")
        return super().handle(*args, **options)

    def run_import(self, *, file, as_of, actor, progress):
        return readings_import(file=file, as_of=as_of, actor=actor, progress=progress, mapping=self.mapping or "")
