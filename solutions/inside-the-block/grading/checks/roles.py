"""Hidden checks for `roles` (C1): one point per quantity, each read from c1_categories."""
from autograder.student_side.checks import check, expect, table_item

from ...student_side.checks.roles import FORM, category
from ..reference import roles as ref


def _expect_category(student, key: str) -> None:
    given = table_item(student.value("c1_categories"), key, "c1_categories", category, FORM)
    expect(given == ref.ANSWERS[key],
           f"c1_categories[{key!r}] is not its category: ask whether training changes it (learned), whether it "
           "is fixed before training starts (config), or whether the forward pass computes it anew for every "
           "input (state)")


@check("C1", points=1, hidden=True, says="c1_categories['n_layers']: the number of blocks N")
def test_C1_n_layers(student):
    _expect_category(student, "n_layers")


@check("C1", points=1, hidden=True, says="c1_categories['norm_statistics']: the mean and standard deviation a "
                                         "LayerNorm takes of a token")
def test_C1_norm_statistics(student):
    _expect_category(student, "norm_statistics")


@check("C1", points=1, hidden=True, says="c1_categories['mlp_weights']: the MLP's matrices W1 and W2")
def test_C1_mlp_weights(student):
    _expect_category(student, "mlp_weights")


@check("C1", points=1, hidden=True, says="c1_categories['residual_adds']: the residual connections, each sublayer's "
                                         "output added back to its input")
def test_C1_residual_adds(student):
    _expect_category(student, "residual_adds")


@check("C1", points=1, hidden=True, says="c1_categories['attention_pattern']: the attention matrix "
                                         "softmax(QK^T / sqrt(d_k) + M)")
def test_C1_attention_pattern(student):
    _expect_category(student, "attention_pattern")


@check("C1", points=1, hidden=True, says="c1_categories['norm_gains']: a LayerNorm's gain and shift")
def test_C1_norm_gains(student):
    _expect_category(student, "norm_gains")


@check("C1", points=1, hidden=True, says="c1_categories['d_ff']: the MLP's hidden width")
def test_C1_d_ff(student):
    _expect_category(student, "d_ff")


@check("C1", points=1, hidden=True, says="c1_categories['mlp_hidden']: the MLP's hidden activations")
def test_C1_mlp_hidden(student):
    _expect_category(student, "mlp_hidden")


@check("C1", points=1, hidden=True, says="c1_categories['attention_projections']: W_Q, W_K, W_V and W_O")
def test_C1_attention_projections(student):
    _expect_category(student, "attention_projections")


@check("C1", points=1, hidden=True, says="c1_categories['norm_eps']: the epsilon inside a norm's square root")
def test_C1_norm_eps(student):
    _expect_category(student, "norm_eps")


@check("C1", points=1, hidden=True, says="c1_categories['residual_stream']: the stream after block 2 for one prompt")
def test_C1_residual_stream(student):
    _expect_category(student, "residual_stream")


@check("C1", points=1, hidden=True, says="c1_categories['mlp_biases']: the MLP's biases b1 and b2")
def test_C1_mlp_biases(student):
    _expect_category(student, "mlp_biases")
