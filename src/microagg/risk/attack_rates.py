"""The success rate of an attack and the risk it makes: Wilson score intervals and the
residual of the attack on the original over the attack on the control records.

An attack tried ``n`` times succeeding ``s`` times has the success rate of Wilson's score
interval, centre ``(s + z²/2) / (n + z²)`` and half-width
``z / (n + z²) · sqrt(s (n - s) / n + z²/4)`` (Wilson 1927). The risk is how much more the
attack succeeds on the records the release was made from than on control records it was not
made from, relative to what it could gain: ``(a - c) / (1 - c)``, its error propagated from
both half-widths, clipped to [0, 1] with its interval (Giomi et al. 2023, Anonymeter,
PoPETs 2023(2); Article 29 Working Party, Opinion 05/2014 on anonymisation techniques).
Without control records the risk is the attack's rate itself.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

__all__ = ["AttackRisk", "Rate", "attack_risk", "attacked_count", "wilson"]


@dataclass(frozen=True)
class Rate:
    """A success rate: Wilson's centre ``value`` and its half-width ``error`` over
    ``attacks`` tries of which ``successes`` succeeded (a float when corrected for the
    size of the control, as singling out's is)."""

    value: float
    error: float
    attacks: int
    successes: float


def wilson(attacks: int, successes: float, confidence: float = 0.95) -> Rate:
    """The Wilson score rate of ``successes`` in ``attacks`` tries (module docstring).

    Examples
    --------
    >>> rate = wilson(100, 50)
    >>> round(rate.value, 3), round(rate.error, 3)
    (0.5, 0.096)
    """
    if attacks <= 0:
        return Rate(0.0, 1.0, 0, 0.0)
    z = NormalDist().inv_cdf(0.5 * (1 + confidence))
    z2 = z * z
    spread = max(successes * (attacks - successes) / attacks, 0.0)
    centre = (successes + 0.5 * z2) / (attacks + z2)
    return Rate(centre, z / (attacks + z2) * math.sqrt(spread + 0.25 * z2), attacks,
                successes)


@dataclass(frozen=True)
class AttackRisk:
    """An attack's result: the ``risk`` (clipped to [0, 1]) and its interval ``ci``; the
    rates of the attack on the original records, of the baseline (the same attacker
    guessing at random) and of the attack on the control records (None without them)."""

    risk: float
    ci: tuple[float, float]
    attack: Rate
    baseline: Rate
    control: Rate | None

    def to_dict(self) -> dict[str, Any]:
        """Its JSON form: ``risk``, ``ci`` (two numbers), the three success rates and their
        errors, the number of attacks and of successes of each."""
        control = self.control
        return {
            "risk": self.risk, "ci": list(self.ci),
            "attack_rate": self.attack.value, "attack_rate_error": self.attack.error,
            "baseline_rate": self.baseline.value,
            "baseline_rate_error": self.baseline.error,
            "control_rate": None if control is None else control.value,
            "control_rate_error": None if control is None else control.error,
            "n_attacks": self.attack.attacks, "n_success": self.attack.successes,
            "n_baseline": self.baseline.successes,
            "n_control": None if control is None else control.successes,
        }


def attack_risk(attack: Rate, baseline: Rate, control: Rate | None) -> AttackRisk:
    """The risk of ``attack`` over ``control`` (module docstring).

    Examples
    --------
    >>> guessing = wilson(500, 50)
    >>> risk = attack_risk(wilson(500, 300), guessing, wilson(500, 50))
    >>> 0.4 < risk.risk < 0.6 and risk.ci[0] < risk.risk < risk.ci[1]
    True
    """
    if control is None:
        value, error = attack.value, attack.error
    elif control.value >= 1:
        value, error = 0.0, 1.0
    else:
        room = 1.0 - control.value
        value = (attack.value - control.value) / room
        error = math.hypot(attack.error / room, control.error * (attack.value - 1) / room ** 2)
    clip = lambda x: min(max(x, 0.0), 1.0)  # noqa: E731
    return AttackRisk(clip(value), (clip(value - error), clip(value + error)), attack,
                      baseline, control)


def attacked_count(n_attacks: int, rows: list[int]) -> int:
    """How many records of each table an attack targets: ``n_attacks``, or the rows of the
    smallest of the tables ``rows`` (the originals, and the controls when given). The same
    count for the originals and the controls, so that equal successes make equal rates: over
    fewer tries Wilson's centre lies nearer 1/2, and the risk ``(a - c) / (1 - c)`` would
    read the difference as a leak.

    Examples
    --------
    >>> attacked_count(2000, [160, 40])
    40
    """
    return min(n_attacks, *rows)
