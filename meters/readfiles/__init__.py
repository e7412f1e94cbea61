"""Readings from the files meter systems already make: a handheld's or drive-by's route file, an AMR/AMI head-end's
export, read through a mapping (``import_readings FILE --mapping M``, and the admin's upload).

Design overview:

* **The mapping** (TOML; ``fixtures/readfiles/*.toml`` are worked ones, ``settings.READ_MAPPINGS_DIR`` holds the
  office's own): ``layout`` csv (``[columns]``: our field = the file's header) or fixed (``[fields]``: our field =
  [first, last] character, 1-based; ``width``: every reading line's length; ``record_prefix``: only lines that
  begin with it are readings, the header and trailer records are not); ``[dates] format``; ``[units]`` the unit the
  file reads in (gal, kgal, cf, ccf; blank: the meter's own) and the register's multiplier; ``[read_types]`` and
  ``[flags]``: the file's codes to ours (``no_read``: a missed read kept for the clerk; ``none``: no
  event). Every key is in ``docs/readings.md``. ``reads = "daily"`` marks an AMI export of daily register reads.
* **Register reads** are rewritten as our rows and recorded by ``meters.services.readings_record``: every rule a
  reading keeps, checked the same way with the same words, all or nothing. A change-out row (read type
  ``change``) records the old meter's final reading and the new meter with its first (``meter_change``), in the
  same transaction. Each reading is also checked against the range expected for it (``rules.expected_range``,
  the same the route file out gives the handheld): one outside it is recorded and marked for a re-read.
* **Flags** (leak, reverse flow, tamper, no flow, register mismatch) are kept as meter alerts on the meter and
  day (``UsageAlert``, once per episode) and announced (``usage_alerts_raised``): the clerk's list, the customer
  for a leak (notices), a backflow follow-up for reverse flow (backflow), a re-read order (fieldwork).
* **Daily reads** are kept one row per meter and month (``DailyRead``), merged with what is on file; each
  complete month's last day is recorded as a register reading, which is what billing reads. Continuous flow is
  looked for in them (``rules.continuous_flow``).
* **The file's own controls**: a header or trailer record's count and total checked against the file (a truncated
  file is refused), an empty file refused.
* **Every refusal** names the line, the field (ours, with the file's name for it) and the rule; a file with any
  is refused whole. ``import_readings --dry-run`` and the upload page's preview run the whole import and keep
  nothing.

The modules: ``mapping`` (the registry of a mapping's keys, and its checks), ``parse`` (the records, numbers as the
file writes them, the controls), ``registers`` and ``daily`` (the two kinds of file), ``alerts`` (once per
episode), ``route`` (the route going out), ``doc`` (``docs/readings.md``).
"""


from .daily import continuous_flow_raise, daily_reads_import, daily_use
from .mapping import MAPPING, ReadMapping, mapping_load, mapping_parse, mappings_available
from .registers import readings_import_mapped
from .route import RouteStop, route_file, route_stops

__all__ = ["MAPPING", "ReadMapping", "RouteStop", "continuous_flow_raise", "daily_reads_import", "daily_use",
           "mapping_load", "mapping_parse", "mappings_available", "readings_import_mapped", "route_file",
           "route_stops"]
