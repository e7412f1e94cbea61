from django.urls import path

from . import api

urlpatterns = [
    path("accounts/<str:account_no>/statement/", api.StatementView.as_view(), name="api-statement"),
    path("accounts/<str:account_no>/charges/", api.AccountCharges.as_view(), name="api-account-charges"),
    path("payments/", api.PaymentListCreate.as_view(), name="api-payments"),
    path("bills/", api.BillList.as_view(), name="api-bills"),
    path("bills/<str:number>/", api.BillDetail.as_view(), name="api-bill"),
    path("bills/<str:number>/pdf/", api.BillPdf.as_view(), name="api-bill-pdf"),
    path("billing-runs/", api.BillingRunListCreate.as_view(), name="api-billing-runs"),
    path("billing-runs/<int:pk>/", api.BillingRunDetail.as_view(), name="api-billing-run"),
    path("penalty-runs/", api.PenaltyRunCreate.as_view(), name="api-penalty-runs"),
    path("fees/", api.FeeList.as_view(), name="api-fees"),
]
