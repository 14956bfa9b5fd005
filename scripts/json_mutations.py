"""Edits of a JSON document for the robustness sweeps (robustness-sweep.py,
python-robustness-sweep.py): every field deleted, or replaced by each of a
list of values."""

import json


def mutations(value, replacements, path=None):
    """(path, replacement) for every field below `value`: "delete" for each
    key of an object, then each of `replacements` for every field (the
    document itself at path [])."""
    path = path or []
    if isinstance(value, dict):
        for key, child in value.items():
            yield path + [key], "delete"
            yield from mutations(child, replacements, path + [key])
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from mutations(child, replacements, path + [i])
    for replacement in replacements:
        yield path, replacement


def edited(document, path, replacement):
    """A copy of `document` with the field at `path` deleted or replaced."""
    copy = json.loads(json.dumps(document))
    parent = copy
    for key in path[:-1]:
        parent = parent[key]
    if replacement == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = replacement
    return copy
