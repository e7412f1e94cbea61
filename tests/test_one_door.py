"""Status changes through one door: every record whose status a person (or the office's rule) decides declares
its workflow (``core.workflow``) — which status may follow which — and moves only through ``transition``, which
locks the row, refuses with every reason and writes a ``StatusChange`` row with who and why. A status that only
records how a machine's work is going (an import, a night's run, a checkout at the processor) is not a decision
and is listed here with why."""

import re
from pathlib import Path

from django.apps import apps
from django.conf import settings

from core.workflow import Workflow

# Machine progress, not decisions: who would approve "running"?
PROGRESS = {
    "core.importjob": "an import's progress",
    "core.nightlyrun": "a night's run of the pipeline",
    "core.nightlystep": "a step of that run",
    "billing.mailfile": "a print file being made",
    "reports.reportfile": "a report file being made",
    "billing.bill": "issued or void: voiding is billing's service with its own record (BillVoid)",
    "billing.billingexception": "an account held by a run, released by a clerk through billing's service",
    "remittance.onlinepayment": "what the processor reports of a checkout",
    "conversion.conversionjob": "a conversion's progress in a worker",
    "accounts.account": "the service status, set only by accounts.services (account_service_set, account_close)",
    # Still edited on the device's admin form (its history kept by django-simple-history); to move onto a
    # workflow with the backflow screens.
    "backflow.device": "in service, out of service or removed, as the inspector records it",
}


def test_every_decided_status_has_a_workflow():
    missing = []
    for model in apps.get_models():
        label = model._meta.label_lower
        field = next((f for f in model._meta.concrete_fields if f.name == "status" and f.choices), None)
        if field is None or label in PROGRESS or label.startswith("historical") or ".historical" in label:
            continue
        if not isinstance(getattr(model, "workflow", None), Workflow):
            missing.append(label)
    assert missing == [], f"statuses without a workflow: {missing}"


def test_no_code_sets_a_workflow_status_by_hand():
    """Outside ``core.workflow`` nothing writes a workflow model's status: no ``.update(status=…)`` or
    ``obj.status = Model.Status.X`` for those models."""
    names = [m.__name__ for m in apps.get_models() if isinstance(getattr(m, "workflow", None), Workflow)]
    pattern = re.compile(r"(update\([^)]*\bstatus=|\.status\s*=\s*)(" + "|".join(names) + r")\.Status\.")
    root = Path(settings.BASE_DIR)
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".venv", "tests") or "migrations" in rel.parts or rel.parts[:2] == ("core", "workflow.py"):
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{rel}:{text[:m.start()].count(chr(10)) + 1}" for m in pattern.finditer(text)]
    assert found == [], "status written by hand: " + ", ".join(found)


def test_every_request_a_second_person_decides_declares_its_approval():
    """A record a clerk asks for and someone else decides (``requested_by`` and ``decided_by``) declares who decides
    (``core.approval.Approval``), so one module says who may approve, that it is never the clerk who asked, and
    that a refusal says why."""
    from core.approval import Approval

    asked_and_decided = [m for m in apps.get_models()
                         if {"requested_by", "decided_by"} <= {f.name for f in m._meta.concrete_fields}
                         and not m._meta.label_lower.split(".")[1].startswith("historical")]
    assert asked_and_decided, "no request decided by a second person found"
    undeclared = [m._meta.label_lower for m in asked_and_decided if not isinstance(getattr(m, "approval", None),
                                                                                  Approval)]
    assert undeclared == []
    # And none decides by hand: the decision goes through core.approval.approval_decide.
    root = Path(settings.BASE_DIR)
    by_hand = [str(p.relative_to(root)) for p in root.glob("*/**/*.py")
               if ".venv" not in p.parts and "tests" not in p.parts and "migrations" not in p.parts
               and p.name != "approval.py" and re.search(r'"decided_by":\s*actor', p.read_text())]
    assert by_hand == []


def test_only_the_account_service_writes_an_accounts_status():
    """The account's status (on, off, vacant, closed) changes only in ``accounts/services.py``, which locks the
    row, refuses a closed account and writes the history; closing tells the other parts (``account_closed``)."""
    pattern = re.compile(r"(account\.status\s*=(?!=)|account\.status,[^=\n]*=(?!=)|Account\.objects[^\n]*update\([^)]*\bstatus=)")
    root = Path(settings.BASE_DIR)
    found = []
    for path in root.rglob("*.py"):
        rel = path.relative_to(root)
        if rel.parts[0] in (".venv", "tests") or "migrations" in rel.parts or rel.parts[:2] == ("accounts",
                                                                                             "services.py"):
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{rel}:{text[:m.start()].count(chr(10)) + 1}" for m in pattern.finditer(text)]
    assert found == [], "an account's status written outside accounts.services: " + ", ".join(found)
