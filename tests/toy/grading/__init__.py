"""The toy problem set: two questions, used by the tests to prove the grader serves any set."""
from autograder.grader_side.contract import Question

NOTEBOOKS = ("answers",)
CONCEPTS = ("basics",)
QUESTIONS = (
    Question("T1", "answers", 2, "basics", ("t1_answer",)),
    Question("T2", "answers", 3, "basics", ("double",)),
)
TOPICS = {"basics": "Numbers and functions"}
