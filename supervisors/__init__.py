"""Supervision trees on top of ``actors`` (OTP semantics). Being built: see issue 3."""
