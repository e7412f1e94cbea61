"""The ledger: allocation (pure), posting (the only writer of ledger rows) and selectors (balances)."""
