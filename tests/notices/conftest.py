from tests.remittance.conftest import bank, enrolled  # noqa: F401 - fixtures
