from django.apps import AppConfig


class NoticesConfig(AppConfig):
    name = "notices"
    verbose_name = "Notices to customers"

    def ready(self):
        from anymail.signals import tracking

        from arrears.signals import plan_defaulted, plan_ended
        from billing.signals import payment_reversed
        from meters.signals import usage_alerts_raised
        from remittance.signals import autopay_ended, autopay_notice_due, autopay_suspended
        from termination.signals import case_reopened, notice_served, service_restored, service_shut_off

        from . import receivers
        from .signals import notices_queued

        # The customer hears of each, once, in their language (docs/architecture.md, the event table).
        payment_reversed.connect(receivers.on_payment_reversed, dispatch_uid="notices.payment_reversed")
        autopay_suspended.connect(receivers.on_autopay_suspended, dispatch_uid="notices.autopay_suspended")
        autopay_notice_due.connect(receivers.on_autopay_notice_due, dispatch_uid="notices.autopay_notice_due")
        autopay_ended.connect(receivers.on_autopay_ended, dispatch_uid="notices.autopay_ended")
        case_reopened.connect(receivers.on_case_reopened, dispatch_uid="notices.case_reopened")
        plan_defaulted.connect(receivers.on_plan_defaulted, dispatch_uid="notices.plan_defaulted")
        plan_ended.connect(receivers.on_plan_ended, dispatch_uid="notices.plan_ended")
        usage_alerts_raised.connect(receivers.on_usage_alerts_raised, dispatch_uid="notices.usage_alerts")
        notice_served.connect(receivers.on_termination_notice_served, dispatch_uid="notices.termination_served")
        service_shut_off.connect(receivers.on_service_shut_off, dispatch_uid="notices.service_shut_off")
        service_restored.connect(receivers.on_service_restored, dispatch_uid="notices.service_restored")
        notices_queued.connect(receivers.on_notices_queued, dispatch_uid="notices.send_queued")
        # Bounces and spam complaints from the mail provider (django-anymail's webhooks, /anymail/…).
        tracking.connect(receivers.on_email_tracking, dispatch_uid="notices.email_tracking")
