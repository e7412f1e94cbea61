"""Account alerts: flags the office sets on an account for everyone who opens it (the account page, the counter, the
crew's day sheet), and the ones that hold a shut-off while they run, for the shut-off guard."""

from datetime import date

from core.clock import refuse_future
from core.errors import ApplicationError, FieldError

from .models import Account, AccountAlert


def alert_problems(*, kind: str, note: str, starts_on: date | None, ends_on: date | None) -> list[FieldError]:
    out = []
    if kind not in AccountAlert.Kind.values:
        out.append(FieldError("kind", f"'{kind}' is not one of {', '.join(AccountAlert.Kind.values)}"))
    if kind == AccountAlert.Kind.OTHER and not (note or "").strip():
        out.append(FieldError("note", "say what the alert is"))
    if starts_on is None:
        out.append(FieldError("starts_on", "the day it starts is needed"))
    elif ends_on is not None and ends_on < starts_on:
        out.append(FieldError("ends_on", f"{ends_on} is before it starts ({starts_on})"))
    return out


def alert_set(*, account: Account, kind: str, starts_on: date, actor, note: str = "",
              ends_on: date | None = None) -> AccountAlert:
    problems = alert_problems(kind=kind, note=note, starts_on=starts_on, ends_on=ends_on)
    try:
        refuse_future(starts_on, field="starts_on", doing="recorded")
    except ApplicationError as exc:
        problems += exc.errors
    if problems:
        raise ApplicationError(errors=problems)
    alert = AccountAlert(account=account, kind=kind, note=note.strip(), starts_on=starts_on, ends_on=ends_on,
                         set_by=actor if getattr(actor, "pk", None) else None)
    alert._history_user = alert.set_by
    alert.save()
    return alert


def alerts_on(account_ids, *, on: date) -> dict[int, list[AccountAlert]]:
    """Each account's alerts in force ``on``."""
    out: dict[int, list[AccountAlert]] = {}
    for alert in AccountAlert.objects.filter(account_id__in=list(account_ids), starts_on__lte=on).exclude(
            ends_on__lt=on).order_by("kind", "id"):
        out.setdefault(alert.account_id, []).append(alert)
    return out


def shutoff_alert_words(account_id: int, on: date) -> list[str]:
    """The alerts in force ``on`` that hold a shut-off, in words with who set them."""
    return [f"account alert: {alert.words} (set {alert.starts_on:%b} {alert.starts_on.day}, {alert.starts_on:%Y}"
            + (f" by {alert.set_by}" if alert.set_by else "") + ")"
            for alert in alerts_on([account_id], on=on).get(account_id, [])
            if alert.kind in AccountAlert.HOLDS_SHUTOFF]
