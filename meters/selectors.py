"""Reads about readings.

What makes a reading final is known above this app: a bill in force rests on its start and end readings.
Apps above meters register what holds readings (``reading_holders_register``, from their
``AppConfig.ready``), so meters asks without importing them.
"""

from collections.abc import Callable

from django.db import models

ReadingHolders = Callable[..., list[models.Model]]

_holders: list[ReadingHolders] = []


def reading_holders_register(holders: ReadingHolders) -> None:
    """``holders(reading_id=…)`` lists the records in force that rest on a reading, in a stable order."""
    if holders not in _holders:
        _holders.append(holders)


def reading_held_by(*, reading_id: int) -> list[models.Model]:
    """Every record in force that rests on the reading (for billing: the bills, not void, that used it)."""
    return [held for holders in _holders for held in holders(reading_id=reading_id)]
