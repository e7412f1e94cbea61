"""What an account owes has one door (ARCHITECTURE.md, "The ledger: one writer"): ``billing.balances``.

Above billing, an app asks ``billing.balances`` what accounts owe and posts through the one ledger writer
(``billing.ledger.posting``); how balances are worked out (the allocation, the replay, the kept standings, the
fast paths, the penalty machinery's insides) is billing's own. An import of those insides from another app fails
here, naming the file and line.
"""

from tests.test_layers import GRAPH, MODULES, ROOT

# billing's insides: any module under these, from outside billing.
INSIDES = ("billing.ledger.allocation", "billing.ledger.selectors", "billing.ledger.standing", "billing.fast_paths",
           "billing.penalties.plan", "billing.penalties.shortcuts", "billing.penalties.selectors")


def test_above_billing_balances_are_asked_of_billing_balances():
    wrong = [f"{MODULES[module].relative_to(ROOT)}:{line} imports {target}"
             for module, edges in GRAPH.items() if not module.startswith("billing")
             for target, line in edges.items() if target.startswith(INSIDES)]
    assert not wrong, "ask billing.balances (or post through billing.ledger.posting):\n" + "\n".join(wrong)
