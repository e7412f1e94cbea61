"""The suite's own scheduling: under pytest-xdist each process starts with its share of the long tests
(``tests/conftest.py`` ``long_tests_first``), cut where xdist's work-stealing scheduler cuts the collection."""

import pytest

from tests.conftest import long_tests_first


class Item:
    def __init__(self, name: str, seconds: float | None = None):
        self.name, self.mark = name, (pytest.mark.long(seconds).mark if seconds else None)

    def get_closest_marker(self, name):
        return self.mark if name == "long" else None

    def __repr__(self):
        return self.name


def slices(items, workers):
    """The slices xdist hands out: each process ``len(pending) // processes left`` in turn."""
    out, pending = [], list(items)
    for left in range(workers, 0, -1):
        size = len(pending) // left
        out.append(pending[:size])
        del pending[:size]
    return out


def test_each_process_starts_with_its_share_of_the_long_tests_longest_first():
    items = [Item(f"t{n}") for n in range(20)]
    items[17], items[5], items[19], items[11] = Item("walk", 400), Item("axe", 230), Item("fuzz", 150), Item("x", 60)
    ordered = long_tests_first(items, workers=3)
    assert sorted(map(repr, ordered)) == sorted(map(repr, items))
    firsts = [[item.name for item in part if item.mark] for part in slices(ordered, 3)]
    assert firsts == [["walk"], ["axe"], ["fuzz", "x"]]
    assert [part[0].name for part in slices(ordered, 3)] == ["walk", "axe", "fuzz"]
    rest = [item.name for item in ordered if not item.mark]
    assert rest == [item.name for item in items if not item.mark]  # the others keep their order


def test_one_process_keeps_the_collection_as_it_is():
    items = [Item("a"), Item("b", 100)]
    assert long_tests_first(items, workers=1) == items
