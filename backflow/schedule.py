"""When a backflow device's next test falls due, per preset. Pure: dates in, a date and its citation out.

Every preset tests yearly; only the basis differs, and the citation says which:
* Mineola: Chapter 45 sets no test frequency; the annual test is office policy, labelled ``policy``.
* Washingtonville: "tested at least annually" (§ 169-31), "on an annual basis" with results to the
  Building Inspector (§ 169-35).
* South Farmingdale: "tested at least once a year by a New York State certified tester"; "the frequency
  and charges ... shall be determined by the Board" (§ 7.5). docs/ordinances.md calls the yearly frequency a
  sample the Board replaces; the seed's text makes once a year the least it may be.
* Lansing: process-water devices "at least once a year" (§ 141-4 C) and an updated certification in every
  twelve-month period (§ 141-10 F). After a certification the municipality found defective it may require,
  by written notice, a certification once in each four-month period during the twelve months that follow
  (§ 141-10 F): passing ``defective_certification_on`` says it did.
* Old Westbury: Chapter 210 sets no test frequency either (devices are to be "installed, tested and
  maintained"); the annual test is office policy, labelled ``policy``.

"A year after" is the same day twelve months later, clamped to the month's end (core.dates.add_months).

Lansing's four-month rule, **Interpretation:** the next test is due four months after the later of the
last test and the defective certification, while that date falls before the end of the twelve months
after the defective certification; a test whose four months would reach past them has satisfied the last
four-month period, and the yearly rule takes over from it.
"""

from dataclasses import dataclass
from datetime import date

from core.dates import add_months


@dataclass(frozen=True)
class DeviceTestFrequency:
    """How often a preset's devices are tested. ``basis`` is ``ordinance``, ``policy`` (not in the seed) or
    ``sample`` (set by the Board; the preset ships a value the clerk replaces)."""

    months: int
    citation: str
    basis: str
    words: str
    after_defect_months: int | None = None
    after_defect_for_months: int | None = None
    after_defect_citation: str = ""


TEST_FREQUENCY: dict[str, DeviceTestFrequency] = {
    "mineola": DeviceTestFrequency(
        12, "policy (Chapter 45 sets no backflow test frequency)", "policy",
        "tested once a year: office policy, since Chapter 45 sets no test frequency"),
    "washingtonville": DeviceTestFrequency(
        12, "§ 169-35", "ordinance",
        "tested on an annual basis by the owner, results submitted to the Building Inspector"),
    "south_farmingdale": DeviceTestFrequency(
        12, "§ 7.5 (sample: the Board sets the frequency)", "sample",
        "tested at least once a year by a New York State certified tester; the Board sets the frequency"),
    "lansing": DeviceTestFrequency(
        12, "§ 141-4 C; § 141-10 F", "ordinance",
        "tested at least once a year, with an updated certification every twelve months",
        after_defect_months=4, after_defect_for_months=12,
        after_defect_citation="§ 141-10 F (every four months for twelve months after a defective certification)"),
    "old_westbury": DeviceTestFrequency(
        12, "policy (Chapter 210 sets no backflow test frequency)", "policy",
        "tested once a year: office policy, since Chapter 210 sets no test frequency"),
}


def device_test_frequency(preset: str) -> DeviceTestFrequency:
    """The test frequency of ``preset``; an unknown preset is refused naming the known ones."""
    try:
        return TEST_FREQUENCY[preset]
    except KeyError:
        raise ValueError(f"no test frequency for the preset '{preset}'; the presets with one are: "
                         f"{', '.join(TEST_FREQUENCY)}") from None


def next_test_due(preset: str, *, tested_on: date, defective_certification_on: date | None = None
                  ) -> tuple[date, str]:
    """The day the device tested on ``tested_on`` is next due for its test, and the citation.

    ``defective_certification_on``: the day a certification the municipality notified as defective was
    delivered (Lansing § 141-10 F); refused for a preset that has no such rule.
    """
    frequency = device_test_frequency(preset)
    if defective_certification_on is not None:
        if frequency.after_defect_months is None:
            raise ValueError(f"the {preset} preset has no rule for tests after a defective certification; "
                             f"only Lansing has (§ 141-10 F)")
        window_end = add_months(defective_certification_on, frequency.after_defect_for_months)
        due = add_months(max(tested_on, defective_certification_on), frequency.after_defect_months)
        if due < window_end:
            return due, frequency.after_defect_citation
    return add_months(tested_on, frequency.months), frequency.citation
