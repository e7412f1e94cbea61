"""What every step of a case shares: its event on the case's timeline, who did it, and its free text checked."""

from datetime import date

from core.errors import ApplicationError

from ..models import CaseEvent, TerminationCase

TEXT_MAX = 5000


def actor_words(actor, by: str = "") -> str:
    if by:
        return by
    if actor is not None and getattr(actor, "pk", None):
        return actor.get_full_name() or actor.get_username()
    return "clerk (command line)"


def case_event(case: TerminationCase, *, on: date, kind: str, what: str, actor=None, by: str = "",
               flagged: bool = False) -> CaseEvent:
    return CaseEvent.objects.create(case=case, on=on, kind=kind, what=what, by=actor_words(actor, by),
                                    actor=actor if getattr(actor, "pk", None) else None, flagged=flagged)


def case_text(value: str, field: str, *, required: bool = False) -> str:
    value = (value or "").strip()
    if required and not value:
        raise ApplicationError("is required", field=field)
    if len(value) > TEXT_MAX or "\x00" in value:
        raise ApplicationError(f"at most {TEXT_MAX} characters of text", field=field)
    return value
