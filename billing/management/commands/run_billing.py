import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from billing.models import BillingRun
from billing.services.runs import billing_run_chunk_execute, billing_run_create, billing_run_preview
from billing.tasks import billing_run_dispatch
from waterbilling.commands import as_of_argument, parse_as_of
from waterbilling.errors import ApplicationError


class Command(BaseCommand):
    help = "Bill every account due on the date (books billed that day; monthly meters on the 1st)."

    def add_arguments(self, parser):
        as_of_argument(parser)
        parser.add_argument("--dry-run", action="store_true", help="preview: rate and report, write nothing")
        parser.add_argument("--accept-sample-rates", action="store_true",
                            help="bill even though the rate schedule in force is the preset's sample one "
                                 "(recorded on the run); not needed on a demo/training site")
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
                if preview.warning:
                    self.stdout.write(f"Warning: a run would be refused: {preview.warning}")
                self._exceptions(preview.new_exceptions)
                return
            run = billing_run_create(run_on=run_on, accept_sample_rates=accept)
        except ApplicationError as exc:
            raise CommandError(str(exc)) from exc
        bar = tqdm(total=run.chunks_total, unit="chunk", disable=quiet, desc=f"Billing {run_on}")
        if settings.CELERY_TASK_ALWAYS_EAGER:
            for chunk_id in run.chunks.order_by("index").values_list("id", flat=True):
                billing_run_chunk_execute(chunk_id=chunk_id)
                bar.update(1)
        else:
            billing_run_dispatch.delay(run.pk)
            while (run := BillingRun.objects.get(pk=run.pk)).status == BillingRun.Status.RUNNING:
                bar.update(run.chunks_done - bar.n)
                time.sleep(0.5)
            bar.update(run.chunks_done - bar.n)
        bar.close()
        run.refresh_from_db()
        self.stdout.write(f"Billing run {run.pk} for {run_on}: {run.status}; {run.accounts_due} accounts "
                          f"considered, {run.bills_created} bills issued totalling ${run.total_billed.amount:,.2f}, "
                          f"{run.already_billed} already billed, {run.exceptions_count} exceptions")
        if run.accept_sample_rates:
            self.stdout.write("  billed on the preset's sample rate schedule, as accepted with "
                              "--accept-sample-rates (recorded on the run)")
        self._exceptions(run.exceptions.select_related("account").order_by("account__account_no"))

    def _exceptions(self, exceptions):
        for exc in list(exceptions)[:50]:
            self.stdout.write(f"  exception {exc.account.account_no}: {exc.get_kind_display()} — {exc.detail}")
