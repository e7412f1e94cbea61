"""REST endpoints for accounts: the list (with search) and one account, with no balances.

An account's statement and anything else that shows what it owes is billing's (``billing/api.py``).
Views are thin and name the model permissions they need (``required_permissions``), as in every app.
"""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api import page_of
from core.schema import OFFSET, paged

from .models import Account
from .selectors import account_get, account_search

VIEW_ACCOUNT = ("accounts.view_account",)


class MeterOut(serializers.Serializer):
    serial = serializers.CharField(read_only=True)
    size = serializers.CharField(read_only=True, help_text='Inches, as on the meter ("5/8", "1 1/2").')
    unit = serializers.CharField(read_only=True, help_text="gal or cf")
    installed_on = serializers.DateField(read_only=True)
    removed_on = serializers.DateField(read_only=True, allow_null=True)


class AccountSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.name", read_only=True)
    owner_address = serializers.CharField(source="owner.mailing_address", read_only=True)
    occupant = serializers.CharField(source="occupant.name", default=None, allow_null=True, read_only=True)
    service_address = serializers.CharField(source="premises.service_address", read_only=True)
    sbl = serializers.CharField(source="premises.sbl", read_only=True)
    meters = serializers.SerializerMethodField()

    class Meta:
        model = Account
        fields = ("account_no", "book", "category", "units", "status", "paperless", "owner", "owner_address",
                  "occupant", "service_address", "sbl", "meters")
        read_only_fields = fields

    @extend_schema_field(MeterOut(many=True))
    def get_meters(self, obj) -> list[dict]:
        # Through the installations' reverse relation: the meters app stands on accounts, not the other way.
        return [{"serial": i.meter.serial, "size": i.meter.size, "unit": i.meter.unit,
                 "installed_on": i.installed_on, "removed_on": i.removed_on}
                for i in obj.installations.select_related("meter").order_by("installed_on")]


class AccountList(APIView):
    required_permissions = {"GET": VIEW_ACCOUNT}

    @extend_schema(operation_id="v1_accounts_list",
                   responses={200: paged(AccountSerializer, "PaginatedAccountList")},
                   parameters=[OpenApiParameter("q", str, description="number, name, address or SBL"), OFFSET])
    def get(self, request):
        page, meta = page_of(request, account_search(q=request.query_params.get("q") or ""))
        return Response({**meta, "results": AccountSerializer(page, many=True).data})


class AccountDetail(APIView):
    required_permissions = {"GET": VIEW_ACCOUNT}

    @extend_schema(responses={200: AccountSerializer})
    def get(self, request, account_no):
        return Response(AccountSerializer(account_get(account_no=account_no)).data)
