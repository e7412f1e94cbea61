from tests.fee_presets import old_westbury_fees, washingtonville_fees  # noqa: F401
