from django.urls import path

from . import api

urlpatterns = [
    path("devices/", api.DeviceList.as_view(), name="api-backflow-devices"),
    path("devices/<str:serial>/", api.DeviceDetail.as_view(), name="api-backflow-device"),
    path("due/", api.DueList.as_view(), name="api-backflow-due"),
    path("tests/", api.TestCreate.as_view(), name="api-backflow-tests"),
    path("accounts/<str:account_no>/fine/", api.AccountFine.as_view(), name="api-backflow-fine"),
    path("accounts/<str:account_no>/require/", api.AccountRequire.as_view(), name="api-backflow-require"),
]
