"""Languages: a customer reads their papers and pages in their account's language; the office keeps its records
(case timelines, events, refusals it logs) in the site's own language, whoever's request wrote them."""

from django.conf import settings
from django.utils import translation


def office_language():
    """A context in which what is written down is in the office's language (``LANGUAGE_CODE``), for a write a
    customer's request in another language makes."""
    return translation.override(settings.LANGUAGE_CODE)


def customer_language(account):
    """A context in which what is written for ``account``'s customer is in their language."""
    return translation.override(account.language)
