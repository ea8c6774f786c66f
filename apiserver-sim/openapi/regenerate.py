#!/usr/bin/env python3
"""Regenerates patch-strategies.json: the strategic merge patch metadata of the Kubernetes
API (the `x-kubernetes-patch-strategy` and `x-kubernetes-patch-merge-key` extensions of its
OpenAPI v3 schemas), read from the OpenAPI documents a Kubernetes source tree publishes in
`api/openapi-spec/v3/`.

    python3 apiserver-sim/openapi/regenerate.py KUBERNETES_SOURCE_DIR VERSION

KUBERNETES_SOURCE_DIR is a checkout of github.com/kubernetes/kubernetes at the release
tag (`git clone --depth 1 --branch v1.36.2 https://github.com/kubernetes/kubernetes`);
VERSION names it in the output (`v1.36.2`).

Kept: every kind (its `apiVersion/Kind` and schema name) and, of every schema, the fields
that carry a patch extension or lead to a schema that has one: each with its `type` (array
or object), the schema name its value (`$ref`), items (`items`) or map values
(`additionalProperties`) refer to, and its patch extensions. Nothing else of the documents
(descriptions, scalar fields) is kept.
"""
import glob
import json
import os
import sys

PATCH_KEYS = ("x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key")


def ref_of(schema):
    """The schema name a field refers to: `$ref` or the `$ref` of an `allOf`."""
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    for part in schema.get("allOf", []):
        if "$ref" in part:
            return part["$ref"].rsplit("/", 1)[-1]
    return None


def field_shape(field):
    """(shape, target): how a field refers to another schema, if it does."""
    if field.get("type") == "array":
        return "items", ref_of(field.get("items"))
    if isinstance(field.get("additionalProperties"), dict):
        return "additionalProperties", ref_of(field["additionalProperties"])
    return "$ref", ref_of(field)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, version = sys.argv[1], sys.argv[2]
    schemas = {}
    for path in sorted(glob.glob(os.path.join(source, "api/openapi-spec/v3/*.json"))):
        with open(path) as f:
            schemas.update(json.load(f).get("components", {}).get("schemas", {}))
    if not schemas:
        sys.exit(f"no OpenAPI v3 documents under {source}/api/openapi-spec/v3")

    def patched(field):
        return any(k in field for k in PATCH_KEYS)

    # The schemas that matter: those with a patch extension, and those that lead to one.
    matter = {n for n, s in schemas.items() if any(patched(f) for f in s.get("properties", {}).values())}
    grew = True
    while grew:
        grew = False
        for name, schema in schemas.items():
            if name in matter:
                continue
            if any(field_shape(f)[1] in matter for f in schema.get("properties", {}).values()):
                matter.add(name)
                grew = True

    definitions = {}
    for name in sorted(matter):
        fields = {}
        for field_name, field in sorted(schemas[name].get("properties", {}).items()):
            shape, target = field_shape(field)
            if not patched(field) and target not in matter:
                continue
            out = {}
            if field.get("type") in ("array", "object"):
                out["type"] = field["type"]
            # A merged list names its items' schema even when that has nothing of its own.
            if target in matter or (patched(field) and target):
                out[shape] = target
            for k in PATCH_KEYS:
                if k in field:
                    out[k] = field[k]
            fields[field_name] = out
        definitions[name] = fields

    kinds = {}
    for name, schema in schemas.items():
        for gvk in schema.get("x-kubernetes-group-version-kind", []):
            group, ver, kind = gvk["group"], gvk["version"], gvk["kind"]
            if name in matter:
                kinds[f"{group}/{ver}/{kind}" if group else f"{ver}/{kind}"] = name

    lines = ["{", f' "kubernetes": {json.dumps(version)},', ' "kinds": {']
    lines += [f"  {json.dumps(k)}: {json.dumps(v)}," for k, v in sorted(kinds.items())]
    lines[-1] = lines[-1].rstrip(",")
    lines += [" },", ' "definitions": {']
    lines += [f"  {json.dumps(k)}: {json.dumps(v, sort_keys=True)}," for k, v in definitions.items()]
    lines[-1] = lines[-1].rstrip(",")
    lines += [" }", "}"]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "patch-strategies.json")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {out}: {len(kinds)} kinds, {len(definitions)} schemas, from {version}")


main()
