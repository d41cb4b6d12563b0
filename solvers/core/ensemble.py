"""What every family's ensemble shares: stepping all members that have not diverged, by a step
count or to an end time (the landing rule), with the arguments checked once. A family's class
provides `model`, `size`, `t` (the members' times), `member(m)` and `_run(n, t_end)`."""
from __future__ import annotations

import abc

import numpy as np

from .errors import ParameterError


class EnsembleBase(abc.ABC):
    def step(self, n: int = 1) -> None:
        """n more steps of every member that has not diverged."""
        if not (isinstance(n, (int, np.integer)) and n >= 0):
            raise ParameterError(f"{self.model}: ensemble step count {n!r}; allowed: int >= 0")
        self._run(int(n), None)

    def advance(self, t_end: float) -> None:
        """Every member that has not diverged to t == t_end exactly (the landing rule)."""
        t_end = float(t_end)
        if not np.isfinite(t_end) or (self.size and t_end < self.t.min()):
            raise ParameterError(f"{self.model}: ensemble end time {t_end}; allowed: finite, "
                                 f">= every member's time (min {self.t.min():g})")
        self._run(None, t_end)

    def quantities(self, m: int) -> dict[str, float]:
        """Member m's quantities: member(m).quantities() (a family may override it with the
        same numbers got without installing the member)."""
        return self.member(m).quantities()

    def all_quantities(self) -> list[dict[str, float]]:
        """Every member's quantities, [quantities(m) for each m] (a family may fetch them from
        the device at once)."""
        return [self.quantities(m) for m in range(self.size)]

    @abc.abstractmethod
    def _run(self, n, t_end) -> None:
        """n steps (None: to t_end) of every member that has not diverged."""
