"""``preset_check PATH|PRESET``: hold a preset file to the contract every shipped preset keeps, before installing it
(``setup_utility --file PATH``). Each refusal names its table and key; exit 1 when there is any."""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from ordinance.files import preset_read, shipped_presets
from ordinance.install import jsonable, preset_check
from ordinance.preview import preset_preview, preview_lines


class Command(BaseCommand):
    help = "Check a preset file (a path, or a shipped preset's name) without installing it; every refusal is listed."

    def add_arguments(self, parser):
        parser.add_argument("file", help=f"a preset file's path, or a shipped preset: {', '.join(shipped_presets())}")
        parser.add_argument("--json", action="store_true",
                            help='print {"file": …, "refusals": […]} (with --bills, and "bills": its tables)')
        parser.add_argument("--bills", action="store_true",
                            help="and print what the preset would bill, per class and district, for a ladder of "
                                 "usages (0, the "
                                 "allowance, each block's edges, twice the last bound) and a late charge through a "
                                 "year, each line with its citation")

    def handle(self, *args, file, **options):
        shipped = not Path(file).suffix and file in shipped_presets()
        refusals = preset_check(code=file) if shipped else preset_check(path=file)
        if options["json"]:
            out = {"file": file, "refusals": refusals}
            if options["bills"] and not refusals:
                data = preset_read(code=file) if shipped else preset_read(path=file)
                out["bills"] = [{"title": table.title, "headers": list(table.headers),
                                 "rows": [list(row) for row in table.rows]}
                                for table in preset_preview(jsonable(data.data))]
            self.stdout.write(json.dumps(out, indent=2))
        elif not refusals:
            self.stdout.write(f"{file}: fit to install (setup_utility {'' if shipped else '--file '}{file})")
            if options["bills"]:
                data = preset_read(code=file) if shipped else preset_read(path=file)
                for line in preview_lines(preset_preview(jsonable(data.data))):
                    self.stdout.write(line)
        else:
            for refusal in refusals:
                self.stdout.write(f"{file}: {refusal}")
        if refusals:
            raise CommandError(f"{file}: {len(refusals)} refusal{'s' if len(refusals) != 1 else ''}; nothing installed")
