"""When a backflow device's next test falls due, per preset (``[backflow.test_frequency]``): dates in, a date and
its citation out.

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


def frequency_from(params: dict) -> DeviceTestFrequency:
    """A preset's ``[backflow.test_frequency]``; a missing key raises KeyError, a value not of its kind ValueError."""
    defect = params.get("after_defect_months")
    return DeviceTestFrequency(
        months=int(params["months"]), citation=params["citation"], basis=params["basis"], words=params["words"],
        after_defect_months=int(defect) if defect is not None else None,
        after_defect_for_months=int(params["after_defect_for_months"]) if defect is not None else None,
        after_defect_citation=params.get("after_defect_citation", ""))


def next_test_due(frequency: DeviceTestFrequency, *, tested_on: date,
                  defective_certification_on: date | None = None) -> tuple[date, str]:
    """The day the device tested on ``tested_on`` is next due for its test, and the citation.

    ``defective_certification_on``: the day a certification the municipality notified as defective was
    delivered (Lansing § 141-10 F); refused for a preset that has no such rule.
    """
    if defective_certification_on is not None:
        if frequency.after_defect_months is None:
            raise ValueError("the preset has no rule for tests after a defective certification "
                             "([backflow.test_frequency] after_defect_months)")
        window_end = add_months(defective_certification_on, frequency.after_defect_for_months)
        due = add_months(max(tested_on, defective_certification_on), frequency.after_defect_months)
        if due < window_end:
            return due, frequency.after_defect_citation
    return add_months(tested_on, frequency.months), frequency.citation
