"""What a preset's rules would do, shown before and after it is installed: ``preset_check --bills`` prints it and the
Utility page shows it. Apps register what they can say (billing: the bills of a ladder of usages and a late charge
through a year); each says it as tables of plain words, which this module lays out for a terminal or a page."""

from collections.abc import Callable
from dataclasses import dataclass

from django.utils.html import format_html, format_html_join


@dataclass(frozen=True)
class PreviewTable:
    title: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]]
    numeric: frozenset[int] = frozenset()  # the columns of amounts and gallons, set right


Preview = Callable[[dict | None], list[PreviewTable]]
_previews: list[Preview] = []


def preview_register(preview: Preview) -> None:
    """``preview(data)``: the tables of what a preset's tables (``data``, a checked file's) would do; ``data`` None
    asks it of the installed preset."""
    if preview not in _previews:
        _previews.append(preview)


def preset_preview(data: dict | None) -> list[PreviewTable]:
    return [table for preview in _previews for table in preview(data)]


def preview_lines(tables: list[PreviewTable]) -> list[str]:
    """The tables as plain lines, each column as wide as its widest cell."""
    out = []
    for table in tables:
        widths = [max(len(str(cell)) for cell in column) for column in zip(table.headers, *table.rows, strict=True)]

        def line(cells, widths=widths, numeric=table.numeric):
            return "  ".join(str(c).rjust(w) if i in numeric else str(c).ljust(w)
                             for i, (c, w) in enumerate(zip(cells, widths, strict=True))).rstrip()

        out += ["", table.title, line(table.headers)] + [line(row) for row in table.rows]
    return out


def preview_html(tables: list[PreviewTable]):
    """The tables as HTML tables, each with its title as caption and its headers scoped."""
    def cells(row, numeric):
        return format_html_join("", "{}", ((format_html("<td class='numeric'>{}</td>", cell) if i in numeric
                                             else format_html("<td>{}</td>", cell),) for i, cell in enumerate(row)))

    return format_html_join("", "<table class='preview'><caption>{}</caption><thead><tr>{}</tr></thead>"
                                "<tbody>{}</tbody></table>",
                            ((t.title, format_html_join("", "<th scope='col'>{}</th>", ((h,) for h in t.headers)),
                              format_html_join("", "<tr>{}</tr>", ((cells(r, t.numeric),) for r in t.rows)))
                             for t in tables))
