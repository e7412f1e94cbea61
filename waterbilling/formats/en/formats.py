"""One date format for people, everywhere: the admin writes a day as the bill, the portal, the notices and the
reports do (``core.dates.fmt_day``: "Feb 1, 2026"), not Django's "Feb. 1, 2026". Data (CSV, JSON, the API, form
inputs) stays ISO 8601."""

DATE_FORMAT = "M j, Y"
DATETIME_FORMAT = "M j, Y, g:i A"
TIME_FORMAT = "g:i A"
MONTH_DAY_FORMAT = "M j"
YEAR_MONTH_FORMAT = "M Y"
