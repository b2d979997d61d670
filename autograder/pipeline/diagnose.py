"""Step 6: name the misconception behind a lost point, when the catalogue knows it.

(Filled in by the misconception catalogue.)
"""


def run(sub, env):
    return None
