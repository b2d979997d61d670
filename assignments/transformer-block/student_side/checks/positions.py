"""Checks for `positions`: why attention needs positions and the sinusoidal table (C1)."""
import math

import numpy as np

from . import as_texts, check, expect, expect_close

# The form each answer variable must have to be graded (the TODO boxes say it).
FORMS = {
    "q1_sentences": lambda v: as_texts(v, 2, "q1_sentences", "sentence"),
}


@check("C1", points=2, hidden=False,
       says="sinusoidal_positions(4, 8) has shape (4, 8) and matches published values of rows 0, 1 and 3")
def test_C1_positions_example(student):
    pe = student.call("sinusoidal_positions", 4, 8)
    expect(isinstance(pe, np.ndarray) and pe.shape == (4, 8), "sinusoidal_positions(4, 8) must return a (4, 8) tensor")
    expect_close(pe[0], [0, 1] * 4, "row 0 (position 0): sin(0) = 0 in even columns, cos(0) = 1 in odd ones")
    expect_close(pe[1, :4], [math.sin(1), math.cos(1), math.sin(0.1), math.cos(0.1)],
                 "row 1, columns 0-3 (frequencies 1 and 1/10000^(2/8) = 0.1)")
    expect_close(pe[3, 6:], [math.sin(0.003), math.cos(0.003)], "row 3, columns 6-7 (frequency 1/10000^(6/8))")
