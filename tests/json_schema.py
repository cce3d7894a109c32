"""A small JSON Schema checker for the schemas sheetflow documents (no dependency).

Supports the keywords those schemas use: ``type`` (one or a list; ``integer`` excludes
booleans and non-whole numbers), ``const``, ``enum``, ``properties``, ``required``,
``additionalProperties`` (false or a schema), ``items``, ``minItems``, ``maxItems``,
``minLength``, ``pattern``, ``minimum``, ``maximum``, ``anyOf`` and local ``$ref``
(``#/$defs/name``). An unknown keyword is an error, so a schema never silently checks
less than it says.
"""

from __future__ import annotations

import re
from typing import Any

KNOWN = {"$schema", "$id", "title", "description", "type", "const", "enum", "properties",
         "required", "additionalProperties", "items", "minItems", "maxItems", "minLength",
         "pattern", "minimum", "maximum", "anyOf", "$ref", "$defs"}
_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
}


def errors(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None,
           path: str = "$") -> list[str]:
    """Every place ``value`` breaks ``schema``, as ``path: problem`` lines."""
    root = schema if root is None else root
    unknown = set(schema) - KNOWN
    if unknown:
        return [f"{path}: schema uses unsupported keywords {sorted(unknown)}"]
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/$defs/")
        return errors(value, root["$defs"][name], root, path)
    out: list[str] = []
    if "anyOf" in schema and all(errors(value, s, root, path) for s in schema["anyOf"]):
        out.append(f"{path}: matches none of anyOf")
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            return [*out, f"{path}: {value!r} is not of type {types}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} is not {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} is not one of {schema['enum']}")
    out += _scalar(value, schema, path)
    if isinstance(value, dict):
        out += _object(value, schema, root, path)
    if isinstance(value, list):
        out += _array(value, schema, root, path)
    return out


def _scalar(value: Any, schema: dict[str, Any], path: str) -> list[str]:
    out = []
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            out.append(f"{path}: shorter than {schema['minLength']}")
        if "pattern" in schema and not re.search(schema["pattern"], value):
            out.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if _TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            out.append(f"{path}: {value} < {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            out.append(f"{path}: {value} > {schema['maximum']}")
    return out


def _object(value: dict, schema: dict[str, Any], root: dict, path: str) -> list[str]:
    out = [f"{path}: missing {key!r}" for key in schema.get("required", []) if key not in value]
    props = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        where = f"{path}.{key}"
        if key in props:
            out += errors(item, props[key], root, where)
        elif extra is False:
            out.append(f"{where}: not allowed")
        elif isinstance(extra, dict):
            out += errors(item, extra, root, where)
    return out


def _array(value: list, schema: dict[str, Any], root: dict, path: str) -> list[str]:
    out = []
    if len(value) < schema.get("minItems", 0):
        out.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        out.append(f"{path}: more than {schema['maxItems']} items")
    if "items" in schema:
        for i, item in enumerate(value):
            out += errors(item, schema["items"], root, f"{path}[{i}]")
    return out
