"""nbgrader's log made harmless: no escape sequence a submission wrote reaches the TA's terminal.

nbgrader's log carries text a submission controls (a made-up cell's id, a file name, an error's
text, a student id): ``clean_log_records``, installed by the course's ``nbgrader_config.py``, makes
every record of every nbgrader command run in the course folder harmless for the TA's terminal.
"""
from __future__ import annotations

import logging
from typing import Any

from autograder.escape import for_terminal_lines


def clean_log_records() -> None:
    """Make every log record this process creates from now on carry its message, traceback and
    stack without escape sequences or control characters (``escape.for_terminal_lines``; line
    breaks kept). Installed as logging's record factory, not on a handler: nbgrader's applications
    build their handlers anew whenever the log level or format is configured (traitlets), and their
    preprocessors and plugins (nbgrader's own, the late plugin, the collectors) log through loggers
    of their own; every record, whichever logger and handler it goes through, is made here.
    Installing it twice is harmless."""
    make = logging.getLogRecordFactory()
    if getattr(make, "cleans_text", False):
        return

    def cleaned(*args: Any, **kwargs: Any) -> logging.LogRecord:
        return _cleaned(make(*args, **kwargs))

    cleaned.cleans_text = True   # type: ignore[attr-defined]
    logging.setLogRecordFactory(cleaned)


def _cleaned(record: logging.LogRecord) -> logging.LogRecord:
    """``record`` with its message formatted and cleaned (its arguments then dropped), and its
    exception's traceback and stack formatted and cleaned too."""
    try:
        message = record.getMessage()
    except Exception:   # arguments that do not fit the message: logging reports that itself
        return record
    record.msg, record.args = for_terminal_lines(message), None
    if record.exc_info and record.exc_info[0] is not None:
        record.exc_text = for_terminal_lines(logging.Formatter().formatException(record.exc_info))
    if record.stack_info:
        record.stack_info = for_terminal_lines(record.stack_info)
    return record
