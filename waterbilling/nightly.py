"""The nightly job: the apps' nightly steps in order, each recorded, resumed where a crash stopped it.

Bill what is due → penalties and interest → bill PDFs → notices → customer reminders and late notices →
termination deadlines → backflow
tests due → payment plans defaulted or completed → what the night leaves open on each account's ledger.
Each app keeps its steps as plain services
returning counts; this list, in the composition root, is the only place that knows their order, so
billing never learns what runs after it. A step of an app that is not installed is left out.
``core.pipeline`` runs them: a ``NightlyRun`` for the date and a ``NightlyStep`` each, with counts or the
error; running the date again skips what is done and goes on from the step that failed or never finished.
``manage.py nightly`` and the Celery beat task (``waterbilling.tasks.nightly``) both run ``nightly_run``.
"""

from datetime import date

from django.apps import apps
from django.utils.module_loading import import_string

from core.clock import refuse_future
from core.models import NightlyRun, NightlyStep
from core.pipeline import Step, pipeline_run

# (step name, the function's dotted path): the step runs when the function's app is installed.
STEPS = (
    ("bill", "billing.services.nightly.nightly_bill"),
    ("penalties", "billing.services.nightly.nightly_penalties"),
    ("bill_pdfs", "billing.services.nightly.nightly_bill_pdfs"),
    ("notices", "termination.services.nightly.nightly_notices"),
    ("customer_notices", "notices.reminders.nightly_customer_notices"),
    ("paper_notices", "notices.printing.nightly_paper_notices"),
    ("termination_deadlines", "termination.services.nightly.nightly_deadlines"),
    ("backflow_tests_due", "backflow.services.compliance.nightly_tests_due"),
    ("payment_plans", "arrears.services.plans_review"),
    ("standings", "billing.services.nightly.nightly_standings"),
    ("autopay_receipts", "remittance.services.autopay_receipts_settled"),
)


def nightly_steps() -> list[Step]:
    """The steps of the installed apps, in order. The function is looked up when its step runs, so an app
    whose step is missing fails that step with the reason, not the whole job before it starts."""
    return [Step(name, _deferred(path)) for name, path in STEPS if apps.is_installed(path.split(".")[0])]


def _deferred(path: str):
    def step(*, as_of: date) -> dict:
        return import_string(path)(as_of=as_of)

    step.__qualname__ = path
    return step


def nightly_run(*, as_of: date, tell=None) -> dict:
    """Run (or resume) the nightly job for ``as_of`` and return its report (``nightly_report``); ``tell`` hears each
    step start, progress and end (``core.pipeline``)."""
    refuse_future(as_of, doing="run by the nightly job")
    return nightly_report(pipeline_run(run_on=as_of, steps=nightly_steps(), tell=tell))


def nightly_report(run: NightlyRun) -> dict:
    """The night as recorded: its status, each step (status, counts, error) in order, and every step's
    counts merged at the top (``bills``, ``penalties``, ...), zero for a step that has not run."""
    steps = list(run.steps.order_by("position"))
    report = {"date": run.run_on.isoformat(), "status": run.status, "bills": 0, "billing_exceptions": 0,
              "penalties": 0, "penalty_total": "0.00"}
    for step in steps:
        report.update(step.counts)
    report["steps"] = [{"name": step.name, "status": step.status, "counts": step.counts, "error": step.error}
                       for step in steps]
    failed = [step for step in steps if step.status == NightlyStep.Status.FAILED]
    if failed:
        report["failed_step"], report["error"] = failed[0].name, failed[0].error
    return report
