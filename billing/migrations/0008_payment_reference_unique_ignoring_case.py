from django.db import migrations, models
from django.db.models import Count
from django.db.models.functions import Lower


def refuse_references_differing_only_in_case(apps, schema_editor):
    """The unique key cannot be added over two payments whose references differ only in case; name them,
    so the office can tell the checks apart (a suffix on one reference) before migrating again."""
    Payment = apps.get_model("billing", "Payment")
    clashes = list(Payment.objects.annotate(key=Lower("reference")).values("key").annotate(n=Count("id"))
                   .filter(n__gt=1).values_list("key", flat=True)[:20])
    if clashes:
        references = Payment.objects.annotate(key=Lower("reference")).filter(key__in=clashes).order_by("key", "id")
        listed = "; ".join(f"{p.reference} (payment {p.pk}, {p.paid_on})" for p in references)
        raise RuntimeError("payment references must be unique whatever their case, but these differ only in case: "
                           f"{listed}. Give each payment its own reference, then migrate again.")


class Migration(migrations.Migration):

    dependencies = [
        ("billing", "0007_billing_run_chunk_leases"),
    ]

    operations = [
        migrations.RunPython(refuse_references_differing_only_in_case, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="payment",
            constraint=models.UniqueConstraint(
                Lower("reference"), name="payment_reference_unique_ignoring_case",
                violation_error_message="A payment with this reference, in any case, is already posted."),
        ),
    ]
