from django.dispatch import Signal

# Sent on commit when readings were recorded (by an import, the API or the admin): ``reading_ids``.
readings_recorded = Signal()
# Sent on commit when usage alerts were raised: ``alert_ids``.
usage_alerts_raised = Signal()
