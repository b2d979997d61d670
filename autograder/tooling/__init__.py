"""The course team's tools: notebooks from their text form, the release, generated classes,
Gradescope's package, GitHub Classroom's workflow, stock nbgrader for comparisons. Nothing here runs
while a class is graded."""
