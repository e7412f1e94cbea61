"""Demo data for ``make run`` and the benchmarks: a village of accounts with a year of history."""

# The preset a demo installs unless told otherwise (``make run PRESET=...``, the benchmarks' ``--preset``).
DEMO_PRESET = "mineola"
