"""The course team's tools: notebooks from their text form, the release, the demo class, the
mutation report. Nothing here runs while a class is graded."""
