"""The toy set's references."""
ANSWER = 42


def double(x):
    return 2 * x
