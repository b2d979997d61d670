"""Hidden PyTorch references for the inside-the-block problem set, one module per lesson concept.

A module whose questions have approximate answers holds ``WINDOWS``: answer variable -> ``Window``."""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Window:
    """An approximate answer is right within ``rtol`` of any of ``right`` (the exact value and the
    other readings the question accepts). ``rounded`` are the lesson's rounded figures and
    ``traps`` the catalogued wrong numbers: the window was chosen to hold every one of the first
    two and none of the traps (tests/test_numbers.py proves it)."""
    right: tuple[float, ...]
    rtol: float
    rounded: tuple[float, ...]
    traps: dict[str, float] = field(default_factory=dict)

    def holds(self, value: float) -> bool:
        return any(abs(value - r) <= self.rtol * abs(r) for r in self.right)
