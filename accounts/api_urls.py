from django.urls import path

from . import api

urlpatterns = [
    path("accounts/", api.AccountList.as_view(), name="api-accounts"),
    path("accounts/<str:account_no>/", api.AccountDetail.as_view(), name="api-account"),
]
