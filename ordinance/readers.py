"""The tables the ordinance floor reads itself: the discrepancies between the printed text and the preset."""

from .keys import Key, Text
from .sections import section_register


def notes_from(params: list) -> tuple[dict, ...]:
    notes = tuple(params or ())
    for note in notes:
        if not isinstance(note, dict) or "text" not in note:
            raise ValueError("each [[note]] has a citation and a text")
    return notes


section_register(
    "note", notes_from, owner="ordinance", is_list=True,
    meaning="Where the preset departs from, or reads into, the printed text: one [[note]] each, shown on the "
            "Utility page and in the docs.",
    keys={"citation": Key("the section the note is about", Text(), required=True),
          "text": Key("what the preset does and why", Text(blank=False), required=True)})
