"""The student contract in one place: the questions, what each asks students to define, its
points and notebook, and the tolerances every check compares with.

It mirrors ``shared/spec/transformer-block.md``. The concept order and the tolerances are also
what the student-side checks use, so they are stated there once and read here.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.student_side.checks import ATOL, CONCEPTS, GRAD_ATOL, GRAD_RTOL, RTOL

__all__ = ["ATOL", "CONCEPTS", "GRAD_ATOL", "GRAD_RTOL", "QUESTIONS", "Question", "RTOL"]


@dataclass(frozen=True)
class Question:
    id: str
    notebook: str
    points: float
    concept: str
    names: tuple[str, ...]      # what the student defines (the contract's names)
    manual: bool = False


QUESTIONS = {q.id: q for q in (
    Question("C1", "concepts", 8, "positions", ("q1_sentences", "permutes_with_input", "sinusoidal_positions")),
    Question("C2", "concepts", 2, "depth", ("q2_residual_cousin",)),
    Question("C3", "concepts", 2, "params", ("q3_most_weights",)),
    Question("C4", "concepts", 6, "params", ("attention_weights", "mlp_weights", "q4_ratio")),
    Question("C5", "concepts", 3, "norms", ("q5_layer_norm_u",)),
    Question("C6", "concepts", 5, "blocks", ("q6_decoder_sublayers", "q6_gpt_drops")),
    Question("C7", "concepts", 4, "blocks", ("q7_2017_paper", "q7_modern_default")),
    Question("C8", "concepts", 4, "mlp", (), manual=True),
    Question("B1", "build", 8, "norms", ("layer_norm",)),
    Question("B2", "build", 5, "norms", ("rms_norm",)),
    Question("B3", "build", 10, "norms", ("layer_norm_backward",)),
    Question("B4", "build", 6, "mlp", ("MLP",)),
    Question("B5", "build", 7, "mlp", ("SwiGLU", "swiglu_hidden_dim")),
    Question("B6", "build", 10, "blocks", ("PreNormBlock",)),
    Question("B7", "build", 8, "blocks", ("PostNormBlock",)),
    Question("B8", "build", 10, "params", ("count_parameters",)),
    Question("B9", "build", 6, "depth", ("stack_forward", "residual_jacobian")),
)}
