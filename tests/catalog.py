"""The Spanish catalog read back for the tests: its messages, and the English a page must not still show."""

import re
from pathlib import Path

from django.conf import settings

SPANISH = Path(settings.BASE_DIR) / "locale" / "es" / "LC_MESSAGES"


def _unquote(parts: list[str]) -> str:
    text = "".join(part.strip()[1:-1] for part in parts)
    return text.replace('\\"', '"').replace("\\n", "\n").replace("\\\\", "\\")


def messages(po: Path = SPANISH / "django.po") -> list[tuple[str, str, bool]]:
    """(msgid, msgstr, fuzzy) for each message of the catalog, the header left out."""
    out = []
    for block in po.read_text(encoding="utf-8").split("\n\n"):
        lines = block.strip().split("\n")
        ids = [i for i, line in enumerate(lines) if line.startswith(("msgid ", "msgstr "))]
        if len(ids) != 2:
            continue
        start, end = ids
        msgid = _unquote([lines[start][6:], *lines[start + 1:end]])
        msgstr = _unquote([lines[end][7:], *lines[end + 1:]])
        if msgid:
            out.append((msgid, msgstr, any(line.startswith("#,") and "fuzzy" in line for line in lines)))
    return out


def english_left(text: str, *, words: int = 2, ignoring: list[str] = ()) -> list[str]:
    """The catalog's English phrases (of ``words`` words or more, placeholders and markup left out) that ``text``
    still shows: each is a string a Spanish page should have translated. ``ignoring``: what the page shows as
    recorded (an issued bill's line descriptions, as the rates word them), taken out first."""
    found = []
    flat = " ".join(text.split())
    for recorded in ignoring:
        flat = flat.replace(" ".join(recorded.split()), "")
    for msgid, msgstr, _ in messages():
        for fragment in re.split(r"%\(\w+\)s|<[^>]+>", msgid):
            fragment = " ".join(fragment.split()).strip(" .,:;()")
            if len(fragment.split()) >= words and fragment not in msgstr and fragment in flat:
                found.append(fragment)
    return found


def as_the_ordinance_words_it(bill) -> list[str]:
    """What a bill shows in the ordinance's own words, kept as written in every language: what each of its lines
    charged (the issued bill's record) and the late-payment rule."""
    from billing.ordinance import ordinance_on

    return [*(line.description for line in bill.lines.all()), ordinance_on(bill.bill_date).penalties.words or ""]
