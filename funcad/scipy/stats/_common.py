"""Shared helpers of the distributions: promotion to one float dtype."""
from ..special._basic import _real as promote_inexact  # noqa: F401
