"""End-to-end releases: a masked table plus a report of what was done to it."""

from microagg.release.base import Release
from microagg.release.kanonymity import METHODS, microaggregate

__all__ = ["METHODS", "Release", "microaggregate"]
