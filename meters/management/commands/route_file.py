"""``route_file --book B --date D --mapping M [--out FILE]``: a book's route for a reader's handheld, in route order,
each meter with its last reading and the range expected for the read on D, in the mapping's ``[route]`` layout."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError
from meters.readfiles import mapping_load, route_file, route_stops


class Command(BaseCommand):
    help = "Write a book's meter-reading route for a handheld, with each meter's last reading and expected range."

    def add_arguments(self, parser):
        parser.add_argument("--book", type=int, required=True, help="the book (route) to read")
        as_of_argument(parser)
        parser.add_argument("--mapping", required=True, metavar="NAME|PATH",
                            help="the handheld's layout: a read-file mapping with a [route] table")
        parser.add_argument("--out", metavar="FILE", help="write the file here (default: print it)")

    def handle(self, *args, book, mapping, out, **options):
        try:
            on = parse_as_of(options["date"], allow_future=True)
            layout = mapping_load(mapping)
            if not (layout.route_columns or layout.route_positions):
                raise ApplicationError(f"the mapping {layout.name} has no [route] table: it only reads files in",
                                       field="mapping")
            stops = route_stops(book=book, on=on)
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        if not stops:
            raise CommandError(f"book {book} has no meter installed on {on}")
        text = route_file(stops, layout)
        if out:
            Path(out).write_text(text)
            self.stderr.write(f"{len(stops)} stop(s) of book {book} for {on} written to {out}")
        else:
            self.stdout.write(text, ending="")
