"""Who may call the REST API (``REST_FRAMEWORK["DEFAULT_PERMISSION_CLASSES"]``).

Kept apart from ``core.api``: DRF imports the permission class while ``rest_framework.views``
is still loading, so this module must not import it.
"""

from django.conf import settings
from rest_framework.permissions import BasePermission


class StaffModelPermissions(BasePermission):
    """Active staff holding the Django model permissions the view names for the method — the ones the
    admin asks for the same work, so a staff role can do through the API what it may do in the admin.

    A view declares them per method: ``required_permissions = {"GET": ("accounts.view_account",)}``;
    HEAD asks what GET does. A method the view implements without declaring it is refused to everyone
    but superusers (who hold every permission), so a forgotten declaration fails closed. A method the
    view does not implement, and OPTIONS, need only staff: the view answers 405 or describes itself.
    """

    def has_permission(self, request, view) -> bool:
        user = request.user
        if not (user and user.is_authenticated and user.is_active and user.is_staff):
            return False
        method = "GET" if request.method == "HEAD" else request.method
        if method == "OPTIONS" or not hasattr(view, method.lower()):
            return True
        required = getattr(view, "required_permissions", {}).get(method)
        return user.is_superuser if required is None else user.has_perms(required)


class StaffUnlessDebug(BasePermission):
    """The API's schema and docs: open while developing (DEBUG on), for active staff only in production."""

    def has_permission(self, request, view) -> bool:
        user = request.user
        return settings.DEBUG or bool(user and user.is_authenticated and user.is_active and user.is_staff)
