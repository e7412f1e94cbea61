"""What else holds a shut-off: an app above termination (a payment plan in good standing) registers a function
``(account_id, as_of) -> list of words``; the shut-off guard lists each as a refusal. Termination never imports
those apps."""

from collections.abc import Callable
from datetime import date

SHUTOFF_HOLDS: list[Callable[[int, date], list[str]]] = []


def shutoff_hold_register(hold: Callable[[int, date], list[str]]) -> None:
    if hold not in SHUTOFF_HOLDS:
        SHUTOFF_HOLDS.append(hold)


def shutoff_holds(account_id: int, as_of: date) -> list[str]:
    return [words for hold in SHUTOFF_HOLDS for words in hold(account_id, as_of)]
