#!/usr/bin/env python3
"""RobustMPC (Yin et al., SIGCOMM'15; Pensieve's baseline) as an external policy (docs/POLICIES.md):
the throughput is the harmonic mean of the last 5 transfers, discounted by the largest relative
error that estimate made over the last 5 chunks; every plan of the next `horizon` chunks (argument
1, default 3) is timed at that rate, transfers one after another, and the plan that meets the
deadline with the most quality (else the one that finishes first) gives this chunk's choice; the
chunks beyond the horizon are timed at the lowest level, the least they can take.
Before the first transfer: the middle level. Text counts as an option like any other, its time the
GPU's recompute time (a simplification: no bits on the link, no overlap)."""
import itertools
import json
import sys

HORIZON = int(sys.argv[1]) if len(sys.argv) > 1 else 3
WINDOW = 5
contexts = {}  # context number -> its table
requests = {}  # request number -> {"context": its table, "history": [...], "errors": [...]}


def harmonic_mean_bps(history):
    recent = history[-WINDOW:]
    return len(recent) / sum((s["end_s"] - s["start_s"]) / s["bits"] for s in recent)


def decide(state, decision):
    table = state["context"]
    options = table["options"]
    history = state["history"]
    history += decision["transfers"]
    if not history:
        levels = [i for i, name in enumerate(options) if name != "text"]
        return options[levels[len(levels) // 2]]
    # The last estimate's error on the transfer that has since happened, then the robust discount.
    actual_bps = history[-1]["bits"] / (history[-1]["end_s"] - history[-1]["start_s"])
    if state.get("estimate_bps"):
        state["errors"].append(abs(state["estimate_bps"] - actual_bps) / actual_bps)
    estimate_bps = harmonic_mean_bps(history)
    state["estimate_bps"] = estimate_bps
    rate_bps = estimate_bps / (1 + max(state["errors"][-WINDOW:], default=0))

    remaining = table["chunks"][decision["chunk"]:]
    chunks, later = remaining[:HORIZON], remaining[HORIZON:]
    lowest = max(i for i, name in enumerate(options) if name != "text")
    later_s = sum(chunk["bits"][lowest] for chunk in later) / rate_bps  # the least the rest can take
    best = None
    for plan in itertools.product(range(len(options)), repeat=len(chunks)):
        seconds, quality = later_s, 0.0
        for chunk, option in zip(chunks, plan):
            seconds += chunk["gpu_s"][option] if options[option] == "text" else chunk["bits"][option] / rate_bps
            quality += chunk["quality"][option] * chunk["tokens"]
        meets = seconds <= decision["remaining_s"]
        score = (meets, quality, -seconds) if meets else (meets, -seconds, quality)
        if best is None or score > best[0]:
            best = (score, plan[0])
    return options[best[1]]


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "context":
        contexts[message["context"]] = message["table"]
    elif message["type"] == "request":
        requests[message["request"]] = {"context": contexts[message["context"]], "history": [], "errors": []}
    elif message["type"] == "end":
        del requests[message["request"]]
    else:
        print(json.dumps({"choice": decide(requests[message["request"]], message)}), flush=True)
