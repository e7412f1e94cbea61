"""The clerk's admin site as a whole: its header, and pages whose parts come from several apps.

An app never imports the floors above it, so the account page is put together here: accounts' own page,
with meters' part (installations, latest readings, the account import) and billing's (balance, bills and
payments). The site header names the installed utility.
"""

from django.contrib import admin
from django.utils.functional import lazy

from accounts.admin import AccountAdmin as AccountsAccountAdmin
from accounts.models import Account
from billing.admin import AccountBillingAdmin
from billing.models import Utility
from meters.admin import AccountMetersAdmin


def _utility_name() -> str:
    return Utility.objects.values_list("name", flat=True).first() or "waterbilling"


# Lazy, so the header follows the installed preset without touching the database at import time.
admin.site.site_header = lazy(_utility_name, str)()
admin.site.site_title = lazy(_utility_name, str)()
admin.site.index_title = lazy(lambda: f"{_utility_name()}: billing office", str)()


class AccountAdmin(AccountMetersAdmin, AccountBillingAdmin, AccountsAccountAdmin):
    """The account page: accounts' fields and actions, then billing's summary, then meters' readings."""


admin.site.unregister(Account)
admin.site.register(Account, AccountAdmin)
