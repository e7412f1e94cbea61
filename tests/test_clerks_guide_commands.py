"""The clerk's guide's table of commands, held to the commands: every command it names exists, every option it shows
is one the command takes (as ``--help`` lists them), and every command takes ``--date`` but the one the guide
names."""

import re
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "clerks-guide.md"


def guide_commands() -> list[str]:
    text = GUIDE.read_text()
    table = text.split("| command | does |\n|---|---|\n", 1)[1].split("\n\n", 1)[0]
    lines = []
    for row in table.splitlines():
        first = row.split(" | ", 1)[0].removeprefix("| ")
        lines += re.findall(r"`([a-z_0-9]+(?: [^`]*)?)`", first)
    return lines


COMMANDS = guide_commands()
WITHOUT_DATE = {"preset_check"}  # "Every command in this table but `preset_check` … accepts `--date`"


def parser_of(name: str):
    return load_command_class(get_commands()[name], name).create_parser("manage.py", name)


def test_the_table_is_read():
    assert len(COMMANDS) >= 15 and "run_billing" in COMMANDS
    said = " ".join(GUIDE.read_text().split())
    assert "Every command in this table but `preset_check`, which only reads a file, accepts `--date" in said


@pytest.mark.parametrize("line", COMMANDS)
def test_each_command_line_of_the_guide_is_what_the_command_takes(line):
    name, *words = line.split()
    assert name in get_commands(), f"{name}: no such command"
    parser = parser_of(name)
    options = {option for action in parser._actions for option in action.option_strings}
    shown = {word.strip("[]").split("=")[0] for word in words if word.strip("[]").startswith("--")}
    assert shown <= options, f"{name} --help has no {sorted(shown - options)}"
    assert ("--date" in options) == (name not in WITHOUT_DATE), f"{name}: --date is not as the guide says"
    assert parser.format_help()
