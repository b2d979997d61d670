"""What a problem set's contract is made of: its questions.

Each set declares its own (``solutions/<set>/grading/__init__.py`` ``QUESTIONS``), in the same
terms as its student contract (``solutions/<set>/grading/contract.md``); ``assignment.py`` loads
them with the rest of the set.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Question"]


@dataclass(frozen=True)
class Question:
    id: str
    notebook: str
    points: float
    concept: str
    names: tuple[str, ...]      # what the student defines (the contract's names)
    manual: bool = False
