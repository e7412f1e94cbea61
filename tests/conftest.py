import fcntl
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from celery.app.backends import by_url as result_backend_by_url
from celery.result import AsyncResult
from django.core.management import call_command
from django.db import connections

from waterbilling.celery import app as celery_app

PROJECT_DIR = Path(__file__).resolve().parent.parent
WORKER_START_TIMEOUT = 60  # seconds; a cold prefork worker on a slow CI machine takes a few


def pytest_addoption(parser):
    parser.addoption("--citation", metavar="SECTION", default=None,
                     help='run only the tests marked @pytest.mark.citation naming SECTION (a substring: '
                          '"§ 45.29" runs A to F; "policy" runs the office-policy tests)')


# "45.33–45.34", "169-31 – 169-37", "141-3–141-14": a range of sections of one chapter (an en dash between).
_RANGE = re.compile(r"(\d+)([.-])(\d+)\s*–\s*(?:\1\2)?(\d+)")


def cited_sections(text: str) -> list[str]:
    """What a citation names, section by section: "§§ 45.33–45.34" names "§ 45.33" and "§ 45.34" (and itself),
    "§§ 169-25, 169-26" names each, "§§ 45.31–45.35" every section from 45.31 to 45.35."""
    out = [text]
    for chapter, sep, first, last in _RANGE.findall(text):
        if int(last) - int(first) <= 100:
            out.extend(f"§ {chapter}{sep}{n}" for n in range(int(first), int(last) + 1))
    if text.startswith("§§"):
        for part in re.split(r"[,;]\s*(?:and\s+)?", text[2:]):
            part = part.strip()
            if part and "–" not in part:
                out.append(f"§ {part.removeprefix('§').strip()}")
    return out


def pytest_collection_modifyitems(config, items):
    """``--citation "§ 45.29 E"``: citation → rule module → test in one hop. Every section a mark names counts,
    whether it is the mark's first, another of its arguments, or inside a range ("§§ 45.33–45.34").

    Under pytest-xdist, the tests marked ``long`` start first, spread over the processes (``long_tests_first``)."""
    wanted = config.getoption("--citation")
    if not wanted:
        workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
        items[:] = long_tests_first(items, workers=workers)
        return
    selected, deselected = [], []
    for item in items:
        sections = [section for mark in item.iter_markers("citation") for arg in mark.args
                    for section in cited_sections(str(arg))]
        (selected if any(wanted in section for section in sections) else deselected).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
    items[:] = selected


def long_tests_first(items: list, *, workers: int) -> list:
    """The collection reordered so that each process starts with its share of the tests marked
    ``@pytest.mark.long(seconds)``, longest first, and the rest follow in their order.

    pytest-xdist's work-stealing scheduler hands each process a contiguous slice of the collection (the i-th of
    ``workers`` slices, cut as ``len(pending) // processes left``) and lets an idle process take the end of a busy
    one's slice; a long test at the end of a slice would run alone while the others wait. Every process reorders
    its own collection the same way, so the collections stay identical."""
    if workers < 2:
        return items
    long = sorted((item for item in items if item.get_closest_marker("long")),
                  key=lambda item: -item.get_closest_marker("long").args[0])
    if not long:
        return items
    lanes, loads = [[] for _ in range(workers)], [0.0] * workers
    for item in long:  # each to the least loaded process so far
        lane = loads.index(min(loads))
        lanes[lane].append(item)
        loads[lane] += item.get_closest_marker("long").args[0]
    rest = iter(item for item in items if not item.get_closest_marker("long"))
    out, left = [], len(items)
    for lane, own in enumerate(lanes):
        size = left // (workers - lane)
        out += own + [next(rest) for _ in range(max(0, size - len(own)))]
        left -= size
    out += list(rest)
    assert len(out) == len(items)
    return out


def _migrated_template_name(test_name: str, worker: str) -> str:
    return f"{test_name.removesuffix(f'_{worker}')}_migrated"


@pytest.fixture(scope="session")
def django_db_setup(request, django_test_environment, django_db_blocker, django_db_keepdb,
                    django_db_modify_db_settings):
    """The test database, migrated once per run on PostgreSQL under pytest-xdist: the first process to need it
    migrates a template (``test_<name>_migrated``, a minute of Django's migration planning) while the others wait
    on a lock, and each process copies it (``CREATE DATABASE … TEMPLATE``, a second) instead of migrating its own.
    Anywhere else (SQLite, one process, ``--reuse-db``), pytest-django's own set-up."""
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_databases, teardown_databases

    workerinput = getattr(request.config, "workerinput", None)
    verbosity = request.config.option.verbose
    if connection.vendor != "postgresql" or workerinput is None or django_db_keepdb:
        with django_db_blocker.unblock():
            databases = setup_databases(verbosity=verbosity, interactive=False, keepdb=django_db_keepdb,
                                        aliases={"default"}, serialized_aliases=set())
        yield
        if not django_db_keepdb:
            with django_db_blocker.unblock():
                teardown_databases(databases, verbosity=verbosity)
        return
    old_name = connection.settings_dict["NAME"]
    test_settings = connection.settings_dict["TEST"]
    own = connection.creation._get_test_db_name()
    template = _migrated_template_name(own, workerinput["workerid"])
    lock_path = Path(tempfile.gettempdir()) / f"{template}-{workerinput['testrunuid']}.lock"
    with django_db_blocker.unblock(), open(lock_path, "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        lock.seek(0)
        if lock.read() != "migrated":
            test_settings["NAME"] = template
            try:
                connection.creation.create_test_db(verbosity=verbosity, autoclobber=True, serialize=False)
            finally:
                connection.close()
                test_settings["NAME"] = own
                settings.DATABASES["default"]["NAME"] = connection.settings_dict["NAME"] = old_name
            lock.write("migrated")
            lock.flush()
        with connection._nodb_cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{own}"')
            cursor.execute(f'CREATE DATABASE "{own}" TEMPLATE "{template}"')
        fcntl.flock(lock, fcntl.LOCK_UN)
    settings.DATABASES["default"]["NAME"] = connection.settings_dict["NAME"] = own
    yield
    with django_db_blocker.unblock():
        connection.creation.destroy_test_db(old_name, verbosity=verbosity)


def pytest_sessionfinish(session):
    """The controller of a pytest-xdist run drops the migrated template its processes copied (``django_db_setup``)."""
    if hasattr(session.config, "workerinput") or not getattr(session.config.option, "numprocesses", None):
        return
    from django.conf import settings

    database = settings.DATABASES["default"]
    if "postgresql" not in database["ENGINE"]:
        return
    import psycopg2

    own = database.get("TEST", {}).get("NAME") or f"test_{database['NAME']}_gw0"
    template = _migrated_template_name(own, "gw0")
    connection = psycopg2.connect(dbname="postgres", user=database.get("USER") or None,
                                  password=database.get("PASSWORD") or None, host=database.get("HOST") or None,
                                  port=database.get("PORT") or None)
    connection.autocommit = True
    with connection.cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{template}" WITH (FORCE)')
    connection.close()


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "celery_worker: sends Celery tasks through Redis to a real worker (the celery_worker_process "
        "fixture, with transactional_db) instead of running them eagerly in-process",
    )


@pytest.fixture
def mineola(db):
    """The Mineola preset installed on a demo/training site, as `setup_utility mineola --demo 0` does.

    The worked examples of docs/ordinances.md are computed on the preset's sample rate schedule, which only a
    demo/training site bills without the clerk accepting it; ``mineola_real_site`` is a real village's.
    """
    call_command("setup_utility", "mineola", "--demo", "0", "--date", "2026-01-01", stdout=open("/dev/null", "w"))
    from ordinance.models import Utility

    return Utility.objects.get()


@pytest.fixture
def mineola_real_site(db):
    """The Mineola preset installed as a real village would (`setup_utility mineola`): not a demo site,
    and its rate schedule is the preset's sample one."""
    call_command("setup_utility", "mineola", "--date", "2026-01-01", stdout=open("/dev/null", "w"))
    from ordinance.models import Utility

    return Utility.objects.get()


@pytest.fixture(autouse=True)
def _bill_files(settings, tmp_path):
    """Generated files go to a temporary MEDIA_ROOT, and bill PDFs are rendered only by the tests that
    ask for it (``settings.BILL_PDFS_ON_ISSUE = True``), not by every test that bills."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.BILL_PDFS_ON_ISSUE = False


@pytest.fixture(autouse=True)
def _notices_at_any_hour(settings):
    """Notices go at whatever hour a test runs (the quiet hours are tested on their own), and text messages are
    kept in ``notices.sms.outbox``."""
    from notices import sms

    settings.NOTICES_QUIET_HOURS = None
    settings.SMS_BACKEND = "notices.sms.LocmemBackend"
    sms.outbox.clear()


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Each test starts with no counters (download limits) left by an earlier one (the cache is this
    process's memory in tests: see tests/settings.py)."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def media(settings):
    """The temporary MEDIA_ROOT of this test."""
    return settings.MEDIA_ROOT


@pytest.fixture(autouse=True)
def _celery_eager_unless_real_worker(request, settings):
    """Run tasks eagerly in-process, so no test waits on a worker that is not there.

    With ``REDIS_URL`` set the settings make Celery send tasks to the broker; only tests marked
    ``celery_worker`` (which use ``celery_worker_process`` and ``transactional_db``) do that here.
    The Django setting follows the Celery app, for code that asks ``settings`` which way tasks run.
    """
    uses_worker = "celery_worker_process" in request.fixturenames
    marked = request.node.get_closest_marker("celery_worker") is not None
    if uses_worker and not marked:
        pytest.fail("a test using celery_worker_process must be marked @pytest.mark.celery_worker")
    if marked and "transactional_db" not in request.fixturenames:
        pytest.fail("a celery_worker test must use transactional_db: the worker sees only committed rows")
    previous = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = settings.CELERY_TASK_ALWAYS_EAGER = not marked
    settings.LONG_WORK_IN_THREAD = False  # what a page starts is done when its request returns
    yield
    celery_app.conf.task_always_eager = previous


@dataclass(frozen=True)
class CeleryWorker:
    """A running ``celery worker`` subprocess and where it takes tasks from and reports results to."""

    process: subprocess.Popen
    nodename: str
    queue: str
    result_backend_url: str
    log_path: Path

    def wait_idle(self, *, seconds: float = 60) -> None:
        """Until the worker runs and holds no task (what a billed run sends on, bills' e-mails and PDFs, done), so
        the test database is emptied after the test without a task of the worker holding a table."""
        deadline, quiet = time.monotonic() + seconds, 0
        while quiet < 2:
            inspect = celery_app.control.inspect(destination=[self.nodename], timeout=1)
            busy = [*((inspect.active() or {}).get(self.nodename, [])),
                    *((inspect.reserved() or {}).get(self.nodename, []))]
            quiet = 0 if busy else quiet + 1
            assert time.monotonic() < deadline, self.log_path.read_text()
            time.sleep(0.3)

    def result(self, async_result: AsyncResult, *, timeout: float = 30):
        """The task's return value, read from the worker's result backend (the app has none)."""
        backend_class, url = result_backend_by_url(self.result_backend_url, celery_app.loader)
        result = AsyncResult(async_result.id, app=celery_app, backend=backend_class(app=celery_app, url=url))
        deadline = time.monotonic() + timeout
        # Poll the stored state rather than subscribe: the result may be stored before we would subscribe.
        while not result.ready():
            if self.process.poll() is not None:
                raise RuntimeError(f"the Celery worker exited:\n{self.log_path.read_text()}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"no result for task {async_result.id} in {timeout}s:\n"
                                   f"{self.log_path.read_text()}")
            time.sleep(0.1)
        return result.get(timeout=1)


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, tmp_path_factory):
    """A real ``celery -A waterbilling worker`` on the test database, for the session.

    Needs ``REDIS_URL`` and a PostgreSQL ``DATABASE_URL`` (a separate process cannot open the in-memory
    SQLite test database). The worker takes tasks from a queue of its own, made the default queue on
    both sides, so concurrent test runs sharing one Redis never take each other's tasks.
    """
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        pytest.skip("needs REDIS_URL (e.g. redis://127.0.0.1:6379/0): a real worker takes tasks from Redis")
    from django.db import connection

    if connection.vendor != "postgresql" or not os.environ.get("DATABASE_URL"):
        pytest.skip("needs DATABASE_URL on PostgreSQL: a worker process cannot open the in-memory SQLite "
                    "test database")
    # django_db_setup has pointed the connection at the test database (test_<name>, per xdist worker).
    test_database = connection.settings_dict["NAME"]
    database_url = urlunsplit(urlsplit(os.environ["DATABASE_URL"])._replace(path=f"/{test_database}"))
    queue = f"test-{uuid.uuid4().hex[:12]}"
    nodename = f"{queue}@{socket.gethostname()}"
    result_backend_url = os.environ.get("CELERY_RESULT_BACKEND") or redis_url
    log_path = tmp_path_factory.mktemp("celery") / "worker.log"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "waterbilling.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "CELERY_RESULT_BACKEND": result_backend_url,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
    }
    command = [
        sys.executable, "-m", "celery", "-A", "waterbilling", "worker",
        "--loglevel", "warning", "--pool", "prefork", "--concurrency", "2",
        "--hostname", nodename, "--include", "waterbilling.tasks",
        "--without-heartbeat", "--without-gossip", "--without-mingle",
    ]
    previous_queue = celery_app.conf.task_default_queue
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WORKER_START_TIMEOUT
        while not celery_app.control.ping(destination=[nodename], timeout=0.5):
            if process.poll() is not None:
                pytest.fail(f"the Celery worker exited with {process.returncode}:\n{log_path.read_text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"the Celery worker did not answer ping in {WORKER_START_TIMEOUT}s:\n"
                            f"{log_path.read_text()}")
        celery_app.conf.task_default_queue = queue
        yield CeleryWorker(process=process, nodename=nodename, queue=queue,
                           result_backend_url=result_backend_url, log_path=log_path)
    finally:
        celery_app.conf.task_default_queue = previous_queue
        process.terminate()  # warm shutdown: finishes the task in hand
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        with celery_app.connection_for_write() as broker:
            # Declared first so the channel knows the bindings that delete() must remove from Redis.
            bound = celery_app.amqp.queues[queue].bind(broker.default_channel)
            bound.declare()
            bound.delete()


@pytest.fixture
def browser():
    """Debian's chromium, headless, driven by Playwright (``tests/browser.py``: the mark that skips a test
    where it is missing, the screen sizes)."""
    from tests.browser import CHROMIUM, CHROMIUM_ARGS

    # Playwright's sync API runs an event loop in this thread; Django's ORM calls in the test are still
    # synchronous and safe here.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
            # Playwright runs the test in a greenlet, where Django opens a connection of its own; close
            # it here or PostgreSQL cannot drop the test database at the end of the session.
            connections.close_all()
