"""Two people for one decision: a clerk asks, someone else with the right decides.

A refund of a credit and a waiver of a late charge above the office's limit each move money on one person's
word, so each needs a second person: a supervisor who is not the clerk who asked. The model declares it beside
its workflow::

    approval = Approval(permission="office.approve_refund", noun="refund")

and keeps ``requested_by``, ``decided_by``, ``decided_at``, ``decision_note`` and a status with ``pending``,
``approved``, ``refused`` and ``withdrawn``. ``approval_problems`` lists every reason a decision cannot be made (who
decides, the status, the same person, a refusal without a note) so a service adds its own reasons to the same list and
refuses once; ``approval_decide`` records the decision through ``core.workflow.transition`` (who, when, why, and a
status-change row).

A small office is two people, so no request may dead-end: whoever asked may withdraw it (``approval_withdraw``: the
request ends and frees what it held, such as the day's one waiting debit file), and besides a second supervisor the
office may name an **Approver** (the mayor, the treasurer: a role that decides but never prepares,
``accounts.roles``). ``approval_deciders`` names the people who may decide a request now and ``approval_who`` says
it in a sentence for the request's page, or says what to do when nobody can.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from django.db import models
from django.utils import timezone

from .errors import ApplicationError, FieldError
from .workflow import transition, workflow_of

PENDING, APPROVED, REFUSED, WITHDRAWN = "pending", "approved", "refused", "withdrawn"


@dataclass(frozen=True)
class Approval:
    """Who decides a model's requests: the permission a decider holds, and what a request is called."""

    permission: str
    noun: str
    decider: str = "a supervisor or an approver"
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
                                            f"{rule.decider.replace('a ', 'another ', 1)} does, or they "
                                            "withdraw it"))
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


def approval_deciders(obj: models.Model) -> list:
    """The active staff who may decide ``obj`` now: each holder of the deciding permission (by a group or their own)
    but the one who asked. Superusers are left out of the names (the installation's administrator, not the office)
    though they may decide."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    rule = approval_of(obj)
    app_label, codename = rule.permission.split(".")
    permission = Permission.objects.filter(content_type__app_label=app_label, codename=codename).first()
    if permission is None:
        return []
    asker = getattr(obj, f"{rule.requester}_id")
    holders = (get_user_model().objects.filter(is_active=True, is_staff=True, is_superuser=False)
               .filter(models.Q(groups__permissions=permission) | models.Q(user_permissions=permission))
               .exclude(pk=asker).distinct().order_by("username"))
    return list(holders.prefetch_related("groups"))


def _named(user) -> str:
    name = user.get_full_name() or user.get_username()
    roles = ", ".join(sorted(group.name for group in user.groups.all()))
    return f"{name} ({roles})" if roles else name


def approval_who(obj: models.Model) -> str:
    """Who may decide ``obj``, in a sentence for its page; when nobody else can, what the office does about it."""
    rule = approval_of(obj)
    status = getattr(obj, workflow_of(obj).field)
    if status != PENDING:
        return ""
    asker = getattr(obj, rule.requester, None)
    asked = f"Asked by {asker.get_full_name() or asker.get_username()}. " if asker is not None else ""
    deciders = approval_deciders(obj)
    if deciders:
        return (f"{asked}Decided by {rule.decider.replace('a ', 'another ', 1)} who did not ask for it: "
                f"{', '.join(_named(user) for user in deciders)}. Whoever asked may withdraw it.")
    return (f"{asked}Nobody but who asked can decide this {rule.noun} yet: whoever asked may withdraw it, or the "
            "installation's administrator puts a second person in the Supervisor group or the mayor or the "
            "treasurer in the Approver group (docs/roles.md).")


def approval_withdraw_problems(obj: models.Model, *, actor) -> list[FieldError]:
    """Every reason ``actor`` cannot withdraw ``obj`` now; empty when they can."""
    rule = approval_of(obj)
    problems: list[FieldError] = []
    asker = getattr(obj, f"{rule.requester}_id")
    if actor is None or asker != actor.pk:
        problems.append(FieldError("actor", f"only whoever asked for a {rule.noun} withdraws it; "
                                            f"{rule.decider} refuses it with a note"))
    status = getattr(obj, workflow_of(obj).field)
    if status != PENDING:
        shown = dict(obj._meta.get_field(workflow_of(obj).field).flatchoices).get(status, status)
        problems.append(FieldError("status", f"the {rule.noun} is already decided: {str(shown).lower()}"))
    return problems


def approval_withdraw(obj: models.Model, *, actor, note: str = "") -> models.Model:
    """Whoever asked ends their own request before anyone decides it (it frees what it held: a day's one waiting
    debit file, an account's one waiting refund); kept with who, when and why. Refused with every reason at once."""
    obj.refresh_from_db(fields=[workflow_of(obj).field])
    problems = approval_withdraw_problems(obj, actor=actor)
    if problems:
        raise ApplicationError(errors=problems)
    note = (note or "").strip() or "withdrawn by who asked"
    return transition(obj, to=WITHDRAWN, actor=actor, note=note,
                      changes={"decided_by": actor, "decided_at": timezone.now(), "decision_note": note})
