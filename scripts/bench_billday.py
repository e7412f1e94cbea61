"""The bill day of scripts/bench.py, through real Celery workers, as a village lives it:

  import    the month's readings, as the reader's file (``manage.py import_readings``);
  bill      the month's run, started as ``manage.py run_billing`` starts it, billed by the workers;
  PDFs      every bill's PDF, rendered and stored by the workers as its chunk of bills is issued;
  e-mails   the paperless e-mails, sent by the workers as the bills are issued (``portal.notify``);
  print     the mail house's print file of the run, asked for once the PDFs are stored (``mail_file_make``).

Timed end to end (the import's start to the print file's end) and by step (each step's end, from the
import's start), with the worker processes' own seconds for each kind of task (from the worker's log). The
day is lived twice: on the village's first month (no history) and, after eleven more months billed
(untimed), on the thirteenth, with twelve months of history behind it; a cost that grows with history shows
as the second day's step being slower than the first's. Then a sample of the second day's PDFs is rendered
again by a worker of one process and one of two, to show the rendering scale with processes.

Nothing users wait for is switched off: the workers render the PDFs and send the e-mails as in production
(e-mails to files in the bench's scratch folder, through Django's file backend).
"""

import re
import socket
import subprocess
import time
from collections import defaultdict
from contextlib import contextmanager
from datetime import date
from pathlib import Path

from bench_celery import celery_month, celery_sending, log_tail, process_peak_mb, process_stop, queue_forget
from bench_setup import (
    EMAIL_SPREAD,
    ROOT,
    VENV_BIN,
    Bench,
    analyze,
    billing_months,
    copy_limit_seconds,
    rows_written,
    village_ensure,
)

TASK_DONE = re.compile(r"Task ([\w.]+)\[[\w-]+\] succeeded in ([\d.]+)s")
TASK_WORDS = {"billing.tasks.billing_run_chunk": "billing", "billing.tasks.billing_run_dispatch": "billing",
              "billing.tasks.bill_pdfs_render": "PDFs",
              "portal.tasks.bills_issued_notify_task": "e-mails", "billing.tasks.mail_file_make": "print file"}
SCALING_SAMPLE = 2000
SCALING_TASK = 50  # bills a task: enough tasks for both processes from the start


def piece_billday(bench: Bench):
    from django.db import connection

    from billing.models import Bill, BillingException, BillingRun, BillLine, LedgerEntry
    village_ensure(bench)
    if Bill.objects.exists():
        print("  (earlier bills, runs and ledger entries deleted first)", flush=True)
        tables = [m._meta.db_table for m in (LedgerEntry, BillLine, Bill, BillingException, BillingRun)]
        with connection.cursor() as cursor:
            cursor.execute(f"TRUNCATE {', '.join(tables)} CASCADE")
    months = billing_months(bench)  # thirteen: the last has twelve months behind it
    days = {}
    with worker(bench, concurrency=bench.args.workers) as (process, log_path):
        days["first"] = bill_day(bench, months[0], process, log_path)
        yield day_row(bench, "bill day, first month", days["first"])
    history_bill(months[1:-1])
    with worker(bench, concurrency=bench.args.workers) as (process, log_path):
        days["thirteenth"] = bill_day(bench, months[-1], process, log_path)
    first, last = days["first"], days["thirteenth"]
    yield day_row(bench, "bill day", last, first=first)
    yield emails_row(bench, first, last)
    yield scaling_row(bench, months[-1])


def day_row(bench: Bench, work: str, day: dict, first: dict | None = None) -> dict:
    steps = day["steps"]
    seconds = steps["print file"]
    figure = (f"{seconds:.0f} s end to end for {day['bills']:,} bills of {day['date'][:7]} ({day['accounts']:,} "
              f"accounts): " + ", ".join(f"{name} done at {at:.0f} s" for name, at in steps.items())
              + f"; PDFs {day['pdfs_per_s']:.1f}/s, the run {day['bills_per_s']:,.0f} bills/s; "
              + f"{day['emails']:,} e-mails, {day['printed']:,} bills printed; worker seconds "
              + ", ".join(f"{name} {s:.0f}" for name, s in day["worker_seconds"].items())
              + f"; worker peak {day['peak_mb']:,.0f} MB")
    if first is not None:
        figure += (f". First month (no history): {first['steps']['print file']:.0f} s for {first['bills']:,} bills, "
                   f"PDFs {first['pdfs_per_s']:.1f}/s")
    met = None
    if first is not None:
        met = bench.met(day["pdfs_per_s"] >= 100 and day["bills_per_s"] >= 5000)
    return bench.row(work, figure, seconds, "s", met, copy_limit_seconds(bench, day["rows"]),
                     steps=steps, worker_seconds=day["worker_seconds"])


def emails_row(bench: Bench, first: dict, last: dict) -> dict:
    per = {key: (day["worker_seconds"].get("e-mails", 0) / day["emails"] * 1000 if day["emails"] else 0)
           for key, day in (("first", first), ("last", last))}
    return bench.row("paperless e-mails", f"{per['last']:.1f} ms of a worker a bill e-mailed on the thirteenth month "
                     f"({last['emails']:,} e-mails, twelve months of history), {per['first']:.1f} ms on the first "
                     f"({first['emails']:,})", per["last"], "ms",
                     bench.met(last["emails"] > 0 and per["last"] <= per["first"] * (1 + EMAIL_SPREAD)))


def scaling_row(bench: Bench, month: date) -> dict:
    """A sample of the month's bills rendered again by a worker of one process, then of two."""
    from billing.models import Bill

    ids = list(Bill.objects.filter(bill_date=month).exclude(status=Bill.Status.VOID).order_by("id")
               .values_list("id", flat=True)[:SCALING_SAMPLE])
    rates = {}
    for processes in (1, 2):
        Bill.objects.filter(pk__in=ids).update(pdf="")  # the files stay; each is written again under its name
        with worker(bench, concurrency=processes) as (process, log_path), celery_sending(bench):
            from billing.tasks import bill_pdfs_render

            started = time.perf_counter()
            for start in range(0, len(ids), SCALING_TASK):
                bill_pdfs_render.delay(ids[start:start + SCALING_TASK])
            wait_for(lambda: not Bill.objects.filter(pk__in=ids, pdf="").exists(), process, log_path,
                     what="the sample's PDFs")
            rates[processes] = len(ids) / (time.perf_counter() - started)
    return bench.row("PDFs, 1 → 2 worker processes", f"{rates[1]:.1f} → {rates[2]:.1f} bills/s ({len(ids):,} bills of "
                     f"{month:%Y-%m}, tasks of {SCALING_TASK}; ×{rates[2] / rates[1]:.2f})", rates[2], "bills/s",
                     bench.met(rates[2] >= 100))


# ---------------------------------------------------------------------------------------------------


def bill_day(bench: Bench, month: date, process, log_path: Path) -> dict:
    from django.db.models import Count

    from accounts.models import Account
    from billing.models import Bill, BillingRun, MailFile
    from billing.services.mail_files import mail_file_request
    from portal.notify import bills_emailed_counts

    readings_file = month_readings_out(bench, month)
    analyze()
    log_mark = log_path.stat().st_size
    before = rows_written()
    started = time.perf_counter()
    steps = {}
    import_readings(readings_file, bench.as_of)
    steps["import"] = time.perf_counter() - started
    with celery_sending(bench):
        run_figures = celery_month(month, process, log_path)
        steps["bill"] = time.perf_counter() - started
        bills = Bill.objects.filter(bill_date=month).exclude(status=Bill.Status.VOID)
        wait_for(lambda: not bills.filter(pdf="").exists(), process, log_path, what="the PDFs")
        steps["PDFs"] = time.perf_counter() - started
        ids = list(bills.values_list("id", flat=True))

        def emails_sent() -> bool:
            to_email, emailed, _ = bills_emailed_counts(ids)
            return emailed == to_email

        wait_for(emails_sent, process, log_path, what="the paperless e-mails")
        steps["e-mails"] = time.perf_counter() - started
        run = BillingRun.objects.filter(run_on=month).latest("created_at")
        mail_file = mail_file_request(run=run, actor=None)
        wait_for(lambda: MailFile.objects.get(pk=mail_file.pk).status != MailFile.Status.QUEUED, process, log_path,
                 what="the print file")
        steps["print file"] = time.perf_counter() - started
    mail_file.refresh_from_db()
    if mail_file.status != MailFile.Status.DONE:
        raise RuntimeError(f"the print file of {month} failed: {mail_file.error}")
    _, emailed, emails = bills_emailed_counts(ids)
    bill_start = steps["import"]
    return {"date": month.isoformat(), "bills": len(ids), "accounts": Account.objects.aggregate(n=Count("id"))["n"],
            "steps": steps, "bills_per_s": run_figures["bills_per_s"],
            "pdfs_per_s": len(ids) / (steps["PDFs"] - bill_start), "emails": emails, "printed": mail_file.bills,
            "worker_seconds": worker_seconds(log_path, since=log_mark), "peak_mb": process_peak_mb(process.pid),
            "rows": rows_written() - before}


def month_readings_out(bench: Bench, month: date) -> Path:
    """The readings the month's bills are read from (taken in the month before it), written to a CSV as the
    reader's file and taken off the books, untimed, so the bill day imports them."""
    import csv

    from django.db import connection

    from core.dates import add_months
    from meters.models import Reading

    window = Reading.objects.filter(read_on__gte=add_months(month, -1), read_on__lt=month)
    path = bench.scratch / f"readings-{month:%Y-%m}.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["meter_serial", "read_date", "reading", "read_type"])
        for serial, read_on, value, read_type in window.order_by("meter__serial", "read_on").values_list(
                "meter__serial", "read_on", "value", "read_type").iterator(chunk_size=10_000):
            writer.writerow([serial, read_on.isoformat(), value, read_type])
    ids = list(window.values_list("id", flat=True))
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM meters_historicalreading WHERE id = ANY(%s)", [ids])
        cursor.execute("DELETE FROM meters_reading WHERE id = ANY(%s)", [ids])
    return path


def import_readings(path: Path, as_of: date) -> None:
    import io

    from django.core.management import call_command

    call_command("import_readings", str(path), "--date", as_of.isoformat(), "--no-progress", stdout=io.StringIO())


def history_bill(months: list[date]) -> None:
    """The months between the two bill days, billed in this process (untimed), their e-mails held back: they
    are the history the second day stands on, not a thing measured."""
    import io

    from django.core.management import call_command

    from billing.models import Utility

    print(f"  (billing {len(months)} months of history, untimed: {months[0]:%Y-%m}…{months[-1]:%Y-%m})", flush=True)
    Utility.objects.update(bill_emails_wait=True)
    try:
        for month in months:
            call_command("run_billing", "--date", month.isoformat(), "--no-progress", stdout=io.StringIO())
    finally:
        Utility.objects.update(bill_emails_wait=False)
    analyze()


def wait_for(done, process, log_path: Path, *, what: str, limit: float = 3600) -> None:
    """Until ``done()``; refused when the worker exits, a task of it fails, or ``limit`` seconds pass."""
    started = time.monotonic()
    read = 0
    while not done():
        if process.poll() is not None:
            raise RuntimeError(f"the Celery worker exited waiting for {what}: {log_tail(log_path)}")
        with log_path.open("rb") as handle:  # what the worker logged since the last look
            handle.seek(read)
            new = handle.read()
        read += len(new)
        failed = [line for line in new.decode(errors="replace").splitlines() if "raised unexpected" in line]
        if failed:
            raise RuntimeError(f"a task failed waiting for {what}: {failed[0][-300:]}")
        if time.monotonic() - started > limit:
            raise RuntimeError(f"{what} not done in {limit:.0f} s: {log_tail(log_path)}")
        time.sleep(0.5)


def worker_seconds(log_path: Path, *, since: int) -> dict[str, float]:
    """The seconds the worker's processes spent on each kind of task, from its log (after byte ``since``)."""
    with log_path.open("rb") as handle:
        handle.seek(since)
        text = handle.read().decode(errors="replace")
    seconds: dict[str, float] = defaultdict(float)
    for task, spent in TASK_DONE.findall(text):
        seconds[TASK_WORDS.get(task, task.rsplit(".", 1)[-1])] += float(spent)
    return dict(seconds)


@contextmanager
def worker(bench: Bench, *, concurrency: int):
    """A Celery worker of ``concurrency`` processes on the bench's queue, production settings, rendering the
    PDFs of the bills it issues and e-mailing the paperless ones (to files in the scratch folder)."""
    import os

    outbox = bench.scratch / "outbox"
    outbox.mkdir(exist_ok=True)
    env = bench.production_env(SECRET_KEY=os.environ["SECRET_KEY"], BILL_PDFS_ON_ISSUE="1",
                               EMAIL_BACKEND="django.core.mail.backends.filebased.EmailBackend",
                               EMAIL_FILE_PATH=str(outbox))
    log_path = bench.scratch / f"worker-{concurrency}-{time.monotonic_ns()}.log"
    node = f"{bench.queue}-{concurrency}@{socket.gethostname()}"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [str(VENV_BIN / "celery"), "-A", "waterbilling", "worker", "--loglevel", "INFO", "--concurrency",
             str(concurrency), "--hostname", node, "--without-gossip", "--without-mingle", "--without-heartbeat",
             "--prefetch-multiplier", "1"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while " ready." not in log_path.read_text():
            if process.poll() is not None:
                raise RuntimeError(f"the Celery worker exited: {log_tail(log_path)}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"the Celery worker was not ready in 60 s: {log_tail(log_path)}")
            time.sleep(0.5)
        yield process, log_path
    finally:
        process_stop(process)
        queue_forget(bench)

