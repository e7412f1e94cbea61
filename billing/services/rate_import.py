"""Importing a rate schedule from an Open Water Rate Specification file (``import_rates``, the admin page).

``prepare_import`` reads and checks everything and saves nothing: the file (its line and field named on a
refusal), the class map (a class the file lacks, a category we do not have, a frequency the calendar never
bills, a category left with no class), the date (a schedule already taking effect that day) and the citation
every bill line must carry. It says what the schedule will bill and what accounts lack for it.
``activate_import`` then adds the schedule, all or nothing. ``preview_bill`` rates one bill under rules not
yet saved, so a clerk sees a bill before adopting them.
"""

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import date

from django.db import IntegrityError, transaction

from accounts.models import Account
from core.errors import ApplicationError, FieldError, refuse_any
from meters.units import METER_SIZES

from .. import owrs
from ..models import RateSchedule
from ..ordinance import ordinance_on, rate_structure_for
from ..owrs.structure import class_for, class_targets, extra_schedule, split_targets
from ..rate_tables import category_words
from ..rating import Rated, RatingError, RatingInput

CITATION_MAX = RateSchedule._meta.get_field("citation").max_length


@dataclass(frozen=True)
class PreparedImport:
    rules: dict
    effective_on: date
    citation: str
    class_map: dict[str, str]
    classes: list[str]  # the file's classes, in order
    needs: dict[str, list[str]]  # class -> the account fields it reads, [] when none
    accounts_missing: dict[str, int]  # account field -> accounts of the mapped categories that lack it
    notes: list[str]  # plain sentences for the clerk


def parse_class_map(lines: Iterable[str]) -> dict[str, str]:
    """``OWRS_CLASS=category[@frequency]`` entries, one a line (blank lines skipped); a class named on several
    lines bills each target. Refused, naming every bad entry and the rule it breaks."""
    class_map: dict[str, list[str]] = {}
    errors = []
    for number, raw in enumerate(lines, start=1):
        entry = raw.strip()
        if not entry:
            continue
        cls, equals, targets = (part.strip() for part in entry.partition("="))
        if not equals or not cls or not split_targets(targets):
            errors.append(FieldError(field="class_map", line=number, message=(
                f"'{entry}' is not OWRS_CLASS=category or OWRS_CLASS=category@frequency (e.g. "
                "RESIDENTIAL_SINGLE=one_two_family, or MONTHLY=other@monthly)")))
            continue
        for target in split_targets(targets):
            category, _, frequency = target.partition("@")
            if not category or (target.count("@") and not frequency) or target.count("@") > 1:
                errors.append(FieldError(field="class_map", line=number, message=(
                    f"'{target}' in '{entry}' is not category or category@frequency")))
            elif target not in class_map.setdefault(cls, []):
                class_map[cls].append(target)
    refuse_any(errors)
    return {cls: ", ".join(targets) for cls, targets in class_map.items()}


def prepare_import(text: str, *, effective_on: date, class_map: Mapping[str, str] | None = None,
                   citation: str = "") -> PreparedImport:
    """Check an OWRS file for import (above); saves nothing."""
    parsed = owrs.parse(text)
    classes = list(parsed.classes)
    if class_map is None:
        class_map = parsed.extra.get("class_map") or {}
        if not isinstance(class_map, dict) or not all(isinstance(v, str) for v in class_map.values()):
            raise ApplicationError("the file's waterbilling.class_map must map each class to its categories, e.g. "
                                   "OTHER: \"other, nonprofit\"", field="class_map")
    class_map = {str(cls): str(targets) for cls, targets in class_map.items()}
    if not class_map:
        raise ApplicationError(f"no class is mapped to our categories; map each (--class-map CLASS=category, "
                               f"classes: {', '.join(classes)}; categories: {', '.join(Account.Category.values)})",
                               field="class_map")
    frequencies = _billed_frequencies(effective_on)
    _refuse_bad_entries(class_map, classes=classes, frequencies=frequencies)
    by_target = class_targets(class_map)
    unbilled = [(category, frequency) for category in Account.Category.values for frequency in frequencies
                if class_for(by_target, category=category, frequency=frequency) is None]
    if unbilled:
        words = ", ".join(f"{category} billed {frequency}" for category, frequency in unbilled)
        raise ApplicationError(f"no class bills {words}; map a class to each category (CLASS=category bills it at "
                               "every frequency, CLASS=category@frequency at one)", field="class_map")

    existing = RateSchedule.objects.filter(effective_on=effective_on).first()
    if existing is not None:
        raise ApplicationError(f"a rate schedule already takes effect on {effective_on} ({existing.citation}); "
                               "choose another date, or keep that one", field="effective_on")
    citation = (citation or str(parsed.metadata.get("citation") or "")).strip()
    if not citation:
        raise ApplicationError("every bill line must carry a citation: give the ordinance or resolution that adopts "
                               "these rates (--citation, or metadata.citation in the file)", field="citation")
    if len(citation) > CITATION_MAX:
        raise ApplicationError(f"'{citation}' is longer than {CITATION_MAX} characters; cite it shorter",
                               field="citation")
    extra_schedule(parsed.extra)  # refuses a nonprofit or sprinkler table it cannot read

    # The citation given is the one the file's lines carry (and an export writes).
    stored = replace(parsed, metadata={**parsed.metadata, "citation": citation}).to_json()
    rules = {"structure": "owrs", "citation": citation, "class_map": class_map, "owrs": stored}
    rate_structure_for(rules)
    needs = {cls: [name for name in parsed.needs(cls) if name in owrs.ACCOUNT_FIELDS
                   and name not in owrs.ENGINE_FIELDS] for cls in classes}
    missing = _accounts_missing(needs, by_target)
    return PreparedImport(rules=rules, effective_on=effective_on, citation=citation, class_map=class_map,
                          classes=classes, needs=needs, accounts_missing=missing,
                          notes=_notes(class_map, classes=classes, needs=needs, missing=missing)
                          + ([SAMPLE_NOTE] if parsed.extra.get("sample") is True else []))


SAMPLE_NOTE = ("The file says its values are a sample (waterbilling: sample: true): the schedule is added as "
               "sample rates, and bills are issued with it only once a clerk accepts them or the adopted rates "
               "replace them.")


@transaction.atomic(durable=True)
def activate_import(prepared: PreparedImport) -> RateSchedule:
    """Add the prepared schedule, in force from its date (bills dated earlier keep theirs)."""
    try:
        with transaction.atomic():
            # A file written from sample values says so (``waterbilling: sample: true``), and stays a sample.
            sample = owrs.OwrsFile.from_json(prepared.rules["owrs"]).extra.get("sample") is True
            return RateSchedule.objects.create(effective_on=prepared.effective_on, citation=prepared.citation,
                                               is_sample=sample, rules=prepared.rules)
    except IntegrityError as exc:
        raise ApplicationError(f"a rate schedule already takes effect on {prepared.effective_on}; nothing was "
                               "added", field="effective_on") from exc


def preview_bill(rules: dict, *, category: str, meter_size: str, gallons: int, frequency: str,
                 facts: Mapping[str, object] | None = None) -> Rated:
    """One bill under ``rules``: the first of a billable year, with nothing charged yet that year."""
    if category not in Account.Category.values:
        raise ApplicationError(f"'{category}' is not a category (categories: {', '.join(Account.Category.values)})",
                               field="category")
    try:
        return rate_structure_for(rules).rate(RatingInput(
            frequency=frequency, category=category, gallons=gallons, meter_size=meter_size,
            first_bill_of_year=True, facts=dict(facts or {})))
    except RatingError as exc:
        raise ApplicationError(str(exc), field="rates") from exc


def _billed_frequencies(on: date) -> list[str]:
    """The frequencies the installed calendar bills, by the meter sizes there are."""
    calendar = ordinance_on(on).calendar
    return list(dict.fromkeys(calendar.frequency_for(size) for size in METER_SIZES))


def _refuse_bad_entries(class_map: Mapping[str, str], *, classes: list[str], frequencies: list[str]) -> None:
    errors = []
    for cls, targets in class_map.items():
        if cls not in classes:
            errors.append(FieldError(field="class_map", message=(
                f"{cls} is not a customer class of the file (classes: {', '.join(classes)})")))
        for target in split_targets(targets):
            category, _, frequency = target.partition("@")
            if category not in Account.Category.values:
                errors.append(FieldError(field="class_map", message=(
                    f"{cls}={target}: '{category}' is not a category (categories: "
                    f"{', '.join(Account.Category.values)})")))
            if frequency and frequency not in frequencies:
                errors.append(FieldError(field="class_map", message=(
                    f"{cls}={target}: the billing calendar never bills {frequency} (it bills "
                    f"{', '.join(frequencies)})")))
    refuse_any(errors)


def _accounts_missing(needs: dict[str, list[str]], by_target: Mapping[str, str]) -> dict[str, int]:
    """For each field a class reads: how many open accounts it would bill (by their category, or the class
    their rate fields name) do not carry it."""
    if not any(needs.values()):
        return {}
    by_category: dict[str, set[str]] = {}
    for target, cls in by_target.items():
        by_category.setdefault(target.partition("@")[0], set()).add(cls)
    missing: Counter = Counter()
    rows = Account.objects.exclude(status=Account.Status.CLOSED).values_list("category", "rate_fields")
    for category, rate_fields in rows.iterator():
        rate_fields = rate_fields or {}
        named = rate_fields.get("cust_class")
        classes = {named} if named else by_category.get(category, set())
        wanted = {name for cls in classes for name in needs.get(cls, [])}
        missing.update(name for name in wanted if rate_fields.get(name) in (None, ""))
    fields = dict.fromkeys(name for names in needs.values() for name in names)
    return {name: missing[name] for name in fields}


def _notes(class_map: Mapping[str, str], *, classes: list[str], needs: dict[str, list[str]],
           missing: dict[str, int]) -> list[str]:
    notes = []
    for cls, targets in class_map.items():
        words = []
        for target in split_targets(targets):
            category, _, frequency = target.partition("@")
            words.append(f"{category_words(category).lower()} ({frequency} bills)" if frequency
                         else category_words(category).lower())
        notes.append(f"{cls} bills {', '.join(words)}.")
    unmapped = [cls for cls in classes if cls not in class_map]
    if unmapped:
        notes.append(f"{', '.join(unmapped)} bill{'s' if len(unmapped) == 1 else ''} only accounts whose rate "
                     "fields name the class (cust_class).")
    for cls, fields in needs.items():
        if fields:
            notes.append(f"{cls} reads {', '.join(fields)} from each account's rate fields.")
    for name, count in missing.items():
        if count:
            notes.append(f"{count} account{'s' if count != 1 else ''} billed by a class that reads {name} "
                         f"{'do' if count != 1 else 'does'} not carry it; {'their' if count != 1 else 'its'} bills "
                         "are refused, naming the field, until it is entered.")
    return notes
