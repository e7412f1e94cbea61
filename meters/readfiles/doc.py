"""``docs/readings.md``, written from the read-file mapping's registry (``meters.readfiles.mapping.MAPPING``): every
key a mapping may hold with its kind and meaning, the codes, the rules the reads are held to, and the shipped
mappings. ``manage.py reading_docs --write`` writes it; a test keeps the file current."""

from pathlib import Path

from django.conf import settings

from ordinance.keys import MapOf, Shape, doc_table

from .mapping import FLAGS, MAPPING, NO_FLAG, NO_READ, READ_TYPES, UNITS

DOC = Path(settings.BASE_DIR) / "docs" / "readings.md"
SHIPPED = Path(settings.BASE_DIR) / "fixtures" / "readfiles"

RULES = """## How the reads are held

* **Numbers.** A number is ASCII digits with at most one decimal mark (`[units] decimal`), thousands separators
  where `[units] thousands` allows them, and a leading sign only where `[units] signed` is true. NaN, Infinity, an
  exponent (`1e9999`) or any other spelling is refused naming the line and the field, never a crash. The register is
  the number × `[units] multiplier` × the line's own `multiplier` field, converted from the file's unit to the
  meter's (gal ← kgal × 1,000; cf ← ccf × 100); gallons and cubic feet are never converted into each other. The
  register must come out a whole number of the meter's steps — its unit, or the hundredths of it a meter recorded
  with `places` = 2 shows (50.082,16 cu ft is kept as 50,082.16) — at most 10 digits, never below zero; with
  `[units] fraction = "drop"` places finer than the meter's are dropped as its wheels drop them. The gallons billed
  are worked out from the steps (cubic feet × 7.48052, whole gallons half up).
* **Read types.** Each code in the read type field is looked up in `[read_types]`; a blank field is an actual read.
  `change` records the old meter's final reading and the new meter with its first (the line's new_meter fields).
  `no_read` records nothing as a reading: the meter, day, code and line are kept as a missed read, the clerk's list
  shows them, and the bill goes to the run's exceptions (no reading in the read window), whose detail names the code.
* **Flags.** Each code in the flags field is looked up in `[flags]` (separated by `separator`, or one character
  each); `none` is a code that means no event (OK). Each flag is a meter alert: a leak tells the customer, reverse
  flow opens a backflow follow-up, a mismatch asks for a re-read. A flag reported day after day is **one episode**:
  one alert, one notice; a later day of it moves the alert's "seen through" day on. The episode ends when a read of
  the meter comes in without the flag, or when the clerk resolves the alert; the next one is a new episode.
* **Controls.** A `[header]` or `[trailer]` record is recognised by its prefix. Its `count` must equal the reading
  records in the file and its `total` the sum of their readings as written; a required record missing (the default)
  refuses the file as cut off. A file with no reading at all is refused.
* **All or nothing.** Any refusal refuses the whole file, listing every line, field and rule; nothing is saved.
  `import_readings FILE --mapping M --dry-run` and the upload page's **Preview** run the whole import and keep
  nothing: they show what would be saved, or every refusal.
* **Expected range.** Each actual reading is checked against the range its meter's history foretells (the range the
  route file gives the handheld); one outside it is recorded and marked for a re-read.

## Daily reads (`reads = "daily"`)

Each line is a meter's register at the end of a day. The reads are kept one row per meter and month; a register never
runs backwards across them. Each complete month's last day is recorded as the meter's register reading, which is
what billing reads. **Continuous flow** is looked for over the last `CONTINUOUS_FLOW_DAYS` days (default 7) against
the 30 days before them: a meter that stood still on some of those 30 days (a day at zero) and now has water through
it every day is flagged (a steady small leak: 15 gal a day is found); a meter that never stood still is flagged when
its lowest day rises over its lowest earlier day plus the larger of `CONTINUOUS_FLOW_MARGIN_GALLONS` (default 100)
and that day again (a large leak). One alert per episode: while it is open a day of use moves it on, and a day the
meter stood still ends it.

## Interval reads (`reads = "interval"`)

Each line is a meter's register at the end of an hour (or a shorter interval); `[dates] format` gives the time
(`%Y-%m-%d %H:%M`). Each day's last read is kept as the day's register, with every flag of that day, and goes the
daily reads' way (a later file's later hours of a day move the day's register on). **Continuous flow** is looked for
hour by hour: water through the meter in every interval for 24 hours, none at zero (a running toilet, a trickle
daily reads cannot see). One alert per episode; an interval at zero after it ends the episode. A gap (an interval
longer than an hour) starts the 24 hours again.

## Rollover and partial files

A read below the meter's last reading that fits its `dials` — the register turned past all nines, and the use across
the turn is at most half a turn — is recorded as the register it stands for (kept as if the register had more
wheels, so use is always the difference) with a rollover alert; a read that does not fit is refused (a register
never runs backwards), which is also where a wrong dial count on the meter shows. With `partial = true`, a refused
line holds its meter (every line of it in the file) and the rest is imported; the held lines are listed with why.

## The route going out (`route_file`)

`route_file --book B --date D --mapping M` writes a book's meters in route order in the mapping's own reading layout:
the record prefix, the serial, the last read's day and register where the reading record has them — in the file's
unit (the register ÷ the multiplier, with the mapping's decimal mark), the code of an actual read — and the route's
own fields (stop, account, address, size, unit, low and high expected: low rounded up, high rounded down) where
`[route]` puts them (a fixed layout: clear of the reading's fields; a CSV one: under the `[route.columns]` names, our
field names otherwise). The header and trailer carry the count and total. The file comes back as it went out: a stop
keyed back unchanged is the reading already on file, and nothing new is recorded. A daily mapping has no route.
"""


def reading_doc() -> str:
    out = ["# Meter files: the read-file mapping", "",
           "<!-- Written by `manage.py reading_docs --write` from meters/readfiles/mapping.py's MAPPING; edit the "
           "keys' meanings there, not this file. -->", "",
           "A meter system's own file — a handheld's route file, a drive-by's or an AMI head-end's export — is read "
           "through a mapping: one TOML file in `READ_MAPPINGS_DIR` (default `fixtures/readfiles`; an office that "
           "sets it to its own folder sees only the mappings there, so copy the shipped ones it wants), named on "
           "`import_readings FILE --mapping NAME` or chosen on the readings upload page. A mapping is checked whole "
           "before a file is read: a key not listed here is refused, naming it and the nearest known one; every "
           "value by its kind; every refusal at once. Each shipped mapping (at the end) is a worked example of the "
           "keys.", "",
           "## The keys", ""]
    for name, key in MAPPING.keys.items():
        kind = key.kind
        if isinstance(kind, (Shape, MapOf)) and out[-1]:
            out.append("")
        if isinstance(kind, Shape):
            out += [f"### `[{name}]`", "", key.meaning, "", *doc_table(kind), ""]
        elif isinstance(kind, MapOf):
            out += [f"### `[{name}]`", "", key.meaning + ".", "",
                    f"Each key is {kind.key_words}; each value {kind.value.words}.", ""]
        else:
            out.append(f"* `{name}` ({kind.words}): {key.meaning}")
    out += ["", "## Units and codes", "",
            f"* Units a file may read in: {', '.join(UNITS)} (blank: the meter's own, gal or cf).",
            f"* Read types: {', '.join(READ_TYPES)} (`{NO_READ}`: not read, kept as a missed read).",
            f"* Flags: {', '.join(FLAGS)}, and `{NO_FLAG}` (a code that means no event).", "", RULES.strip(), "",
            "## The shipped mappings", ""]
    for path in sorted(SHIPPED.glob("*.toml")):
        out += [f"### `{path.stem}`", "", "```toml", path.read_text().strip(), "```", ""]
    return "\n".join(out)
