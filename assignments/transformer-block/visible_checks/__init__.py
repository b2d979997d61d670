# Copied from the course's grader by `course release`; edit the original, not this copy.
"""The visible checks of this problem set: run `check("<check id>")` in a check cell."""
from visible_checks.bridge import check, ready
