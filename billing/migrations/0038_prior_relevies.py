"""What the previous system had relevied to the tax roll, kept as history."""

import django.db.models.deletion
import djmoney.models.fields
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0006_account_language'),
        ('billing', '0037_standings_water_rents_first'),
    ]

    operations = [
        migrations.CreateModel(
            name='PriorRelevy',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('relevied_on', models.DateField()),
                ('tax_roll', models.CharField(help_text='The roll they were added to, as the old system named it.', max_length=80)),
                ('amount_currency', djmoney.models.fields.CurrencyField(choices=[('USD', 'USD')], default='USD', editable=False, max_length=3)),
                ('amount', djmoney.models.fields.MoneyField(currency_choices=[('USD', 'USD')], decimal_places=2, max_digits=12)),
                ('conversion', models.CharField(help_text='The conversion that brought it over.', max_length=40)),
                ('account', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='prior_relevies', to='accounts.account')),
            ],
            options={
                'ordering': ['-relevied_on', '-id'],
                'constraints': [models.CheckConstraint(condition=models.Q(('amount__gt', 0)), name='prior_relevy_positive')],
            },
        ),
    ]
