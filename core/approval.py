"""Two people for one decision: a clerk asks, someone else with the right decides.

A refund of a credit and a waiver of a late charge above the office's limit each move money on one person's
word, so each needs a second person: a supervisor who is not the clerk who asked. The model declares it beside
its workflow::

    approval = Approval(permission="office.approve_refund", noun="refund")

and keeps ``requested_by``, ``decided_by``, ``decided_at``, ``decision_note`` and a status with ``pending``,
``approved`` and ``refused``. ``approval_problems`` lists every reason a decision cannot be made (who decides, the
status, the same person, a refusal without a note) so a service adds its own reasons to the same list and refuses
once; ``approval_decide`` records the decision through ``core.workflow.transition`` (who, when, why, and a
status-change row).
"""

from collections.abc import Mapping
from dataclasses import dataclass

from django.db import models
from django.utils import timezone

from .errors import FieldError
from .workflow import transition, workflow_of

PENDING, APPROVED, REFUSED = "pending", "approved", "refused"


@dataclass(frozen=True)
class Approval:
    """Who decides a model's requests: the permission a decider holds, and what a request is called."""

    permission: str
    noun: str
    decider: str = "a supervisor"
    requester: str = "requested_by"  # the field naming who asked (or prepared what is to be decided)


def approval_of(model: type[models.Model] | models.Model) -> Approval:
    approval = getattr(model, "approval", None)
    if not isinstance(approval, Approval):
        raise TypeError(f"{model._meta.label} declares no two-person approval (an `approval = Approval(...)`)")
    return approval


def approval_problems(obj: models.Model, *, approve: bool, note: str, actor) -> list[FieldError]:
    """Every reason ``actor`` cannot approve (or refuse) ``obj`` now, as field errors; empty when they can."""
    rule = approval_of(obj)
    problems: list[FieldError] = []
    if actor is None or not actor.has_perm(rule.permission):
        problems.append(FieldError("actor", f"only {rule.decider} approves or refuses a {rule.noun}"))
    status = getattr(obj, workflow_of(obj).field)
    if status != PENDING:
        shown = dict(obj._meta.get_field(workflow_of(obj).field).flatchoices).get(status, status)
        problems.append(FieldError("status", f"the {rule.noun} is already decided: {str(shown).lower()}"))
    asker = getattr(obj, f"{rule.requester}_id")
    if actor is not None and asker is not None and asker == actor.pk:
        problems.append(FieldError("actor", f"whoever asked for a {rule.noun} does not decide it; "
                                            f"{rule.decider.replace('a ', 'another ', 1)} does"))
    if not approve and not (note or "").strip():
        problems.append(FieldError("note", "a refusal needs a note saying why"))
    return problems


def approval_decide(obj: models.Model, *, approve: bool, note: str, actor,
                    changes: Mapping[str, object] | None = None) -> models.Model:
    """Record the decision (``approval_problems`` already empty): the status, who decided, when and why."""
    note = (note or "").strip()
    return transition(obj, to=APPROVED if approve else REFUSED, actor=actor, note=note or "approved",
                      changes={"decided_by": actor, "decided_at": timezone.now(), "decision_note": note,
                               **(changes or {})})
