"""Wiring between apps on the same floor, which may not import each other: backflow announces noncompliance,
and termination acts on it — a case on violation grounds with the section, or, where the preset treats it as
a health hazard (Old Westbury), an emergency interruption logged as its own event."""

from django.apps import apps


def connect() -> None:
    if apps.is_installed("backflow") and apps.is_installed("termination"):
        from backflow.signals import noncompliance_found

        noncompliance_found.connect(on_noncompliance_found, dispatch_uid="waterbilling.backflow_to_termination")


def on_noncompliance_found(sender, *, account_id, section, detail, as_of, actor, emergency_kind="", **kwargs):
    from accounts.models import Account
    from termination.services.cases import case_open, interruption_log

    account = Account.objects.get(pk=account_id)
    if emergency_kind:
        interruption_log(account=account, kind=emergency_kind, started_on=as_of, actor=actor,
                         reason=f"Backflow noncompliance ({section}): {detail}")
    else:
        case_open(account=account, grounds="violation", section=section, detail=f"Backflow noncompliance: {detail}",
                  as_of=as_of, actor=actor)
