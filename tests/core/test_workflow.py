"""core.workflow: a status changes only as its model's table allows, under a lock, with every refusal
listed at once, and each change leaves a StatusChange row with who, when and why.

The tests give the import job a workflow of their own, so they stand on core alone.
"""

from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.models.query import QuerySet
from django.test.utils import CaptureQueriesContext

from core.errors import ApplicationError
from core.models import ImportJob, StatusChange
from core.workflow import TransitionRefused, Workflow, status_history, transition

pytestmark = pytest.mark.django_db

S = ImportJob.Status


@pytest.fixture(autouse=True)
def job_workflow(monkeypatch):
    monkeypatch.setattr(ImportJob, "workflow", Workflow("status", {
        S.QUEUED: {S.RUNNING}, S.RUNNING: {S.DONE, S.REJECTED, S.FAILED}, S.FAILED: {S.QUEUED}}), raising=False)


@pytest.fixture
def job():
    return ImportJob.objects.create(importer="x.y", noun="payments", file_name="p.csv", file_size=10,
                                    as_of=date(2026, 2, 1))


@pytest.fixture
def clerk():
    return get_user_model().objects.create_user("clerk", is_staff=True)


def test_an_allowed_change_saves_the_status_and_records_who_when_and_why(job, clerk):
    returned = transition(job, to=S.RUNNING, actor=clerk, note="a worker took it", changes={"stage": "checking"})

    assert returned is job and job.status == S.RUNNING and job.stage == "checking"
    job.refresh_from_db()
    assert (job.status, job.stage) == (S.RUNNING, "checking")
    change = StatusChange.objects.get()
    assert (change.content_type, change.object_id, change.field) == (
        ContentType.objects.get_for_model(ImportJob), job.pk, "status")
    assert (change.from_status, change.to_status, change.actor, change.note) == (
        "queued", "running", clerk, "a worker took it")
    assert change.at is not None
    transition(job, to=S.FAILED)  # the system: no actor
    assert [(c.from_status, c.to_status, c.actor) for c in status_history(job)] == [
        ("queued", "running", clerk), ("running", "failed", None)]


def test_a_change_the_table_does_not_allow_is_refused_with_409_and_changes_nothing(job, clerk):
    with pytest.raises(TransitionRefused) as refused:
        transition(job, to=S.DONE, actor=clerk)

    assert isinstance(refused.value, ApplicationError) and refused.value.status_code == 409
    assert refused.value.as_dict() == {"errors": [{
        "field": "status",
        "message": "a waiting for a worker import job cannot become imported; from waiting for a worker it may "
                   "become only importing"}]}
    job.refresh_from_db()
    assert job.status == S.QUEUED and not StatusChange.objects.exists()


def test_a_final_status_says_it_is_final(job):
    transition(job, to=S.RUNNING)
    transition(job, to=S.DONE)
    with pytest.raises(TransitionRefused, match="an imported import job cannot become importing; imported is final"):
        transition(job, to=S.RUNNING)


def test_every_refusal_is_listed_not_only_the_first(job):
    seen = []

    def guard(locked):
        seen.append(locked.status)
        return ["the file is empty", "the import date is a Sunday"]

    with pytest.raises(TransitionRefused) as refused:
        transition(job, to=S.DONE, guard=guard)

    assert [e.message for e in refused.value.errors] == [
        "a waiting for a worker import job cannot become imported; from waiting for a worker it may become only "
        "importing",
        "the file is empty",
        "the import date is a Sunday"]
    assert str(refused.value).count("; status: ") == 2
    assert seen == [S.QUEUED]
    job.refresh_from_db()
    assert job.status == S.QUEUED and not StatusChange.objects.exists()


def test_a_guard_that_finds_nothing_lets_the_change_through(job):
    transition(job, to=S.RUNNING, guard=lambda locked: [])
    assert StatusChange.objects.get().to_status == "running"


def test_the_row_is_locked_and_read_again_before_deciding(job, monkeypatch):
    locked_models = []
    real = QuerySet.select_for_update

    def spy(self, *args, **kwargs):
        locked_models.append(self.model)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(QuerySet, "select_for_update", spy)
    ImportJob.objects.filter(pk=job.pk).update(status=S.RUNNING)  # another process moved it on
    stale = job
    assert stale.status == S.QUEUED

    with CaptureQueriesContext(connection) as queries:
        transition(stale, to=S.DONE)  # allowed from the status in the database, not the stale one

    assert locked_models == [ImportJob]
    if connection.vendor == "postgresql":
        assert any("FOR UPDATE" in q["sql"] and "core_importjob" in q["sql"] for q in queries.captured_queries)
    assert stale.status == S.DONE
    assert StatusChange.objects.get().from_status == "running"


def test_a_model_without_a_workflow_is_told_so(job, monkeypatch):
    monkeypatch.delattr(ImportJob, "workflow")
    with pytest.raises(TypeError, match="core.ImportJob declares no workflow"):
        transition(job, to=S.RUNNING)
