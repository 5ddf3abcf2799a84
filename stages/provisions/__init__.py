"""Provisions of a code read from its text, and the alignment of an older code's provisions to a newer one's."""
