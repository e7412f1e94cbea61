"""Dates in Spanish for a Spanish-speaking customer: short enough for a bill's columns ("1 feb 2026"). Numbers and
money stay as the village writes them ($1,234.56). ``core.dates`` writes the longer forms."""

DATE_FORMAT = "j b Y"
DATETIME_FORMAT = "j b Y, H:i"
TIME_FORMAT = "H:i"  # 10:00, 14:30: the 24-hour clock Spanish readers expect
MONTH_DAY_FORMAT = "j b"
YEAR_MONTH_FORMAT = "F Y"
# Numbers as the village writes them: 62,500 gal, $1,234.56.
DECIMAL_SEPARATOR = "."
THOUSAND_SEPARATOR = ","
NUMBER_GROUPING = 3
