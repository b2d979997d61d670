# %% [markdown]
# # A toy problem set
#
# Two questions, so the grader's tests can run a whole set (release, both graders, the mutation
# report, feedback and the class report) in seconds. T1 asks for a number, T2 for a function.

# %%
from student_side import check, ready

# %% [markdown]
# ## T1 · A number (2 points)
#
# Set `t1_answer` to six times seven.

# %% role="solution" grade_id="T1_code"
### BEGIN SOLUTION
t1_answer = 42
### END SOLUTION

# %% role="check" grade_id="T1_is_a_number"
# T1_is_a_number · 1 point · t1_answer is a number
check('T1_is_a_number')

# %% role="check" grade_id="T1_value"
# T1_value · 1 point · hidden, runs when your notebook is graded: t1_answer is six times seven
ready('t1_answer')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('toy', 'T1_value')
### END HIDDEN TESTS

# %% [markdown]
# ## T2 · A function (3 points)
#
# Write `double(x)`: twice `x`, for a number or a tensor.

# %% role="solution" grade_id="T2_code"
def double(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION

# %% role="check" grade_id="T2_small"
# T2_small · 1 point · double(3) is 6
check('T2_small')

# %% role="check" grade_id="T2_reference"
# T2_reference · 2 points · hidden, runs when your notebook is graded: double matches the reference on negative numbers and a tensor
ready('double')
### BEGIN HIDDEN TESTS
from autograder.grader_side.in_kernel import hidden_check
hidden_check('toy', 'T2_reference')
### END HIDDEN TESTS
