"""``dcx compare``: provider comparison on a frozen corpus (SPEC §11). See dcx/ops/compare.py."""
