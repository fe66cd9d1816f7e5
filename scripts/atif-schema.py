"""Writes the JSON Schema of Harbor's ATIF models (pydantic's model_json_schema of
harbor.models.trajectories.trajectory.Trajectory), the schema `proofloop export --format atif` is
tested against (test/integration/atif-export.int.spec.ts).

Usage: python3 scripts/atif-schema.py <dir holding the harbor package> <source> > test/fixtures/atif-schema/harbor-atif.schema.json
Needs pydantic 2. Harbor's models also check, beyond the schema, that step ids run 1, 2, 3…,
that a result's source_call_id names a tool call of its step, and that only agent steps carry
model_name, reasoning, tool calls and metrics: the test checks those itself.
"""
import json
import sys

sys.path.insert(0, sys.argv[1])
from harbor.models.trajectories.trajectory import Trajectory  # noqa: E402

schema = Trajectory.model_json_schema()
schema = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$comment": sys.argv[2],
    **schema,
}
json.dump(schema, sys.stdout, indent=2)
sys.stdout.write("\n")
