"""The "Import CSV" page on the Reading change list: the ``import_readings`` importer behind an upload form.

Mix it in before the ModelAdmin base: ``class ReadingAdmin(ReadingImportMixin, SimpleHistoryAdmin)``. It
adds ``<admin>/meters/reading/import/`` (URL name ``admin:meters_reading_import``), open to staff with
``meters.add_reading``, and an "Import CSV" button on the change list.
"""

from core.admin_imports import CsvImportAdminMixin

from .imports import READINGS_LAYOUT


class ReadingImportMixin(CsvImportAdminMixin):
    importer = "meters.imports.readings_import"
    import_permission = "meters.add_reading"
    import_layout = READINGS_LAYOUT
    import_title = "Import meter readings from a CSV file"
    import_noun = "readings"
    import_help = (
        "One row per reading: read_date YYYY-MM-DD, reading the register value in the meter's unit, "
        "read_type actual (default), estimated or final. A row already recorded with the same value is "
        "skipped, so a file can safely be imported twice. The whole file is imported, or nothing is.")

