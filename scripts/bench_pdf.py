"""Bill PDFs per second on a pool of worker processes.

    .venv/bin/python scripts/bench_pdf.py                     # 400 bills, 2 processes
    .venv/bin/python scripts/bench_pdf.py --bills 1000 --processes 2 --batch 25
    .venv/bin/python scripts/bench_pdf.py --baseline          # one WeasyPrint document per bill
    .venv/bin/python scripts/bench_pdf.py --profile           # where a bill's time goes, by phase

Builds a throw-away SQLite database (never the configured one): the Mineola preset with demo accounts
and two years of readings, billed on the first of every month for two years so each bill has a full
consumption chart. It then renders the most recent bills (one per account) in worker processes the way
the Celery task does — without storing them — and prints bills per second for the rendering alone.
"""

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
from datetime import date
from multiprocessing import get_context
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
AS_OF = date(2026, 11, 20)


def _setup_django(database: Path) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ["DATABASE_URL"] = f"sqlite:///{database}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
    os.environ.setdefault("DJANGO_DEBUG", "1")  # development settings: the database is a throw-away one
    import django

    django.setup()


def _build(accounts: int) -> None:
    from django.core.management import call_command

    from core.dates import add_months
    from demo import DEMO_PRESET

    quiet = open(os.devnull, "w")  # noqa: SIM115 - for the whole build
    call_command("migrate", verbosity=0, stdout=quiet)
    call_command("setup_utility", DEMO_PRESET, "--demo", str(accounts), "--date", AS_OF.isoformat(), stdout=quiet)
    first = add_months(AS_OF.replace(day=1), -23)
    for months in range(24):
        day = add_months(first, months)
        if day <= AS_OF:
            call_command("run_billing", "--date", day.isoformat(), "--no-progress", stdout=quiet)


def _latest_bill_ids(count: int) -> list[int]:
    from billing.models import Bill

    return list(Bill.objects.exclude(status=Bill.Status.VOID).order_by("-bill_date", "account__account_no")
                .values_list("id", flat=True)[:count])


def _worker_init(warm_id: int, baseline: bool) -> None:
    from django.db import connections

    connections.close_all()  # a forked child must open its own connection
    _render_batch(([warm_id], baseline))  # a Celery worker is long-lived: measure it warm (fonts loaded)


def _render_batch(args) -> tuple[int, float]:
    """Render a batch; returns the bytes written and the CPU seconds this process spent on it."""
    ids, baseline = args
    from billing.models import Bill
    from billing.services.bill_pdfs import bills_pdf_files

    cpu = time.process_time()
    bills = list(Bill.objects.filter(pk__in=ids))
    if baseline:
        size = sum(len(_baseline_one(bill)) for bill in bills)
    else:
        size = sum(len(data) for data in bills_pdf_files(bills=bills).values())
    return size, time.process_time() - cpu


def _baseline_one(bill) -> bytes:
    """The straightforward way: one HTML document, its stylesheet parsed again, per bill."""
    from django.template.loader import get_template, render_to_string
    from weasyprint import CSS, HTML

    from billing.documents.bill import bill_views

    html = render_to_string("billing/bill.html", {"bills": bill_views(bill_ids=[bill.pk])})
    css = CSS(string=get_template("billing/bill.css").template.source)
    return HTML(string=html).write_pdf(stylesheets=[css])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bills", type=int, default=400)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--batch", type=int, default=0, help="bills per task (default: LAYOUT_BATCH)")
    parser.add_argument("--baseline", action="store_true", help="one WeasyPrint document per bill")
    parser.add_argument("--profile", action="store_true",
                        help="profile one process rendering the bills and print the time by phase")
    parser.add_argument("--database", type=Path, default=None,
                        help="SQLite file to build (or reuse when it exists); default a temporary file")
    options = parser.parse_args()

    if options.profile:
        phases = pdf_profile(bills=options.bills, database=options.database, on_built=print)
        print(f"{phases['bills']} bills in one process: {phases['ms_per_bill']:.1f} ms a bill without the "
              f"profiler; by phase (shares of the profiled run applied to it):")
        for name, ms in phases["phases"].items():
            print(f"  {name:<44} {ms:6.1f} ms  {ms / phases['ms_per_bill']:4.0%}")
        print(f"100 bills/s on 2 processes allows {phases['budget_ms']:.0f} ms a bill")
        return
    result = pdf_measure(bills=options.bills, processes=options.processes, batch=options.batch,
                         baseline=options.baseline, database=options.database, on_built=print)
    print(f"{result['bills']} bills in {result['seconds']:.2f}s = {result['bills_per_s']:.1f} bills/s on "
          f"{result['processes']} processes (batch {result['batch']}; {result['kib_per_bill']:.0f} KiB a bill)")
    # On a machine shared with other work the wall clock says more about the neighbours than about the
    # code; CPU time per bill gives the rate the same processes reach on cores of their own.
    print(f"CPU {result['cpu_ms_per_bill']:.0f} ms a bill = {result['cpu_bills_per_s']:.1f} bills/s on "
          f"{result['processes']} free cores")


def _village(bills: int, database: Path | None):
    """Django set up on the SQLite village at ``database`` (built unless it exists; a temporary file when
    None); returns the temporary directory to clean up (or None), the file, and whether it was reused."""
    workdir = None
    if database is None:
        workdir = tempfile.TemporaryDirectory(prefix="bench_pdf_")
        database = Path(workdir.name) / "bench.sqlite3"
    reuse = database.exists()
    _setup_django(database)
    if not reuse:
        _build(bills)
    return workdir, database, reuse


def pdf_measure(*, bills: int = 400, processes: int = 2, batch: int = 0, baseline: bool = False,
                database: Path | None = None, on_built=None) -> dict:
    """Build (or reuse) the SQLite village and render its latest ``bills`` bills on ``processes`` forked
    processes. Sets up Django on that SQLite file, so call it in a process of its own. Returns the figures:
    ``bills``, ``seconds``, ``bills_per_s``, ``processes``, ``batch``, ``kib_per_bill``, ``cpu_ms_per_bill``,
    ``cpu_bills_per_s``; ``on_built`` gets the line saying what was built."""
    started = time.perf_counter()
    workdir, database, reuse = _village(bills, database)
    ids = _latest_bill_ids(bills)
    if on_built:
        on_built(f"{'reused' if reuse else 'built'} {database} in {time.perf_counter() - started:.1f}s; "
                 f"rendering {len(ids)} bills on {processes} processes"
                 f"{' (baseline: one document per bill)' if baseline else ''}")

    from billing.services.bill_pdfs import LAYOUT_BATCH

    batch = batch or LAYOUT_BATCH
    tasks = [(ids[i:i + batch], baseline) for i in range(0, len(ids), batch)]
    from django.db import connections

    connections.close_all()
    with get_context("fork").Pool(processes, initializer=_worker_init, initargs=(ids[0], baseline)) as pool:
        pool.map(abs, range(processes))  # wait until the workers are up and warm
        started = time.perf_counter()
        results = pool.map(_render_batch, tasks, chunksize=1)
        elapsed = time.perf_counter() - started
    size = sum(r[0] for r in results)
    cpu = sum(r[1] for r in results)
    if workdir is not None:
        workdir.cleanup()
    return {"bills": len(ids), "seconds": elapsed, "bills_per_s": len(ids) / elapsed, "processes": processes,
            "batch": batch, "kib_per_bill": size / max(len(ids), 1) / 1024,
            "cpu_ms_per_bill": cpu / len(ids) * 1000, "cpu_bills_per_s": len(ids) * processes / cpu}


# The phases of a bill's render, as cumulative times of these functions (file suffix, function name). A
# phase's own time is its function's less the phases nested in it.
PHASES = {
    "the bills' figures (queries)": ("billing/documents/bill.py", "bill_views"),
    "their HTML (Django template)": ("django/template/loader.py", "render_to_string"),
    "WeasyPrint: HTML parse, CSS cascade, boxes": ("weasyprint/__init__.py", "render"),
    "WeasyPrint: layout": ("weasyprint/layout/__init__.py", "layout_document"),
    "  of which line breaking (Pango)": ("weasyprint/text/line_break.py", "split_first_line"),
    "WeasyPrint: drawing the page": ("weasyprint/draw/__init__.py", "draw_page"),
    "  of which the SVG chart": ("weasyprint/svg/__init__.py", "draw"),
    "WeasyPrint: tagged PDF written": ("core/documents.py", "_write"),
}
NESTED = {"WeasyPrint: HTML parse, CSS cascade, boxes": "WeasyPrint: layout",
          "WeasyPrint: tagged PDF written": "WeasyPrint: drawing the page"}


def pdf_profile(*, bills: int = 100, database: Path | None = None, on_built=None) -> dict:
    """Render ``bills`` bills in this process (warm), once plainly for the time a bill takes and once under
    cProfile for the shares of it each phase takes. Returns ``bills``, ``ms_per_bill``, ``budget_ms`` (what
    100 bills/s on 2 processes allows) and ``phases`` (ms a bill by phase name, ``PHASES``' order). Sets up
    Django on the SQLite village, so call it in a process of its own."""
    workdir, database, reuse = _village(bills, database)
    ids = _latest_bill_ids(bills)
    if on_built:
        on_built(f"{'reused' if reuse else 'built'} {database}; profiling {len(ids)} bills in one process")
    _render_batch((ids[:1], False))  # warm: fonts loaded, stylesheets parsed, as in a long-lived worker
    _, cpu = _render_batch((ids, False))
    profiler = cProfile.Profile()
    profiler.runcall(_render_batch, (ids, False))
    stats = pstats.Stats(profiler).stats
    total = sum(row[2] for row in stats.values())  # every function's own time: the profiled run's length

    def cumulative(suffix: str, function: str) -> float:
        return sum(row[3] for (path, _, name), row in stats.items() if name == function and path.endswith(suffix))

    seconds = {name: cumulative(*where) for name, where in PHASES.items()}
    for outer, inner in NESTED.items():
        seconds[outer] -= seconds[inner]
    ms_per_bill = cpu / len(ids) * 1000
    phases = {name: value / total * ms_per_bill for name, value in seconds.items()}
    if workdir is not None:
        workdir.cleanup()
    return {"bills": len(ids), "ms_per_bill": ms_per_bill, "budget_ms": 2 / 100 * 1000, "phases": phases}


if __name__ == "__main__":
    main()
