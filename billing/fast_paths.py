"""The shortcuts the hot paths take, in one place, and the switch that turns them off.

Each shortcut gives the answer its full computation gives, faster:

* a penalty scheme's own questions (``PenaltyScheme.dates_in_order``, ``amount_of_unpaid``,
  ``owes_no_more_late_charges``) instead of its ``dates`` sorted and its ``amount`` from totals, in
  ``billing.penalties.rules.penalties_owed``;
* the penalties of the accounts nothing happened to since the last nightly assessment carried forward from
  their kept standings (``billing.penalties.shortcuts.penalty_candidates_split``) instead of planned in full;
* each account's open bills read from its kept standing (``billing.ledger.standing.open_balances``) instead of
  replayed from its ledger.

``settings.BILLING_FAST_PATHS = False`` (the environment's ``BILLING_FAST_PATHS=0``) turns every one of them off:
the same books, every figure from a full replay. The nightly job checks a sample of the kept standings against a
full replay every night (``standings_sample_check``)."""

from django.conf import settings


def fast_paths_on() -> bool:
    return settings.BILLING_FAST_PATHS
