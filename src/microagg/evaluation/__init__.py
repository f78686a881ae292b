"""Utility and risk measures, evaluate, the comparison at equal risk (003) and its report,
and the empirical privacy audits."""
