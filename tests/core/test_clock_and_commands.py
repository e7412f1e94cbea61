"""The guard against the future and the command scaffold's option readers."""

from datetime import date

import pytest
from django.core.management.base import CommandError

from core.clock import after_errors, refuse_future
from core.commands import day_option, parse_as_of, read_each
from core.errors import ApplicationError, FieldError


def test_after_errors_names_each_day_after_the_as_of_day_and_passes_the_rest():
    as_of = date(2026, 3, 10)
    errors = after_errors(as_of, "record it once done", served_on=date(2026, 3, 11), received_on=None,
                          mailed_on=as_of)
    assert [(e.field, e.message) for e in errors] == [
        ("served_on", "2026-03-11 is after 2026-03-10; record it once done")]
    assert after_errors(as_of, filed_on=date(2026, 3, 12))[0].message == "2026-03-12 is after 2026-03-10"


def test_refuse_future_names_the_field_and_today(monkeypatch):
    monkeypatch.setattr("core.clock.today", lambda: date(2026, 3, 10))
    refuse_future(date(2026, 3, 10))
    with pytest.raises(ApplicationError) as refused:
        refuse_future(date(2027, 3, 10), field="bill_date", doing="billed")
    assert str(refused.value.errors[0]) == ("bill_date: 2027-03-10 is after today (2026-03-10); nothing is billed "
                                            "in the future (check the year)")


def test_day_option_reads_a_date_or_refuses_naming_the_option():
    assert day_option({"served_on": "2026-03-01"}, "served_on") == date(2026, 3, 1)
    assert day_option({"served_on": None}, "served_on") is None
    with pytest.raises(ApplicationError) as refused:
        day_option({"served_on": "2026-02-30"}, "served_on")
    assert refused.value.errors[0].field == "--served-on"


def test_read_each_names_every_failure_together():
    def unknown():
        raise ApplicationError("no account NOPE", field="account_no")

    assert read_each(a=lambda: 1, b=lambda: 2) == {"a": 1, "b": 2}
    with pytest.raises(ApplicationError) as refused:
        read_each(account=unknown, on=lambda: day_option({"on": "2026-13-01"}, "on"))
    assert [e.field for e in refused.value.errors] == ["account_no", "--on"]
    assert isinstance(refused.value.errors[0], FieldError)


def test_parse_as_of_refuses_an_impossible_or_future_date(monkeypatch):
    monkeypatch.setattr("core.commands.today", lambda: date(2026, 3, 10))
    monkeypatch.setattr("core.clock.today", lambda: date(2026, 3, 10))
    assert parse_as_of(None) == date(2026, 3, 10)
    with pytest.raises(CommandError, match="--date: "):
        parse_as_of("2026-02-30")
    with pytest.raises(CommandError, match="after today"):
        parse_as_of("2026-03-11")
    assert parse_as_of("2026-03-11", allow_future=True) == date(2026, 3, 11)
