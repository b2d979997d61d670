# %% md
# # A toy problem set
#
# Two questions, so the grader's tests can run a whole set (release, both graders, the mutation
# report, feedback and the class report) in seconds. T1 asks for a number, T2 for a function.

# %% code
from student_side import check, ready

# %% md
# ## T1 · A number (2 points)
#
# Set `t1_answer` to six times seven.

# %% solution id=T1_code
### BEGIN SOLUTION
t1_answer = 42
### END SOLUTION

# %% checks T1

# %% md
# ## T2 · A function (3 points)
#
# Write `double(x)`: twice `x`, for a number or a tensor.

# %% solution id=T2_code
def double(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION

# %% checks T2
