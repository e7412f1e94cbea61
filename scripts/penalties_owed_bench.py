"""Time ``billing.penalties.rules.penalties_owed`` on made-up ledgers, with no database, and check its answers.

    .venv/bin/python scripts/penalties_owed_bench.py            # time, and compare with the saved answers
    .venv/bin/python scripts/penalties_owed_bench.py --save     # time, and save the answers as the reference

Builds 2,000 accounts of 24 monthly bills over two years (seeded random: accounts that pay on time, late, in
part, skip bills and catch up, or never pay; now and then a fee, a credit memo on a bill or a payment made
ahead), and replays every account through one day under Mineola's scheme (``first_then_monthly``, 5% then 1%,
from ``fixtures/presets/mineola.toml``) and Washingtonville's (``monthly_interest_february_penalty``), in both
payment orders: the best of five runs for each. The answers (every late charge: bill, day, kind, percent,
description, citation and amount, exactly as written) are compared with those saved by ``--save``, so a faster
replay can be checked against the one it replaces.
"""

import argparse
import os
import pickle
import random
import sys
import time
import tomllib
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "waterbilling.settings")
os.environ.setdefault("DJANGO_DEBUG", "1")  # settings only: the replay reads no database
django.setup()

from billing.ledger.allocation import PENALTIES_FIRST, PRINCIPAL_FIRST, Entry  # noqa: E402
from billing.penalties.rules import (  # noqa: E402
    BillTerms,
    FirstThenMonthly,
    MonthlyInterestFebruaryPenalty,
    penalties_owed,
)
from core.dates import add_months  # noqa: E402

ACCOUNTS = 2000
BILLS = 24
FIRST_BILL = date(2024, 1, 1)
THROUGH = date(2026, 2, 2)  # the 2nd of a month, past a February 1
RUNS = 5
REFERENCE = Path("/tmp/penalties_owed_bench.pickle")
CENT = Decimal("0.01")


def scheme_params(scheme: str) -> tuple[str, dict]:
    """The first preset (by file name) whose ``[penalty]`` table uses ``scheme``: its name and that table."""
    for path in sorted((ROOT / "fixtures" / "presets").glob("*.toml")):
        with open(path, "rb") as f:
            penalty = tomllib.load(f).get("penalty", {})
        if penalty.get("scheme") == scheme:
            return path.stem, penalty
    raise SystemExit(f"no preset uses the penalty scheme {scheme}")


def money(rng: random.Random, low: float, high: float) -> Decimal:
    return Decimal(rng.randint(int(low * 100), int(high * 100))) * CENT


def account(rng: random.Random, number: int, *, due_days: int) -> tuple[list[Entry], list[BillTerms]]:
    """One account's ledger entries and live bills."""
    entries: list[Entry] = []
    terms: list[BillTerms] = []
    habit = rng.choices(["on_time", "late", "partial", "skips", "never"], weights=[50, 20, 12, 13, 5])[0]
    next_id = number * 1000
    owing = Decimal(0)
    base = money(rng, 30, 400)

    def add(kind: str, posted_on: date, amount: Decimal, bill_key=None) -> None:
        nonlocal next_id
        next_id += 1
        entries.append(Entry(kind=kind, posted_on=posted_on, amount=amount, bill_key=bill_key, entry_id=next_id))

    for n in range(BILLS):
        bill_date = add_months(FIRST_BILL, n)
        due_date = bill_date + timedelta(days=due_days)
        key = (bill_date, number * 100 + n)
        terms.append(BillTerms(key=key, bill_date=bill_date, due_date=due_date))
        water = (base * Decimal(rng.uniform(0.6, 1.6))).quantize(CENT)
        add("water", bill_date, water, key)
        bill_total = water
        if rng.random() < 0.15:
            fee = money(rng, 5, 60)
            add(rng.choice(["fee", "fine", "debit"]), bill_date, fee, key)
            bill_total += fee
        if rng.random() < 0.03:
            add("credit", bill_date + timedelta(days=rng.randint(1, 40)), -money(rng, 1, float(water)), key)
        # A late charge already on the books: the replay ignores it, but the loader hands it over.
        if rng.random() < 0.2:
            add("penalty", due_date + timedelta(days=1), money(rng, 1, 20), key)
        owing += bill_total
        pay_on = None
        amount = Decimal(0)
        if habit == "on_time" or (habit != "never" and rng.random() < 0.1):
            pay_on, amount = bill_date + timedelta(days=rng.randint(3, due_days)), bill_total
        elif habit == "late":
            pay_on, amount = due_date + timedelta(days=rng.randint(1, 75)), owing * Decimal("1.03")
        elif habit == "partial":
            pay_on = bill_date + timedelta(days=rng.randint(5, due_days + 20))
            amount = bill_total * Decimal(rng.uniform(0.4, 0.95))
        elif habit == "skips" and rng.random() < 0.4:
            pay_on, amount = due_date + timedelta(days=rng.randint(-10, 40)), owing * Decimal(rng.uniform(0.8, 1.1))
        if pay_on is not None and amount > 0:
            amount = amount.quantize(CENT)
            add("payment", pay_on, -amount)
            owing = max(Decimal(0), owing - amount)
            if rng.random() < 0.05:  # a second payment the same day
                add("payment", pay_on, -money(rng, 1, 50))
    rng.shuffle(entries)  # the replay sorts them itself
    return entries, terms


def build(seed: int, *, due_days: int) -> list[tuple[list[Entry], list[BillTerms], frozenset]]:
    rng = random.Random(seed)
    out = []
    for number in range(1, ACCOUNTS + 1):
        entries, terms = account(rng, number, due_days=due_days)
        waived = set()
        if rng.random() < 0.05:  # a waived late charge, by (bill id, day, kind)
            bill = rng.choice(terms)
            waived.add((bill.key[1], bill.due_date + timedelta(days=1), "penalty"))
            waived.add((bill.key[1], bill.due_date + timedelta(days=1), "interest"))
        out.append((entries, terms, frozenset(waived)))
    return out


def answers(owed) -> list[tuple]:
    return [(p.bill_key, p.due.on, p.due.kind, str(p.due.percent), p.due.description, p.due.citation,
             p.due.on_total, p.due.with_interest, str(p.amount)) for p in owed]


def run_all(accounts, scheme, order: str) -> list:
    return [penalties_owed(entries=entries, bills=terms, scheme=scheme, through=THROUGH, order=order, waived=waived)
            for entries, terms, waived in accounts]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--save", action="store_true", help="save these answers as the reference")
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--reference", type=Path, default=REFERENCE)
    args = parser.parse_args()

    cases = {}
    for scheme_class, seed, due_days in ((FirstThenMonthly, 13, 20), (MonthlyInterestFebruaryPenalty, 17, 30)):
        preset, params = scheme_params(scheme_class.name)
        cases[preset] = (scheme_class(params), build(seed, due_days=due_days))
    results = {}
    total = 0.0
    for name, (scheme, accounts) in cases.items():
        for order in (PRINCIPAL_FIRST, PENALTIES_FIRST):
            times = []
            for _ in range(args.runs):
                start = time.perf_counter()
                owed = run_all(accounts, scheme, order)
                times.append(time.perf_counter() - start)
            results[(name, order)] = [answers(o) for o in owed]
            charges = sum(len(o) for o in owed)
            total += min(times)
            print(f"{name:16} {order:16} {len(accounts)} accounts, {charges} late charges: "
                  f"best {min(times):.3f} s of {args.runs}")
    print(f"total of the bests: {total:.3f} s")

    if args.save:
        args.reference.write_bytes(pickle.dumps(results))
        print(f"answers saved to {args.reference}")
    elif args.reference.exists():
        reference = pickle.loads(args.reference.read_bytes())
        differ = [(case, i) for case in reference
                  for i, (a, b) in enumerate(zip(reference[case], results[case], strict=False)) if a != b]
        missing = [case for case in reference if len(reference[case]) != len(results.get(case, []))]
        if differ or missing:
            print(f"DIFFERENT from the reference: {len(differ)} accounts, e.g. {differ[:5]}; {missing}")
            sys.exit(1)
        print(f"same answers as {args.reference}, every account")
    else:
        print(f"no reference at {args.reference}: run with --save first")


if __name__ == "__main__":
    main()
