"""What the grader's results become for people: feedback pages, the instructor's class report,
and the CSV, JSON and Gradescope files."""
