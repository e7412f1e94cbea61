"""Sealing a bank account number: Fernet (AES with an HMAC, from ``cryptography``) under a key from the environment
(``BANK_ACCOUNT_KEY``), so the database holds only ciphertext and the last four digits. Without the key, autopay is
not offered: nothing can be sealed or unsealed."""

from django.conf import settings

from core.errors import ApplicationError


def _fernet():
    from cryptography.fernet import Fernet

    key = settings.BANK_ACCOUNT_KEY
    if not key:
        raise ApplicationError("autopay is not set up here: the bank account key (BANK_ACCOUNT_KEY) is not configured",
                               field="account_number")
    return Fernet(key.encode())


def vault_ready() -> bool:
    return bool(settings.BANK_ACCOUNT_KEY)


def seal(number: str) -> str:
    return _fernet().encrypt(number.encode()).decode()


def unseal(token: str) -> str:
    from cryptography.fernet import InvalidToken

    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ApplicationError("a sealed bank account number does not open with the configured key (was "
                               "BANK_ACCOUNT_KEY changed?)", field="account_number") from None
