from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self):
        from meters.selectors import reading_holders_register
        from ordinance.install import (
            history_guard_register,
            install_step_register,
            past_guard_register,
            rebill_step_register,
        )
        from ordinance.preview import preview_register

        from . import receivers, sections, signals
        from .presets import bills_issued_guard, preset_bills_preview, rates_and_fees_install
        from .selectors import bills_using_reading
        from .services.amendments import amendment_past, amendment_rebill_request

        signals.bills_issued.connect(receivers.on_bills_issued, dispatch_uid="billing.bill_pdfs_on_issue")
        signals.bill_pdfs_wanted.connect(receivers.on_bill_pdfs_wanted, dispatch_uid="billing.bill_pdfs_wanted")
        signals.billing_run_started.connect(receivers.on_billing_run_started, dispatch_uid="billing.run_started")
        signals.billing_chunk_due.connect(receivers.on_billing_chunk_due, dispatch_uid="billing.chunk_due")
        signals.mail_file_requested.connect(receivers.on_mail_file_requested, dispatch_uid="billing.mail_file")
        # A reading a bill in force used is final (meters refuses to change it).
        reading_holders_register(bills_using_reading)
        # The preset tables billing reads, its rows of an install, and what makes a rule's past fixed.
        sections.register()
        install_step_register(rates_and_fees_install)
        history_guard_register(bills_issued_guard)
        preview_register(preset_bills_preview)
        # An amendment installed after what it bears on: refused, listing it, or rebilled once a supervisor approves.
        past_guard_register(amendment_past)
        rebill_step_register(amendment_rebill_request)
