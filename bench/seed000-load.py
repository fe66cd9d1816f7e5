"""The first seed's reader (article 000's `load_events`), as the `open` bench's baseline: each line
through `json.loads`, seq checked to grow by exactly one, the events kept in a list as the seed
returns them. Prints {"events": n, "ms": time spent in load_events}."""
import json
import sys
import time
from pathlib import Path


def load_events(path: Path) -> list[dict]:
    events = []
    with path.open(encoding="utf-8") as handle:
        for line_no, line in enumerate(handle, start=1):
            try:
                event = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"broken json at line {line_no}") from exc
            expected = len(events) + 1
            if event["seq"] != expected:
                raise ValueError(f"expected seq {expected}, got {event['seq']}")
            events.append(event)
    return events


if __name__ == "__main__":
    t0 = time.perf_counter()
    events = load_events(Path(sys.argv[1]))
    print(json.dumps({"events": len(events), "ms": (time.perf_counter() - t0) * 1000}))
