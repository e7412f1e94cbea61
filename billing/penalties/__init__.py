"""Late charges: the schemes a preset selects and what they make owed (``rules``), the night's plan against the books
(``plan``), what the clerk sees before it (``selectors``), the shortcuts the hot paths take (``shortcuts``), and the
late charges owed and not yet posted on a day (``unposted``). Posting them is ``billing.services.penalties``."""
