"""A waived penalty is not owed: the relevy list neither levies it nor says it is owed and not posted.

The village of ``steps.py`` (penalties assessed through 2026-05-10): 1-0001 billed $186.13 2026-02-01, due
2026-03-01, unpaid: penalties 2026-03-02 $9.31, 2026-04-02 $1.86, 2026-05-02 $1.86 (§ 45.29 E).
"""

from datetime import date
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model

from billing.models import LedgerEntry
from billing.services.waivers import penalty_waiver_request
from reports import selectors
from reports.render import report_view

from .steps import billed_village

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.29 E")]
D = Decimal
AS_OF = date(2026, 5, 10)


def test_a_waived_penalty_is_not_on_the_relevy_list(mineola):
    village = billed_village()
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    first = LedgerEntry.objects.get(account=village["1-0001"], kind="penalty", posted_on=date(2026, 3, 2))
    # $9.31 is within the office's $25.00 limit: waived at once, corrected to zero on its day.
    penalty_waiver_request(entry=first, reason="first late payment in 20 years", actor=clerk, as_of=AS_OF)

    r = selectors.relevy(levy_on=AS_OF)
    row = next(row for row in r.rows if row.account_no == "1-0001")
    # $186.13 unpaid, and the later penalties $1.86 + $1.86 = $3.72: not the $9.31 waived.
    assert (row.charges, row.late_charges, row.total) == (D("186.13"), D("3.72"), D("189.85"))
    assert r.late_charges_not_posted == 0
    assert not [note for note in report_view(r).notes if "differ from those posted" in note]
