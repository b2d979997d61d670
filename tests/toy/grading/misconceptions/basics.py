"""Misconceptions of the toy set."""
from autograder.grader_side.misconceptions import variant, wrong

ENTRIES = [
    wrong("T1-adds", "Adds six and seven instead of multiplying.", "Six times seven, not six plus seven.",
          "T1_code", "\nt1_answer = 13\n"),
    wrong("T1-in-a-list", "Puts the number in a list.", "Give the number itself.", "T1_code", "\nt1_answer = [42]\n"),
    wrong("T2-identity", "Returns x unchanged.", "Twice x, not x.", "T2_code", "\ndef double(x):\n    return x\n"),
    wrong("T2-squares", "Squares x instead of doubling it.", "Twice x is x + x.", "T2_code",
          "\ndef double(x):\n    return x * x if not isinstance(x, int) or x != 3 else 6\n"),
]
VARIANTS = [
    variant("T1-as-text", "T1_code", '\nt1_answer = "42"\n'),
    variant("T2-adds", "T2_code", "\ndef double(x):\n    return x + x\n"),
]
