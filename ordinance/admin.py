"""The Utility page: who the installation bills for, the office's settings, and the installed preset's tables with
every dated version and each install of the file."""

from django.contrib import admin
from django.utils.html import format_html, format_html_join

from core.dates import fmt_day

from .models import BEGINNING, InstalledPreset, Section, Utility
from .preview import preset_preview, preview_html
from .selectors import section_params


def _since(day) -> str:
    return "from the beginning" if day == BEGINNING else f"from {fmt_day(day)}"


@admin.register(Utility)
class UtilityAdmin(admin.ModelAdmin):
    list_display = ("name", "preset", "demo_site", "installed")
    # Set by `setup_utility PRESET --demo N`, not by a click: a real site billed on sample rates by mistake
    # is worse than a trip to the command line.
    exclude = ("is_demo_site",)
    readonly_fields = ("preset", "demo_site", "payment_policy", "rules_in_force", "what_it_bills", "installs",
                       "text_discrepancies")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Installed")
    def installed(self, obj):
        last = InstalledPreset.objects.order_by("-version").first()
        return f"v{last.version}, {fmt_day(last.installed_at.date())}" if last else "—"

    @admin.display(description="Demo/training site")
    def demo_site(self, obj):
        if obj.is_demo_site:
            return "Yes: billing on the preset's sample rates is allowed (set by setup_utility --demo)."
        return ("No: a real site. Billing refuses while the rate schedule in force is the preset's sample one, "
                "unless a run accepts the sample rates (recorded on the run); setup_utility "
                f"{obj.preset} --demo N marks a demo/training site.")

    @admin.display(description="What a payment pays first")
    def payment_policy(self, obj):
        order = section_params("policy", installed=obj).get("payment_order", "principal_first")
        words = {"principal_first": "Principal first: charges of every bill, oldest first, then penalties",
                 "penalties_first": "Penalties first: each bill's penalties, then its charges, oldest bill first"}
        return format_html(
            "<p><strong>{}</strong></p><p>Office policy, not in the ordinance: "
            "penalties are computed on unpaid principal, and paying principal first keeps an unpaid penalty "
            "from turning into principal that draws more penalties. Set in the preset file "
            "(<code>[policy] payment_order</code>) and installed with <code>setup_utility {}</code>.</p>",
            words.get(order, order), obj.preset)

    @admin.display(description="the preset's tables, each version with the day it took effect")
    def rules_in_force(self, obj):
        rows = Section.objects.exclude(table="note").order_by("table", "-effective_on").select_related("installed")
        return format_html(
            "<table><thead><tr><th scope='col'>table</th><th scope='col'>in force</th><th scope='col'>scheme</th>"
            "<th scope='col'>installed</th></tr></thead><tbody>{}</tbody></table>"
            "<p>An amendment is installed with the day it takes effect: <code>setup_utility {} --effective "
            "YYYY-MM-DD</code> (or <code>effective_on</code> in the file); bills, late charges, notices and case "
            "steps each use the version in force on their own date.</p>",
            format_html_join("", "<tr><td>[{}]</td><td>{}</td><td>{}</td><td>v{} ({})</td></tr>",
                             ((row.table, _since(row.effective_on),
                               row.params.get("scheme", "—") if isinstance(row.params, dict) else "—",
                               row.installed.version, row.installed.source) for row in rows)) or "—",
            obj.preset)

    @admin.display(description="what the installed rules bill")
    def what_it_bills(self, obj):
        tables = preset_preview(None)
        return format_html(
            "<p>Each class of account for a ladder of usages (0, the allowance, each block's edges, twice the last "
            "bound) and one late charge through a year, each line with its section: hold it beside the chapter "
            "(<code>preset_check FILE --bills</code> prints the same for a file before it is installed).</p>"
            "<div class='preview-tables'>{}</div>", preview_html(tables)) if tables else "—"

    @admin.display(description="installs of the preset file")
    def installs(self, obj):
        return format_html_join(
            "\n", "<p>v{} {} — {} (SHA-256 {}…): {}</p>",
            ((row.version, fmt_day(row.installed_at.date()), row.source, row.sha256[:12],
              "; ".join(row.changes[:8]) + (" …" if len(row.changes) > 8 else ""))
             for row in InstalledPreset.objects.order_by("-version")[:20])) or "—"

    @admin.display(description="where the preset departs from the printed text")
    def text_discrepancies(self, obj):
        return format_html_join("\n", "<p><strong>{}</strong>: {}</p>",
                                ((n.get("citation", ""), n.get("text", ""))
                                 for n in section_params("note", installed=obj))) or "—"


