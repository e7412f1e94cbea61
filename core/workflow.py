"""Status changes that follow a table, are refused with every reason at once, and leave a record.

A model that has a workflow declares it beside its status field: which status may follow which. Every
change of that status goes through ``transition``, which locks the row, refuses a change the table does
not allow, asks the caller's guard for every condition the change still misses (a guard lists them all;
a clerk fixing one reason only to be told the next is a clerk told twice), and on success saves the new
status and a ``StatusChange`` row (who, when, from, to, why) in one transaction. The history a page shows
is those rows.
"""

from collections.abc import Callable, Iterable, Mapping

from django.contrib.contenttypes.models import ContentType
from django.db import models, transaction

from .errors import Conflict, FieldError
from .models import StatusChange

Guard = Callable[[models.Model], Iterable["str | FieldError"]]


class Workflow:
    """``Workflow("status", {"pending": {"running"}, "running": {"done", "failed"}})``: the status field's
    name and, for each status, the statuses it may become. A status with no entry is final."""

    def __init__(self, field: str, transitions: Mapping[str, Iterable[str]]):
        self.field = field
        self.allowed = {source: frozenset(targets) for source, targets in transitions.items()}

    def __repr__(self) -> str:
        return f"Workflow({self.field!r}, {self.allowed!r})"

    def allows(self, source: str, target: str) -> bool:
        return target in self.allowed.get(source, frozenset())

    def next_statuses(self, source: str) -> list[str]:
        return sorted(self.allowed.get(source, ()))


class TransitionRefused(Conflict):
    """A change of status the workflow does not allow or a guard refused; ``errors`` lists every reason."""


def workflow_of(model: type[models.Model] | models.Model) -> Workflow:
    workflow = getattr(model, "workflow", None)
    if not isinstance(workflow, Workflow):
        raise TypeError(f"{model._meta.label} declares no workflow (a `workflow = Workflow(...)` attribute)")
    return workflow


def _label(model: models.Model, status: str) -> str:
    choices = dict(model._meta.get_field(workflow_of(model).field).flatchoices)
    return str(choices.get(status, status)).lower()


def transition(obj: models.Model, *, to: str, actor=None, note: str = "", guard: Guard | None = None,
               changes: Mapping[str, object] | None = None) -> models.Model:
    """Move ``obj`` to status ``to`` under its model's workflow, or raise ``TransitionRefused`` naming every
    reason: a change the table does not allow, and each refusal ``guard(locked_obj)`` returns.

    The row is locked (``select_for_update``) and read again first, so the guard and the table see the
    status as it is now, not as ``obj`` remembers it. ``changes`` are other fields saved with the status
    (an error, a finishing time). The status, the changes and a ``StatusChange`` row commit together;
    ``obj`` is updated in place and returned.
    """
    model = type(obj)
    workflow = workflow_of(model)
    name = model._meta.verbose_name
    with transaction.atomic():
        locked = model._default_manager.select_for_update().get(pk=obj.pk)
        source = getattr(locked, workflow.field)
        refusals: list[FieldError] = []
        if not workflow.allows(source, to):
            following = workflow.next_statuses(source)
            now = _label(locked, source)
            refusals.append(FieldError(workflow.field, (
                f"{'an' if now[:1] in 'aeiou' else 'a'} {now} {name} cannot become {_label(locked, to)}; "
                + (f"from {_label(locked, source)} it may become only "
                   f"{' or '.join(_label(locked, s) for s in following)}" if following
                   else f"{_label(locked, source)} is final"))))
        for refusal in guard(locked) if guard else ():
            refusals.append(refusal if isinstance(refusal, FieldError) else FieldError(workflow.field, refusal))
        if refusals:
            raise TransitionRefused(errors=refusals)
        setattr(locked, workflow.field, to)
        for attname, value in (changes or {}).items():
            setattr(locked, attname, value)
        locked.save(update_fields=[workflow.field, *(changes or {})])
        StatusChange.objects.create(content_type=_content_type(model), object_id=locked.pk,
                                    field=workflow.field, from_status=source, to_status=to,
                                    actor=actor if getattr(actor, "pk", None) else None, note=note)
    for f in model._meta.concrete_fields:
        setattr(obj, f.attname, getattr(locked, f.attname))
    return obj


def status_history(obj: models.Model):
    """The object's status changes, oldest first."""
    return (StatusChange.objects.filter(content_type=_content_type(type(obj)), object_id=obj.pk)
            .select_related("actor").order_by("at", "id"))


def _content_type(model: type[models.Model]) -> ContentType:
    """Read from the table, not from the process's cache of content types: a long-lived worker's cache
    outlives a database whose content types were created again (a restore, a test's flush)."""
    opts = model._meta.concrete_model._meta
    return ContentType.objects.get_or_create(app_label=opts.app_label, model=opts.model_name)[0]
