"""dcx's tests. A package so that the shared helpers import as ``tests.support.<module>``."""
