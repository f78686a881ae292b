"""The privacy budget: every split of ε, recorded for the privacy report.

Every split of ε (attributes, statistics, groups) is made by a :class:`Budget`, which records
it in its ledger for the privacy report and never hands out more than the total;
:func:`attribute_budgets` splits one over the protected attributes of a release. The
mechanisms that spend the shares are in :mod:`microagg.release.dp.mechanisms` (which re-exports
these names).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from microagg.errors import InputError, PrivacyError
from microagg.options import Calibration, parse

__all__ = ["MAX_EPSILON", "Budget", "attribute_budgets", "check_epsilon"]

# Shares of a split are scaled down by this factor so that their float sum never exceeds ε.
_SPLIT_SAFETY = 1 - 1e-12

MAX_EPSILON = 1e9
"""The largest ε a budget takes: far beyond any meaningful guarantee (e^ε bounds nothing
long before), and below the point where its shares and the noise grid lose precision."""


def check_epsilon(epsilon: float) -> float:
    """``epsilon`` as a float, refusing one that is not positive and finite or that exceeds
    :data:`MAX_EPSILON`."""
    epsilon = float(epsilon)
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"epsilon must be a positive number, got {epsilon}")
    if epsilon > MAX_EPSILON:
        raise InputError(f"epsilon = {epsilon:g} is above {MAX_EPSILON:g}: a guarantee of "
                         f"e^{epsilon:g} protects nothing, and the noise computations lose "
                         "their precision")
    return epsilon


@dataclass
class Budget:
    """A privacy budget ε, split in named parts by sequential composition.

    ``set_aside`` spends a given amount first (on a step that runs before the release, such as
    clipping the domains); ``split`` then spends all that is left on named shares proportional
    to the weights. The ledger keeps every part for the privacy report. The parts never sum to
    more than ε, and a spent budget cannot be split again.
    """

    epsilon: float
    ledger: list[dict[str, Any]] = field(default_factory=list)
    exhausted: bool = False
    aside: float = 0.0  # spent by set_aside before the split

    def __post_init__(self) -> None:
        self.epsilon = check_epsilon(self.epsilon)

    @property
    def spent(self) -> float:
        return math.fsum(entry["epsilon"] for entry in self.ledger)

    @property
    def remaining(self) -> float:
        """What ``split`` will spend: ε less what was set aside."""
        return self.epsilon - self.aside

    def set_aside(self, weights: Mapping[str, float], amount: float, reason: str
                  ) -> dict[str, float]:
        """Spend ``amount`` (less than what remains) on the named parts, proportionally to
        their weights, before the budget is split."""
        if not weights or any(not (w > 0 and math.isfinite(w)) for w in weights.values()):
            raise InputError("budget weights must be positive numbers")
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        if not (0 < amount < self.remaining):
            raise InputError(f"cannot set aside {amount:g} of a budget with "
                             f"{self.remaining:g} left")
        total = math.fsum(weights.values())
        shares = {name: amount * w / total * _SPLIT_SAFETY for name, w in weights.items()}
        for name, share in shares.items():
            self.ledger.append({"part": name, "epsilon": share, "reason": reason})
        self.aside += amount
        return shares

    def split(self, weights: Mapping[str, float], reason: str = "") -> dict[str, float]:
        """Spend what remains of the budget on the named parts, proportionally to their
        weights."""
        if not weights:
            raise InputError("nothing to split the budget over")
        if any(not (w > 0 and math.isfinite(w)) for w in weights.values()):
            raise InputError("budget weights must be positive numbers")
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        self.exhausted = True
        total = math.fsum(weights.values())
        shares = {name: self.remaining * w / total * _SPLIT_SAFETY
                  for name, w in weights.items()}
        for name, share in shares.items():
            self.ledger.append({"part": name, "epsilon": share, "reason": reason})
        if self.spent > self.epsilon:  # cannot happen with the safety factor; checked anyway
            raise PrivacyError("budget split exceeds epsilon")
        return shares

    def split_part(self, part: str, weights: Mapping[str, float], reason: str
                   ) -> dict[str, float]:
        """Split the share already given to ``part`` further, proportionally to the weights
        (sequential composition inside it): its ledger entry is replaced by the sub-parts,
        named "part: name", so the ledger still sums to at most ε."""
        entries = [e for e in self.ledger if e["part"] == part and "times" not in e]
        if len(entries) != 1:
            raise PrivacyError(f"no unsplit budget part named '{part}'")
        if not weights or any(not (w > 0 and math.isfinite(w)) for w in weights.values()):
            raise InputError("budget weights must be positive numbers")
        entry = entries[0]
        position = self.ledger.index(entry)
        total = math.fsum(weights.values())
        shares = {name: entry["epsilon"] * w / total * _SPLIT_SAFETY
                  for name, w in weights.items()}
        self.ledger[position:position + 1] = [
            {"part": f"{part}: {name}", "epsilon": share, "reason": reason}
            for name, share in shares.items()]
        if self.spent > self.epsilon:  # cannot happen with the safety factor; checked anyway
            raise PrivacyError("budget split exceeds epsilon")
        return shares

    def per_group(self, part: str | None, epsilon: float, groups: int, reason: str) -> float:
        """Divide the ``epsilon`` of ledger entry ``part`` equally over ``groups`` queries
        composed sequentially (one per cluster when one changed record may change every
        cluster, 000 eq. 6) and return each one's share; the ledger entry records the
        division. ``part`` None: ``epsilon`` is not a ledger entry of its own (the paper
        calibration's full ε, recorded as reused)."""
        if groups < 1:
            raise InputError(f"cannot divide a budget over {groups} groups")
        share = epsilon / groups
        if part is not None:
            entries = [e for e in self.ledger if e["part"] == part]
            if len(entries) != 1 or not math.isclose(entries[0]["epsilon"], epsilon):
                raise PrivacyError(f"no budget part '{part}' of epsilon {epsilon:g}")
            entries[0].update({"divided_into": int(groups), "each": share,
                               "division": reason})
        return share

    def reuse(self, part: str, times: int, reason: str) -> float:
        """Spend the whole ε ``times`` times over (paper 000's baseline): the privacy loss is
        then times · ε, which the ledger records. Returns ε."""
        if self.exhausted:
            raise PrivacyError("the privacy budget is already spent")
        if self.aside:
            raise PrivacyError("the paper calibration spends the whole epsilon on every "
                               "attribute; nothing can be set aside before it")
        self.exhausted = True
        self.ledger.append({"part": part, "epsilon": self.epsilon, "times": int(times),
                            "total": self.epsilon * int(times), "reason": reason})
        return self.epsilon


def attribute_budgets(budget: Budget, numeric: Sequence[str], categorical: Sequence[str],
                      calibration: Calibration | str, reason: str
                      ) -> tuple[float, dict[str, float]]:
    """Split ``budget`` over the protected attributes of a release: the ε of the numeric block
    (``correct``) or of each numeric attribute (the others), and the ε of each categorical
    attribute.

    ``correct``: one share per attribute; the numeric block is one vector query whose L1
    sensitivity sums the attributes' (000 §4), so the release is ε-DP.
    ``per-attribute``: ε/m for every attribute, each numeric one a query of its own with its
    own width: ε-DP too, with less noise relative to its width on every attribute narrower than
    the average (see docs/algorithms.md).
    ``paper``: every attribute spends the full ε, as in paper 000's experiments (§5); the
    ledger records the reuse and the release is (m·ε)-DP for m attributes.
    """
    calibration = parse(Calibration, calibration, "calibration")
    if calibration is Calibration.PAPER:
        full = budget.reuse("every attribute, in full (paper calibration)",
                            len(numeric) + len(categorical),
                            "as in the experiments of Soria-Comas et al. (2014)")
        return full, {name: full for name in categorical}
    if calibration is Calibration.PER_ATTRIBUTE:
        shares = budget.split({name: 1.0 for name in (*numeric, *categorical)}, reason)
        return (shares[numeric[0]] if numeric else 0.0,
                {name: shares[name] for name in categorical})
    block = "numeric block (" + ", ".join(numeric) + ")"
    weights = {**({block: float(len(numeric))} if numeric else {}),
               **{name: 1.0 for name in categorical}}
    shares = budget.split(weights, reason)
    return shares.get(block, 0.0), {name: shares[name] for name in categorical}
