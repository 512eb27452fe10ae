"""Packet views for people, one module per family (registered in ``dcx.cli._views.VIEWS``)."""
