"""Putting a premises in a water district from a day (``accounts.PremisesDistrict``): the clerk's record of a
district's boundaries, or of a premises moved from one district to another by the Town Board.

A move takes effect after the last period billed: a bill already issued was rated by the district its period was
in, and a move dated inside it would rewrite it (void it and bill again first). A move dated inside a period not yet
billed is billed by the days in each district (``billing.districts``).
"""

from datetime import date

from django.db import transaction
from django.db.models import Max

from accounts.models import Premises, PremisesDistrict
from core.errors import ApplicationError
from ordinance.selectors import district_named, districts

from ..models import Bill


def premises_district_check(*, premises: Premises, district: str, effective_on: date) -> None:
    """Refuse a change ``premises_district_set`` would refuse, naming the field and the rule; nothing written."""
    district_named(district)
    billed_through = Bill.objects.filter(account__premises=premises).exclude(status=Bill.Status.VOID).aggregate(
        last=Max("period_end"))["last"]
    if billed_through is not None and effective_on <= billed_through:
        raise ApplicationError(
            f"effective_on {effective_on} is inside a period already billed (through {billed_through}): a bill "
            "issued was rated by the district its period was in; date the move after it, or void the bill and bill "
            "it again first", field="effective_on")


@transaction.atomic
def premises_district_set(*, premises: Premises, district: str, effective_on: date, actor=None,
                          note: str = "") -> PremisesDistrict:
    """Put ``premises`` in ``district`` (its code) from ``effective_on``; refused naming the field and the rule."""
    Premises.objects.select_for_update().filter(pk=premises.pk).first()  # one change of a premises at a time
    premises_district_check(premises=premises, district=district, effective_on=effective_on)
    row = PremisesDistrict.objects.filter(premises=premises, effective_on=effective_on).first() or PremisesDistrict(
        premises=premises, effective_on=effective_on)
    row.district, row.note = districts()[district], note
    row._history_user = actor
    row._change_reason = note or f"in district {district} from {effective_on}"
    row.save()
    return row
