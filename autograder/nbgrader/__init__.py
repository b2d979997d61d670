"""nbgrader's wing: everything that plugs the course into nbgrader, laid out as nbgrader lays out its own.

- ``preprocessors/``: one preprocessor per file; ``preprocessors/__init__.py`` holds the two ordered
  lists ``Autograde`` runs (``SANITIZE``, ``AUTOGRADE``), ``execute.py`` the sandbox in place of ``Execute``.
- ``exporter.py`` (the submitted notebook, read by the one reader's rule), ``files.py`` (the other
  files of a submission, ``timestamp.txt``), ``outputs.py`` (each test cell's verdict as its output),
  ``context.py`` (what a step knows of the course), ``log.py`` (nbgrader's log made harmless).
- ``plugins/``: ``late.py`` (due dates, extensions, the penalty), ``zip_collect.py`` (an LMS's
  download), ``export.py`` (``nbgrader export``'s CSV and Canvas files).
- ``recorder.py``, ``recorder_process.py``, ``lent_gradebook.py``: ``course autograde``'s results
  written into nbgrader's gradebook and ``autograded/`` as ``nbgrader autograde`` writes them.

The course's ``nbgrader_config.py`` names these; below this wing sits ``grader_side`` (the pipeline and
the sandbox), which knows nothing of nbgrader's applications.
"""
