"""``/api/v1/``: staff-only (session or token), errors as ``{"errors": [{"field", "message"}]}``."""

from django.urls import path

from billing import api as billing_api

urlpatterns = [
    path("accounts/", billing_api.AccountList.as_view(), name="api-accounts"),
    path("accounts/<str:account_no>/", billing_api.AccountDetail.as_view(), name="api-account"),
    path("accounts/<str:account_no>/statement/", billing_api.StatementView.as_view(), name="api-statement"),
    path("accounts/<str:account_no>/charges/", billing_api.AccountCharges.as_view(), name="api-account-charges"),
    path("readings/", billing_api.ReadingCreate.as_view(), name="api-readings"),
    path("readings/bulk/", billing_api.ReadingBulkCreate.as_view(), name="api-readings-bulk"),
    path("payments/", billing_api.PaymentListCreate.as_view(), name="api-payments"),
    path("bills/", billing_api.BillList.as_view(), name="api-bills"),
    path("bills/<str:number>/", billing_api.BillDetail.as_view(), name="api-bill"),
    path("bills/<str:number>/pdf/", billing_api.BillPdf.as_view(), name="api-bill-pdf"),
    path("billing-runs/", billing_api.BillingRunListCreate.as_view(), name="api-billing-runs"),
    path("billing-runs/<int:pk>/", billing_api.BillingRunDetail.as_view(), name="api-billing-run"),
    path("penalty-runs/", billing_api.PenaltyRunCreate.as_view(), name="api-penalty-runs"),
    path("fees/", billing_api.FeeList.as_view(), name="api-fees"),
]
