"""The general ledger's accounts for what the water books post: the preset's ``[gl]`` table over the defaults.

The defaults are the New York State Uniform System of Accounts for local governments (Office of the State
Comptroller) in the water fund, F: cash 200 and water rents receivable 350 on the balance sheet, accounts payable
600 for refunds owed, and the revenues metered water sales 2140, water service charges 2144 and interest and
penalties on water rents 2148. A village whose treasurer keeps other codes (a sewer fund, a district's fund
letter, its own deposit liability) writes them in its preset's ``[gl]``; each key names what the water books post:

    [gl]
    fund = "F"
    sewer_fund = "G"      # the fund sewer rents are revenue of
    cash = "200"          # payments and deposits received
    ...

``office.journal`` turns each day's ledger into balanced journal entries with these accounts.
"""

from dataclasses import dataclass

from core.errors import ApplicationError

FUND = "F"
# key: (code, name), in the order the journal lists them.
DEFAULTS: dict[str, tuple[str, str]] = {
    "cash": ("200", "Cash"),
    "receivable": ("350", "Water rents receivable"),
    "payable": ("600", "Accounts payable (refunds of credits)"),
    "deposits": ("691", "Deposits held (refundable)"),
    "metered_sales": ("2140", "Metered water sales"),
    "service_charges": ("2144", "Water service charges"),
    "penalties": ("2148", "Interest and penalties on water rents"),
    "fines": ("2610", "Fines and forfeited bail"),
    "adjustments": ("2140", "Metered water sales (corrections)"),
    # Sewer rents billed with the water (General Municipal Law art. 14-F) are the sewer fund's revenue: the water
    # fund, which receives every payment, owes them to the sewer fund until the treasurer settles between funds.
    "due_to_sewer": ("630", "Due to the sewer fund"),
    "due_from_water": ("391", "Due from the water fund"),
    "sewer_rents": ("2120", "Sewer rents"),
}
SEWER_FUND = "G"
# The accounts kept in the sewer fund (``sewer_fund``), not the water fund.
IN_SEWER_FUND = ("due_from_water", "sewer_rents")


@dataclass(frozen=True)
class GlAccount:
    key: str
    fund: str
    code: str
    name: str

    @property
    def number(self) -> str:
        return f"{self.fund}{self.code}"


def gl_accounts_from(params: dict) -> dict[str, GlAccount]:
    """The accounts the ``[gl]`` table ``params`` names (each a code, or ``[code, name]``) over the defaults;
    an unknown key or a blank code is refused naming it."""
    fund = str(params.get("fund", FUND)).strip()
    sewer_fund = str(params.get("sewer_fund", SEWER_FUND)).strip()
    if not fund or not sewer_fund:
        raise ApplicationError("[gl] fund is blank; the water fund is F (the sewer fund G)", field="gl")
    unknown = sorted(set(params) - set(DEFAULTS) - {"fund", "sewer_fund", "confirmed"})
    if unknown:
        raise ApplicationError(f"[gl] {', '.join(unknown)}: not a key; the keys are fund, {', '.join(DEFAULTS)}",
                               field="gl")
    out = {}
    for key, (code, name) in DEFAULTS.items():
        given = params.get(key)
        if isinstance(given, list | tuple):
            code, name = (str(given[0]), str(given[1])) if len(given) == 2 else ("", "")
        elif given is not None:
            code = str(given)
        if not code.strip():
            raise ApplicationError(f"[gl] {key} needs an account code (or [code, name])", field="gl")
        out[key] = GlAccount(key=key, fund=sewer_fund if key in IN_SEWER_FUND else fund, code=code.strip(),
                             name=name)
    return out
