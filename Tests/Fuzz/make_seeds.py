#!/usr/bin/env python3
"""Writes one fuzz seed per protocol test vector: the vector's bytes, and its first frame's payload."""
import json
import os
import sys

vectors_path, seeds_dir = sys.argv[1], sys.argv[2]
os.makedirs(seeds_dir, exist_ok=True)
with open(vectors_path) as f:
    vectors = json.load(f)["vectors"]
for vector in vectors:
    data = bytes.fromhex(vector["hex"])
    with open(os.path.join(seeds_dir, vector["name"] + ".bin"), "wb") as out:
        out.write(data)
    if len(data) >= 4:
        with open(os.path.join(seeds_dir, vector["name"] + ".payload"), "wb") as out:
            out.write(data[4:4 + int.from_bytes(data[:4], "big")])
print(f"{len(vectors)} vectors written as seeds to {seeds_dir}")
