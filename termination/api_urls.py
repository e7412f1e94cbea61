from django.urls import path

from . import api

urlpatterns = [
    path("cases/", api.CaseList.as_view(), name="api-termination-cases"),
    path("cases/<str:number>/", api.CaseDetail.as_view(), name="api-termination-case"),
    path("cases/<str:number>/request/", api.CaseRequest.as_view(), name="api-termination-request"),
    path("cases/<str:number>/shutoff/", api.CaseShutoff.as_view(), name="api-termination-shutoff"),
    path("delinquent/", api.DelinquentList.as_view(), name="api-termination-delinquent"),
]
