import tomllib
from pathlib import Path

from django.db import migrations, models

PRESET_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "presets"


def backflow_from_the_preset_file(apps, schema_editor):
    """An installed preset's backflow rules were Python; they are now its file's [backflow] table: read it in."""
    Utility = apps.get_model("billing", "Utility")
    for utility in Utility.objects.all():
        path = PRESET_DIR / f"{utility.preset}.toml"
        if path.exists():
            data = tomllib.loads(path.read_text(encoding="utf-8"))
            utility.backflow_params = data.get("backflow", {})
            utility.save(update_fields=["backflow_params"])


class Migration(migrations.Migration):

    dependencies = [
        ('billing', '0030_utility_high_usage_factor'),
    ]

    operations = [
        migrations.AddField(
            model_name='utility',
            name='backflow_params',
            field=models.JSONField(blank=True, default=dict, help_text="The preset's [backflow] table: the compliance notices, the fine or fee, and what noncompliance leads to (backflow/policy.py)."),
        ),
        migrations.RunPython(backflow_from_the_preset_file, migrations.RunPython.noop),
    ]
