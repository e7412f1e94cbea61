import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Sum
from django.utils import timezone
from tqdm import tqdm

from billing.models import BillingRun
from billing.runs.lifecycle import (
    CHUNK_SIZE,
    LOST_CHECK_SECONDS,
    billing_run_chunk_execute,
    billing_run_create,
    billing_run_hand_out,
    billing_run_lost_release,
    billing_run_preview,
    billing_runs_orphaned_fail,
    billing_runs_sweep,
    workers_seen,
)
from billing.tasks import billing_run_dispatch, chunk_send
from core.commands import as_of_argument, parse_as_of
from core.errors import ApplicationError

POLL_SECONDS = 0.5


class Command(BaseCommand):
    help = "Bill every account due on the date (books billed that day; monthly meters on the 1st)."

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--dry-run", action="store_true", help="preview: rate and report, write nothing")
        parser.add_argument("--accept-sample-rates", action="store_true",
                            help="bill even though the rate schedule in force is the preset's sample one "
                                 "(recorded on the run); not needed on a demo/training site")
        parser.add_argument("--chunk-size", type=int, default=CHUNK_SIZE,
                            help=f"accounts a worker bills in one transaction (default {CHUNK_SIZE})")
        parser.add_argument("--stall-timeout", type=float, default=None, metavar="SECONDS",
                            help="with Celery workers: stop waiting (exit 1; the run goes on without us) when no "
                                 "worker has taken or finished a chunk for this long (default: twice "
                                 "BILLING_CHUNK_LEASE_SECONDS)")
        parser.add_argument("--no-progress", action="store_true")

    def handle(self, *args, **options):
        run_on = parse_as_of(options["date"])
        quiet = options["no_progress"] or options["verbosity"] < 1
        accept = options["accept_sample_rates"]
        try:
            if options["dry_run"]:
                preview = billing_run_preview(run_on=run_on, accept_sample_rates=accept)
                self.stdout.write(f"Preview for {run_on} (nothing written): {preview.bills} bills totalling "
                                  f"${preview.total:,.2f}; {preview.already_billed} already billed; "
                                  f"{preview.exceptions} exceptions")
                if preview.charges:
                    self.stdout.write(f"  including {preview.charges} pending fee(s) and fine(s) the bills carry")
                if preview.warning:
                    self.stdout.write(f"Warning: a run would be refused: {preview.warning}")
                self._exceptions(preview.new_exceptions)
                return
            self._resume_left_running()
            run = billing_run_create(run_on=run_on, accept_sample_rates=accept, chunk_size=options["chunk_size"])
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        bar = tqdm(total=run.chunks_total, unit="chunk", disable=quiet, desc=f"Billing {run_on}")
        if settings.CELERY_TASK_ALWAYS_EAGER:
            def execute(chunk_id):
                billing_run_chunk_execute(chunk_id=chunk_id)
                bar.update(BillingRun.objects.get(pk=run.pk).chunks_done - bar.n)

            billing_run_hand_out(run_id=run.pk, send=execute)
        else:
            billing_run_dispatch.delay(run.pk)
            stall = options["stall_timeout"]
            self._wait(run, bar, stall if stall is not None else 2 * settings.BILLING_CHUNK_LEASE_SECONDS)
        bar.close()
        run.refresh_from_db()
        self.stdout.write(f"Billing run {run.pk} for {run_on}: {run.status}; {run.accounts_due} accounts "
                          f"considered, {run.bills_created} bills issued totalling ${run.total_billed.amount:,.2f}, "
                          f"{run.already_billed} already billed, {run.exceptions_count} exceptions")
        if run.accept_sample_rates:
            self.stdout.write("  billed on the preset's sample rate schedule, as accepted with "
                              "--accept-sample-rates (recorded on the run)")
        self._exceptions(run.exceptions.select_related("account").order_by("account__account_no"))
        if run.status == BillingRun.Status.FAILED:
            raise CommandError(f"billing run {run.pk} for {run_on} failed: {run.error}; billing the date again "
                               "bills only what is still unbilled")

    def _resume_left_running(self):
        """Runs left running by a worker that died are handed on first; a run billed in a process of this host
        that was killed is failed, saying so (``billing_runs_orphaned_fail``)."""
        send = (lambda chunk_id: billing_run_chunk_execute(chunk_id=chunk_id)) \
            if settings.CELERY_TASK_ALWAYS_EAGER else chunk_send
        for run in billing_runs_orphaned_fail():
            run.refresh_from_db()
            self.stdout.write(f"Billing run {run.pk} for {run.run_on}, left running: now {run.status} ({run.error})")
        before = {run.pk: run.chunks_done for run in BillingRun.objects.filter(status=BillingRun.Status.RUNNING)}
        if not before:
            return
        for run in billing_runs_sweep(send=send):
            if run.status != BillingRun.Status.RUNNING or run.chunks_done != before[run.pk]:
                self.stdout.write(f"Billing run {run.pk} for {run.run_on}, left running: now {run.status}"
                                  + (f" ({run.error})" if run.error else ""))

    def _wait(self, run, bar, stall_seconds: float):
        """Wait for the workers, handing out again what is due (and, every few seconds, what a worker that is gone
        held); give up when nothing moves, saying what the workers answered."""
        progress, moved_at, checked = None, time.monotonic(), time.monotonic()
        while True:
            run = BillingRun.objects.get(pk=run.pk)
            bar.update(run.chunks_done - bar.n)
            if run.status != BillingRun.Status.RUNNING:
                return
            if time.monotonic() - checked >= LOST_CHECK_SECONDS:
                for chunk_id in billing_run_lost_release(run_id=run.pk, seen=workers_seen()):
                    self.stderr.write(f"chunk {chunk_id} lost its worker: handed out again")
                checked = time.monotonic()
            billing_run_hand_out(run_id=run.pk, send=chunk_send)
            # Taking a chunk counts as progress too: a slow chunk is not a stalled run.
            now = (run.chunks_done, run.chunks.aggregate(attempts=Sum("attempts"))["attempts"])
            if now != progress:
                progress, moved_at = now, time.monotonic()
            elif time.monotonic() - moved_at > stall_seconds:
                bar.close()
                raise CommandError(self._stalled(run, stall_seconds))
            time.sleep(POLL_SECONDS)

    @staticmethod
    def _stalled(run, stall_seconds: float) -> str:
        """What the command saw when the run stopped moving: the workers' answer and the chunks' state."""
        seen = workers_seen()
        chunks = list(run.chunks.filter(done=False).order_by("index"))
        leased = [c for c in chunks if c.leased_until and c.leased_until > timezone.now()]
        said = (f"billing run {run.pk} for {run.run_on} made no progress in {stall_seconds:g} s ({run.chunks_done} of "
                f"{run.chunks_total} chunks done). Asked what they run, {seen}. ")
        if leased:
            said += "Taken and not finished: " + ", ".join(
                f"chunk {c.index + 1} by {c.worker or 'a worker'}" for c in leased) + ". "
        waiting = len(chunks) - len(leased)
        if waiting:
            said += f"{waiting} chunk(s) wait in the queue for a worker"
            said += (" — is a Celery worker running on this broker and queue (celery -A waterbilling worker)? "
                     if not seen.answered else " — the workers are busy with other tasks. ")
        return said + ("The run stays running and goes on when a worker takes its chunks; the admin's Billing runs "
                       "page shows it.")

    def _exceptions(self, exceptions):
        for exc in list(exceptions)[:50]:
            self.stdout.write(f"  exception {exc.account.account_no}: {exc.get_kind_display()} — {exc.detail}")
