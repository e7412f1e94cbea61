"""docs/roles.md and accounts/roles.py say the same thing: the table in the doc is the one ``DUTIES`` writes, and
each role's words in it are backed by the permissions ``ROLE_PERMISSIONS`` gives that role."""

from pathlib import Path

import pytest

from accounts.management.commands.roles_docs import roles_doc
from accounts.roles import DUTIES, NO, ROLE_PERMISSIONS, Duty

pytestmark = pytest.mark.citation("policy: roles")
DOC = Path(__file__).resolve().parents[2] / "docs" / "roles.md"


def _view(perm: str) -> bool:
    return perm.split(".", 1)[1].startswith("view_")


def disagreements(duties: list[Duty], roles: dict[str, list[str]]) -> list[str]:
    """Every word of the table the permissions do not back, and every permission that does something no row says."""
    said = []
    for duty in duties:
        for role, words in zip(roles, duty.words, strict=True):
            held = set(roles[role]) & set(duty.perms)
            if words == NO and held:
                said.append(f"{duty.what!r}: {role} is '—' but holds {sorted(held)}")
            elif words.startswith("read") and (not held or not all(_view(p) for p in held)):
                said.append(f"{duty.what!r}: {role} only reads, but holds {sorted(held) or 'nothing of it'}")
            elif words != NO and not words.startswith("read") and not any(not _view(p) for p in held):
                said.append(f"{duty.what!r}: {role} may {words!r}, but holds only {sorted(held) or 'nothing of it'}")
    in_rows = {perm for duty in duties for perm in duty.perms}
    for role, perms in roles.items():
        said += [f"{role} holds {perm}, which no row of the table says" for perm in perms
                 if not _view(perm) and perm not in in_rows]
    return said


def test_the_doc_holds_the_table_the_roles_write():
    text = DOC.read_text()
    assert roles_doc(text) == text, "docs/roles.md is behind accounts/roles.py: run manage.py roles_docs --write"


def test_every_word_of_the_table_is_backed_by_the_roles_permissions():
    assert disagreements(DUTIES, ROLE_PERMISSIONS) == []


def test_a_word_the_permissions_do_not_back_is_found():
    """The check itself: a cell claiming too much, one claiming too little, and a permission no row names."""
    duty = Duty("shut-off orders", ("termination.order_terminationcase",), ("issue", "issue"))
    roles = {"Clerk": ["termination.view_terminationcase"],
             "Supervisor": ["termination.order_terminationcase", "fieldwork.cancel_fieldorder"]}
    assert disagreements([duty], roles) == [
        "'shut-off orders': Clerk may 'issue', but holds only nothing of it",
        "Supervisor holds fieldwork.cancel_fieldorder, which no row of the table says"]
    reader = Duty("shut-off orders", ("termination.order_terminationcase",), ("read", NO))
    assert disagreements([reader], {"Clerk": ["termination.order_terminationcase"], "Supervisor": []}) == [
        "'shut-off orders': Clerk only reads, but holds ['termination.order_terminationcase']"]
    none = Duty("shut-off orders", ("termination.order_terminationcase",), (NO, NO))
    assert disagreements([none], {"Clerk": [], "Supervisor": ["termination.order_terminationcase"]}) == [
        "'shut-off orders': Supervisor is '—' but holds ['termination.order_terminationcase']"]
