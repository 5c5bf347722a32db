#!/usr/bin/env python3
"""Builds the seed inputs of every fuzz target from the conformance corpus and tests/fuzz/seeds.

    make_seeds.py CONFORMANCE_DIR OUT_DIR

OUT_DIR/<target>/ receives one file per seed: commit files (action_file), their schema strings
(schema_json), checkpoint Parquet files up to 256 KiB (checkpoint), deletion vectors as the
deletion_vector target frames them (inline descriptors from the logs, DV files with their
descriptors' size and offset, bare bitmaps), partition values with their types
(partition_value), and the hand-written seeds of tests/fuzz/seeds/<target>.txt (one per line;
`\\n` stands for a newline) for the expression, CSV and JSON input targets.
"""
import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Type index of partition_value_fuzz.cc's Types() for each Delta primitive type name.
PARTITION_TYPES = {"byte": 0, "short": 1, "integer": 2, "long": 3, "boolean": 4, "float": 5,
                   "double": 6, "string": 7, "binary": 8, "date": 9, "timestamp": 10,
                   "timestamp_ntz": 11}


def put(out, target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def dv_frame(form, size, offset_or_cardinality, payload):
    return bytes([form]) + struct.pack("<ii", size, offset_or_cardinality) + payload


def main():
    conformance, out = sys.argv[1], sys.argv[2]
    tables = os.path.join(conformance, "tables")
    for base, _, files in os.walk(tables):
        for name in files:
            path = os.path.join(base, name)
            if base.endswith("_delta_log") and name.endswith(".json"):
                data = open(path, "rb").read()
                if len(data) > 256 * 1024:
                    continue
                put(out, "action_file", data)
                for line in data.splitlines():
                    try:
                        action = json.loads(line)
                    except ValueError:
                        continue
                    meta = action.get("metaData")
                    if meta and isinstance(meta.get("schemaString"), str):
                        put(out, "schema_json", meta["schemaString"])
                        try:
                            fields = json.loads(meta["schemaString"]).get("fields", [])
                        except (ValueError, AttributeError):
                            fields = []
                        types = {f.get("name"): f.get("type") for f in fields
                                 if isinstance(f, dict)}
                        for col in meta.get("partitionColumns") or []:
                            t = types.get(col)
                            if t in PARTITION_TYPES:
                                put(out, "partition_value", bytes([PARTITION_TYPES[t]]) + b"1")
                    add = action.get("add") or action.get("remove")
                    if add:
                        dv = add.get("deletionVector")
                        if dv and dv.get("storageType") == "i":
                            put(out, "deletion_vector",
                                dv_frame(0, dv.get("sizeInBytes", 0), dv.get("cardinality", 0),
                                         dv["pathOrInlineDv"].encode()))
                        for value in (add.get("partitionValues") or {}).values():
                            if value is not None:
                                for index in set(PARTITION_TYPES.values()):
                                    put(out, "partition_value", bytes([index]) + value.encode())
            elif ".checkpoint" in name and name.endswith(".parquet"):
                if os.path.getsize(path) <= 256 * 1024:
                    put(out, "checkpoint", open(path, "rb").read())
            elif name.startswith("deletion_vector_") and name.endswith(".bin"):
                data = open(path, "rb").read()
                if len(data) > 64 * 1024 or len(data) < 5:
                    continue
                size = struct.unpack(">i", data[1:5])[0]
                put(out, "deletion_vector", dv_frame(1, size, 1, data))
                put(out, "deletion_vector", dv_frame(2, 0, 0, data[5:5 + max(size, 0)]))
    for target in ("expression", "csv_input", "json_input", "partition_value"):
        seeds = os.path.join(HERE, "seeds", f"{target}.txt")
        if not os.path.exists(seeds):
            continue
        for line in open(seeds, encoding="utf-8"):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            text = line.replace("\\n", "\n")
            if target == "partition_value":
                index, _, value = text.partition(" ")
                put(out, target, bytes([int(index)]) + value.encode())
            else:
                put(out, target, text)
    for target in sorted(os.listdir(out)):
        print(f"make_seeds: {target}: {len(os.listdir(os.path.join(out, target)))} seeds")


if __name__ == "__main__":
    main()
