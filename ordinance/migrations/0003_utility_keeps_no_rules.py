from django.db import migrations, models

import ordinance.models


class Migration(migrations.Migration):

    dependencies = [("ordinance", "0002_sections_from_the_utility_row"), ("billing", "0039_utility_moves_to_ordinance")]

    operations = [
        *[migrations.RemoveField(model_name="utility", name=name)
          for name in ("calendar_scheme", "calendar_params", "penalty_scheme", "penalty_params", "termination_params",
                       "backflow_params", "notes", "payment_order", "gl_params")],
        migrations.AddField(model_name="utility", name="rules_token",
                            field=models.CharField(default=ordinance.models._token, editable=False, max_length=32)),
        migrations.AlterField(
            model_name="utility", name="list_floor",
            field=models.DecimalField(
                decimal_places=2, default=__import__("decimal").Decimal("25.00"), max_digits=12,
                help_text="Office policy, not in the ordinance: an account owing less than this is not proposed for a "
                          "shut-off case or the relevy list (the preset's [policy] list_floor, $25.00 unless it says "
                          "otherwise). Lower it to 0.00 to list every amount.",
                verbose_name="floor under shut-off and relevy lists")),
    ]
