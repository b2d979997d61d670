"""nbgrader's check of the cells' metadata, its JSON schema compiled once per process."""
from __future__ import annotations

import functools
import json
from types import SimpleNamespace
from typing import Any

import jsonschema
from nbformat.notebooknode import NotebookNode
from nbgrader import preprocessors as nbgrader_preprocessors
from nbgrader.nbgraderformat import common as nbgrader_format


class CheckCellMetadata(nbgrader_preprocessors.CheckCellMetadata):
    """nbgrader's check of the cells' nbgrader metadata, with its JSON schema checked and compiled
    once per process (``jsonschema.validate``, which nbgrader calls for every cell, does both again
    each time: a quarter of the grader's time in ``nbgrader autograde``)."""

    def preprocess(self, nb: NotebookNode, resources: dict[str, Any]) -> tuple[NotebookNode, dict[str, Any]]:
        original = nbgrader_format.jsonschema
        nbgrader_format.jsonschema = SimpleNamespace(validate=_validate)
        try:
            return super().preprocess(nb, resources)
        finally:
            nbgrader_format.jsonschema = original


@functools.lru_cache(maxsize=4)
def _compiled(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


# Metadata found valid, per schema: (schema as JSON, metadata as JSON). Every student's copy of a
# cell has the same metadata, so each is checked once per process; what fails is checked each time.
_VALID: set[tuple[str, str]] = set()
_SCHEMAS: dict[int, tuple[dict[str, Any], str]] = {}   # id(schema) -> (schema, as JSON): nbgrader's few schemas


def _validate(instance: object, schema: dict[str, Any]) -> None:
    known = _SCHEMAS.get(id(schema))
    if known is None or known[0] is not schema:
        known = _SCHEMAS[id(schema)] = (schema, json.dumps(schema, sort_keys=True))
    key = (known[1], json.dumps(instance, sort_keys=True, default=repr))
    if key in _VALID:
        return
    _compiled(known[1]).validate(instance)
    if len(key[1]) < 4096 and len(_VALID) < 100_000:
        _VALID.add(key)
