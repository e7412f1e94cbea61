"""Device rules: which backflow device types a premises' recorded conditions allow, one rule per preset.

Design overview
---------------
A clerk (or the inspector, through the clerk) records the conditions found at a premises as codes:
``toxic``, ``hospital``, ``cross_connection`` … Each preset's rule lists the codes it knows, each with its
label and citation (``conditions()``), and turns a set of codes into an ``Assessment`` (``assess()``):
whether a device is required, which device types are allowed, the citation, and a trace that says in words
which condition decided and under which section. ``Assessment.as_json()`` is the ``backflow require
--json`` answer. Pure Python: no database, no Django; the services record what this decides. When a
device's next test falls due is ``backflow.schedule``; Lansing's certification fine is ``backflow.fines``.

Device types are ``AG`` (air gap), ``RPZ`` (reduced-pressure zone device; Mineola's "RPD"), ``DCA``
(double check valve assembly), ``AVB`` and ``PVB`` (atmospheric and pressure vacuum breakers); every answer
lists them in that order.

How several conditions combine (every preset but Mineola, whose codes pick one row of one table):
* A hazard condition allows a set of device types; the premises is allowed what **every** hazard condition
  allows (the intersection: the strictest wins).
* A condition that is not a hazard (Lansing ``pool``, ``double_wall_hx``) adds nothing, and neither does a
  waived one.
* When no device type meets every condition (Lansing ``auxiliary_approved`` → DCA with ``toxic`` → AG), the
  trace says so, the ``no_common_type`` flag is raised, and the **strictest single condition** decides: the
  one whose weakest allowed device is the strongest (AG > RPZ > DCA > AVB > PVB), then the one allowing
  fewer types, then the first in the rule's order. A device that protects against the worst hazard is
  the one an inspector would ask for; the flag tells the clerk the conditions need a second look.
* A type allowed only with a recorded reason (Lansing ``sewage_plant``: RPZ only where an air gap cannot
  reasonably be met) counts as allowed when ``reason`` is given; otherwise it is listed in
  ``needs_reason``, not in ``allowed``.
* Waivers (Lansing ``popup_sprinkler`` and ``multi_customer``, "RPZ unless waived") are their own codes,
  ``waived:popup_sprinkler`` and ``waived:multi_customer``: recording the waiver records the condition as
  present and waived in writing; recording both the condition and its waiver is the same.
* An inspector's determination (Washingtonville's Building Inspector, South Farmingdale's District, Old
  Westbury's inspector under § 210-43) is the code ``inspector_determination`` (South Farmingdale:
  ``district_determination``) with one or more ``determined:<TYPE>`` codes naming the device types decided
  (``determined:RPZ``), and a ``note`` recording the determination. It is one more condition in the
  intersection, so it can narrow a listed facility's types but never loosen them.
* An unknown code, a ``determined:`` type without a determination, a determination without a type or
  without its note are refused with ``ConditionError`` (a ``ValueError`` carrying the field: ``condition``
  or ``note``) naming each unknown code and the codes the rule knows.

Per preset (docs/ordinances.md; the seeds in ``../shared/seeds/``):
* Mineola, § 45.45 H: ``cross_connection``, ``back_pressure``, ``hazardous``. Without ``cross_connection``
  no device is required; with it, the design-criteria table's row (reconstructed, see below).
* Washingtonville, §§ 169-31 – 169-37: ``non_residential`` and ``auxiliary_supply`` (a residential user with
  a private well, lawn sprinkler or irrigation system) bring a user under Article II (§ 169-32) and allow
  the devices the article names (air gap, RPZ, double check valve); each facility kind of the two lists of
  § 169-34 is a code (RPZ or air gap; double check valve); ``inspector_determination`` for what the lists do
  not name ("the above lists are not all-inclusive").
* South Farmingdale: ``permanent_service`` (§ 5.6), ``pool`` and ``underground_sprinkler`` (§ 5.19),
  ``water_cooled_equipment`` (§ 10.3(c)), ``bottled_water_facility`` (§ 9.1(b)) and
  ``district_determination`` (§ 7.2).
* Lansing, §§ 141-3 B, 141-12 – 141-14: exactly the codes of docs/ordinances.md "Lansing", plus the two waivers.
* Old Westbury: the device table of § 210-43 is not in the published text. The rule asks for a device
  where the inspector finds a hazard (``inspector_determination``, § 210-43), and names the protections the
  published text does give: ``cross_connection`` (RPZ "or equal"), ``individual_supply`` (a cross-connection
  with an individual water supply, approved in writing), ``boiler_feed`` (air gap, reduced-pressure or
  double check) and ``pump_priming`` (an air gap only).

Interpretations and differences between docs/ordinances.md and the seeds (the spec is followed):
* Mineola § 45.45 H: the X marks lost their columns in the published text (2, 3, 4 and 5 marks per row);
  the rows are docs/ordinances.md's reconstruction. § 45.45 B also says a cross-connection is allowed only as
  approved by the State Commissioner of Health with "the reduced-pressure zone backflow preventer or equal";
  the table (the spec) still allows DCA, AVB and PVB for a connection without back pressure or hazard, so a
  cross-connection raises the ``approval_required`` flag instead of narrowing the types. The seed letters the
  table's paragraph "b." twice (H(2)); the rule cites "§ 45.45 H" as the spec does.
* Lansing § 141-3 B(4) (a toxic substance handled in liquid form, even if not under pressure: ``toxic``) and
  B(5) (under pressure: ``toxic_pressure``): an air gap or an approved RPZ, either one lawful, no reason
  needed. B(6) (a sewage treatment plant or pumping station: ``sewage_plant``): an air gap; an RPZ only where
  the air gap's conditions cannot reasonably be met and the purveyor accepts it, with the reason recorded.
* Lansing ``private_well`` (§ 141-12 B(1)): the spec gives no device. A well is an auxiliary supply, so its
  device follows § 141-3 B(1)–(2): AG, RPZ or DCA, narrowed by ``auxiliary_approved`` (DCA) or
  ``auxiliary_unapproved`` / ``auxiliary_cross_connected`` (AG or RPZ) when recorded with it.
* Lansing § 141-12 A: boiler feed inhibitors, antifreeze loops and single-walled heat exchangers are hazards
  only on the municipality's determination; the spec's code list has no code for them and neither does this
  rule. Lawn sprinkler systems 6 inches or more above grade are exempt from § 141-12 B(2): record no
  sprinkler code for them. § 141-12 B(2) and § 141-13 say "reduced pressure zone devices": RPZ only.
* Washingtonville: the published text drops the subsection letters, so citations name the section
  (§ 169-32, § 169-34). The spec's table row leaves pumping stations and sewer flushers out of the RPZ or
  air gap list; its "More rules" and the seed name them, and so does the rule. The double check list names
  a double check valve: DCA only; a premises on both lists gets the RPZ or air gap list's types (the
  strictest wins). ``non_residential`` and ``auxiliary_supply`` allow AG, RPZ or DCA, the devices § 169-32
  names ("air gap, reduced-pressure-zone device, double check valve assembly or equivalent"), until a list
  or the Building Inspector narrows them.
* South Farmingdale: § 5.6's title in the seed is "Water not to be sub-metered"; its text requires a remote
  meter and backflow device for every permanent installation. The device types for a permanent service,
  a pool and an underground sprinkler are § 7.2's (air gap, RPZ, double check "or equivalent ... as
  determined by the District"): AG, RPZ, DCA. § 5.19 requires the District's approval before connecting:
  the ``approval_required`` flag. The seed also requires an RPZ for a bottled/vended water facility
  (§ 9.1(b)), a code the spec does not list.
* Old Westbury: the seed gives no section numbers for the cross-connection, individual supply, boiler and
  prohibited-connection paragraphs; they are cited by name, as docs/ordinances.md cites Old Westbury's other
  unnumbered rules ("backflow enforcement", "sprinkler rule").
"""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

DEVICE_TYPES: tuple[str, ...] = ("AG", "RPZ", "DCA", "AVB", "PVB")
DEVICE_WORDS = {
    "AG": "air gap",
    "RPZ": "reduced-pressure zone device",
    "DCA": "double check valve assembly",
    "AVB": "atmospheric vacuum breaker",
    "PVB": "pressure vacuum breaker",
}
# Other names for the same device, as an ordinance or a tester's form writes them.
DEVICE_ALIASES = {"RPD": "RPZ", "RPBP": "RPZ", "DCVA": "DCA"}

# Flags an assessment may raise, and what each tells the clerk.
FLAGS = {
    "no_common_type": "no device type meets every condition recorded; the strictest condition decided",
    "approval_required": "the connection needs approval before it is made (see the condition's citation)",
    "determination": "an inspector's determination, recorded in the note, decided the device types",
    "reason_recorded": "a device type allowed only with a recorded reason was allowed on the reason given",
    "waived": "a condition was waived in writing and asks for no device",
    "waiver_void_if_change_unreported": "the waiver is void if a change of users is not reported within "
                                        "30 days (§ 141-14 B)",
}

WAIVED = "waived:"
DETERMINED = "determined:"


class ConditionError(ValueError):
    """Conditions the rule cannot assess: an unknown code, or a determination without its type or note.
    ``field`` names the input at fault (``condition`` or ``note``)."""

    def __init__(self, message: str, *, field: str = "condition"):
        super().__init__(message)
        self.field = field


def device_type(text: str) -> str:
    """A device type as the rules name it: ``rpd`` → ``RPZ``. Raises ValueError naming the types."""
    cleaned = str(text).strip().upper().replace(".", "")
    cleaned = DEVICE_ALIASES.get(cleaned, cleaned)
    if cleaned not in DEVICE_TYPES:
        raise ValueError(f"'{text}' is not a device type; use one of {', '.join(DEVICE_TYPES)}")
    return cleaned


def in_device_order(types: Iterable[str]) -> tuple[str, ...]:
    wanted = set(types)
    return tuple(t for t in DEVICE_TYPES if t in wanted)


def _types(types: Iterable[str]) -> str:
    listed = in_device_order(types)
    return ", ".join(listed) if listed else "none"


@dataclass(frozen=True)
class Condition:
    """A code a clerk may record for a premises, what it means, and the section behind it."""

    code: str
    label: str
    citation: str


@dataclass(frozen=True)
class Assessment:
    """What the recorded conditions ask for. ``allowed`` is in device order (AG, RPZ, DCA, AVB, PVB);
    ``needs_reason`` holds types that a recorded reason would allow; ``trace`` says which condition decided,
    with its citation; ``flags`` are keys of ``FLAGS``."""

    required: bool
    allowed: tuple[str, ...]
    citation: str
    trace: tuple[str, ...]
    needs_reason: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()

    def as_json(self) -> dict:
        """The ``backflow require --json`` answer."""
        return {"required": self.required, "allowed": list(self.allowed), "citation": self.citation}

    def allows(self, device: str) -> bool:
        """Whether a device of this type meets the assessment (a type not allowed is flagged, not refused)."""
        return device_type(device) in self.allowed


class DeviceRule(Protocol):
    """A preset's device rule: the codes it knows and what a set of them asks for."""

    preset: str
    citation: str

    def conditions(self) -> list[Condition]: ...

    def assess(self, codes: Iterable[str], *, note: str = "", reason: str = "") -> Assessment: ...


def _codes(codes: Iterable[str]) -> set[str]:
    if isinstance(codes, str):
        raise TypeError("codes must be a collection of condition codes, not one string")
    out = set()
    for code in codes:
        code = str(code).strip()
        if code.startswith(DETERMINED):
            code = DETERMINED + code[len(DETERMINED):].strip().upper()
        out.add(code)
    return out


def _refuse_unknown(preset: str, codes: set[str], known: list[str]) -> None:
    unknown = sorted(codes - set(known))
    if unknown:
        raise ConditionError(
            f"unknown condition code{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(repr(code) for code in unknown)} for the {preset} device rule; "
            f"the codes it knows are: {', '.join(known)}")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(item for item in items if item))


# ---------------------------------------------------------------------------------------------------------
# A design-criteria table: one row, picked by two yes-or-no conditions (Mineola § 45.45 H)


@dataclass(frozen=True)
class DesignCriteriaTable:
    """A physical connection (``cross_connection``) gets the table's row for whether it may be subject to back
    pressure (``back_pressure``) and whether it involves hazardous substances (``hazardous``); without a
    physical connection no device is required (Mineola § 45.45 H, "Design Criteria for Physical Connection
    Control Devices"). The labels and the rows are the preset's (``[backflow.device_rule]``)."""

    preset: str
    citation: str
    labels: dict  # cross_connection, back_pressure, hazardous → what each means
    table: dict  # (back pressure?, hazardous?) → the device types marked in the row

    @classmethod
    def from_params(cls, preset: str, params: dict) -> "DesignCriteriaTable":
        return cls(preset=preset, citation=params["citation"],
                   labels={"cross_connection": params["connection"], "back_pressure": params["back_pressure"],
                           "hazardous": params["hazardous"]},
                   table={(True, True): _type_list(params["subject_hazardous"]),
                          (True, False): _type_list(params["subject_nonhazardous"]),
                          (False, True): _type_list(params["not_subject_hazardous"]),
                          (False, False): _type_list(params["not_subject_nonhazardous"])})

    def conditions(self) -> list[Condition]:
        return [Condition(code, label, self.citation) for code, label in self.labels.items()]

    def assess(self, codes: Iterable[str], *, note: str = "", reason: str = "") -> Assessment:
        given = _codes(codes)
        known = [c.code for c in self.conditions()]
        _refuse_unknown(self.preset, given, known)
        back_pressure, hazardous = "back_pressure" in given, "hazardous" in given
        if "cross_connection" not in given:
            recorded = [code for code in known if code in given]
            why = (f"{' + '.join(recorded)} without cross_connection" if recorded else "no cross_connection")
            return Assessment(required=False, allowed=(), citation=self.citation,
                              trace=(f"{why} → no device required ({self.citation}: the table protects a "
                                     f"physical connection)",))
        allowed = self.table[(back_pressure, hazardous)]
        row = (f"{'subject' if back_pressure else 'not subject'} to back pressure, "
               f"{'hazardous' if hazardous else 'nonhazardous'} substances")
        recorded = " + ".join(code for code in known if code in given)
        return Assessment(required=True, allowed=allowed, citation=self.citation,
                          trace=(f"{recorded} → {_types(allowed)} ({self.citation}: {row})",),
                          flags=("approval_required",))


def _type_list(types) -> tuple[str, ...]:
    return in_device_order(device_type(t) for t in types)


# ---------------------------------------------------------------------------------------------------------
# A list of conditions, combined by intersection


@dataclass(frozen=True)
class Protection:
    """One condition of a ``ConditionListRule``: the device types it allows outright, those it allows only
    with a recorded reason, whether it is a hazard at all, and the citation of a written waiver if it may be
    waived."""

    code: str
    label: str
    citation: str
    allowed: tuple[str, ...] = ()
    with_reason: tuple[str, ...] = ()
    reason_words: str = ""
    reason_citation: str = ""
    hazard: bool = True
    waiver_citation: str = ""
    flags: tuple[str, ...] = ()
    waiver_flags: tuple[str, ...] = ()  # raised when the condition is waived (Lansing § 141-14 B)

    def types(self, *, reason: bool) -> frozenset[str]:
        return frozenset(self.allowed) | (frozenset(self.with_reason) if reason else frozenset())

    def describe(self) -> str:
        if not self.hazard:
            return "not a hazard"
        words = _types(self.allowed)
        if self.with_reason:
            words += f"; {_types(self.with_reason)} only with a recorded reason"
        return words


@dataclass(frozen=True)
class Determination:
    """An inspector's determination: ``code`` with ``determined:<TYPE>`` codes and a note."""

    code: str
    who: str
    citation: str
    types: tuple[str, ...] = DEVICE_TYPES

    def conditions(self) -> list[Condition]:
        return [Condition(self.code, f"{self.who} determined the device types (record determined:<TYPE> and "
                                     f"the determination in the note)", self.citation)] + [
            Condition(f"{DETERMINED}{t}", f"{self.who} determined: {DEVICE_WORDS[t]}", self.citation)
            for t in self.types]


def _strictness(types: frozenset[str], position: int) -> tuple[int, int, int]:
    """Lower is stricter: the weakest device allowed, then how many are allowed, then the rule's order."""
    weakest = max((DEVICE_TYPES.index(t) for t in types), default=len(DEVICE_TYPES))
    return weakest, len(types), position


@dataclass(frozen=True)
class _Combined:
    allowed: tuple[str, ...]
    deciding: tuple[Protection, ...]
    common: bool


def _combine(active: list[Protection], *, reason: bool) -> _Combined:
    sets = [p.types(reason=reason) for p in active]
    common = frozenset.intersection(*sets)
    if common:
        return _Combined(in_device_order(common), tuple(active), True)
    position = min(range(len(active)), key=lambda i: _strictness(sets[i], i))
    return _Combined(in_device_order(sets[position]), (active[position],), False)


@dataclass(frozen=True)
class ConditionListRule:
    """A device rule made of conditions that each allow a set of device types; several recorded together
    allow what every one allows (see the module docstring)."""

    preset: str
    citation: str
    protections: tuple[Protection, ...]
    none_words: str
    determination: Determination | None = None

    def conditions(self) -> list[Condition]:
        out = [Condition(p.code, p.label, p.citation) for p in self.protections]
        out += [Condition(f"{WAIVED}{p.code}", f"{p.label}: waived in writing", p.waiver_citation)
                for p in self.protections if p.waiver_citation]
        if self.determination is not None:
            out += self.determination.conditions()
        return out

    def assess(self, codes: Iterable[str], *, note: str = "", reason: str = "") -> Assessment:
        given = _codes(codes)
        _refuse_unknown(self.preset, given, [c.code for c in self.conditions()])
        waived = {code[len(WAIVED):] for code in given if code.startswith(WAIVED)}
        present = given | waived
        trace: list[str] = []
        flags: list[str] = []
        active: list[Protection] = []
        cited: list[str] = []
        for p in self.protections:
            if p.code not in present:
                continue
            if not p.hazard:
                trace.append(f"{p.code}: not a hazard ({p.citation})")
                cited.append(p.citation)
            elif p.code in waived:
                trace.append(f"{p.code}, waived in writing → no device for it ({p.waiver_citation})")
                cited.append(p.waiver_citation)
                flags += ["waived", *p.waiver_flags]
            else:
                trace.append(f"{p.code} → {p.describe()} ({p.citation})")
                active.append(p)
                flags += p.flags
        determined = self._determination(given, note)
        if determined is not None:
            trace.append(f"{determined.code} → {_types(determined.allowed)} ({determined.citation}: "
                         f"{self.determination.who}: {note.strip()})")
            active.append(determined)
            flags.append("determination")

        if not active:
            trace.append(f"no condition recorded requires a device: {self.none_words}" if not present
                         else "no condition recorded requires a device")
            return Assessment(required=False, allowed=(), citation="; ".join(_unique(cited)) or self.citation,
                              trace=tuple(trace), flags=_unique(flags))

        has_reason = bool(reason.strip())
        combined = _combine(active, reason=has_reason)
        if len(active) > 1:
            sets = " ∩ ".join(f"{p.code} {{{_types(p.types(reason=has_reason))}}}" for p in active)
            if combined.common:
                trace.append(f"the strictest wins: {sets} → {_types(combined.allowed)}")
            else:
                strictest = combined.deciding[0]
                trace.append(f"no device type meets every condition ({sets}); the strictest, {strictest.code}, "
                             f"decides → {_types(combined.allowed)} ({strictest.citation})")
                flags.append("no_common_type")

        conditional = {t for p in active for t in p.with_reason}
        reason_citations = _unique(p.reason_citation for p in active if p.with_reason)
        needs_reason: tuple[str, ...] = ()
        if has_reason:
            without = _combine(active, reason=False)
            admitted = in_device_order(set(combined.allowed) - set(without.allowed))
            if admitted:
                trace.append(f"reason recorded ({reason.strip()}) → {_types(admitted)} allowed "
                             f"({'; '.join(reason_citations)})")
                flags.append("reason_recorded")
        else:
            with_reason = _combine(active, reason=True)
            needs_reason = in_device_order((set(with_reason.allowed) - set(combined.allowed)) & conditional)
            if needs_reason:
                words = "; ".join(_unique(p.reason_words for p in active if p.with_reason))
                trace.append(f"{_types(needs_reason)} only with a recorded reason: {words} "
                             f"({'; '.join(reason_citations)})")

        return Assessment(required=True, allowed=combined.allowed,
                          citation="; ".join(_unique(p.citation for p in combined.deciding)),
                          trace=tuple(trace), needs_reason=needs_reason, flags=_unique(flags))

    def _determination(self, given: set[str], note: str) -> Protection | None:
        det = self.determination
        if det is None:
            return None
        types = in_device_order(code[len(DETERMINED):] for code in given if code.startswith(DETERMINED))
        if det.code not in given:
            if types:
                raise ConditionError(f"{', '.join(DETERMINED + t for t in types)} records {det.who}'s "
                                     f"determination: record {det.code} with it ({det.citation})")
            return None
        if not types:
            raise ConditionError(f"{det.code} needs the device types {det.who} determined: record one or more "
                                 f"of {', '.join(DETERMINED + t for t in det.types)} ({det.citation})")
        if not note.strip():
            raise ConditionError(f"{det.code} needs {det.who}'s determination in the note ({det.citation})",
                                 field="note")
        return Protection(det.code, f"{det.who}'s determination", det.citation, allowed=types)


def _condition_list(preset: str, params: dict) -> ConditionListRule:
    determination = params.get("determination")
    return ConditionListRule(
        preset=preset, citation=params["citation"], none_words=params["none_words"],
        protections=tuple(Protection(
            code=c["code"], label=c["label"], citation=c["citation"], allowed=_type_list(c.get("allowed", ())),
            with_reason=_type_list(c.get("with_reason", ())), reason_words=c.get("reason_words", ""),
            reason_citation=c.get("reason_citation", ""), hazard=bool(c.get("hazard", True)),
            waiver_citation=c.get("waiver_citation", ""), flags=_flags(c.get("flags", ())),
            waiver_flags=_flags(c.get("waiver_flags", ()))) for c in params.get("condition", [])),
        determination=Determination(code=determination["code"], who=determination["who"],
                                    citation=determination["citation"],
                                    types=_type_list(determination.get("types", DEVICE_TYPES)))
        if determination else None)


def _flags(flags) -> tuple[str, ...]:
    unknown = [flag for flag in flags if flag not in FLAGS]
    if unknown:
        raise ValueError(f"unknown flag {', '.join(unknown)}; the flags are {', '.join(FLAGS)}")
    return tuple(flags)


# The device-rule schemes a preset's [backflow.device_rule] names, each built from the table.
DEVICE_RULE_SCHEMES = {"design_criteria": DesignCriteriaTable.from_params, "condition_list": _condition_list}


def device_rule_from(preset: str, params: dict) -> DeviceRule:
    """The device rule a preset's ``[backflow.device_rule]`` table declares; refused, naming the key, when it is
    incomplete or names a scheme, device type or flag there is none of."""
    scheme = params.get("scheme")
    if scheme not in DEVICE_RULE_SCHEMES:
        raise ValueError(f"[backflow.device_rule] scheme '{scheme}' is not one of {', '.join(DEVICE_RULE_SCHEMES)}")
    try:
        return DEVICE_RULE_SCHEMES[scheme](preset, params)
    except KeyError as exc:
        raise ValueError(f"[backflow.device_rule] needs {exc.args[0]}") from None
