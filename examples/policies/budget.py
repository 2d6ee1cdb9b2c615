#!/usr/bin/env python3
"""CacheGen's budget rule (docs/CACHEGEN.md §11.1) as an external policy (docs/POLICIES.md), the twin
of the C++ policy `cachegen:ladder=cachegen` (estimator=last, predictor=fluid) decision for decision:

- chunk 0 has no measurement: the middle level of the ladder;
- otherwise the throughput of the last transfer; the best level whose remaining chunks all fit in
  the remaining budget (SLO - elapsed) at that throughput;
- if none fits, text when recomputing this chunk is faster than sending it at the lowest level.

Options arrive best quality first, then "text" when the policy may recompute."""
import json
import sys

contexts = {}  # context number -> its table
requests = {}  # request number -> its "request" message, with "history": the transfers so far


def decide(request, decision):
    table = contexts[request["context"]]
    options = table["options"]
    levels = [i for i, name in enumerate(options) if name != "text"]
    history = request["history"]
    history += decision["transfers"]
    if not history:
        return options[levels[len(levels) // 2]]
    last = history[-1]
    rate_bps = last["bits"] / (last["end_s"] - last["start_s"])
    remaining = table["chunks"][decision["chunk"]:]
    for level in levels:
        bits = 0.0
        for chunk in remaining:  # summed in chunk order, as the C++ rule does
            bits += chunk["bits"][level]
        if bits / rate_bps <= decision["remaining_s"]:
            return options[level]
    lowest = levels[-1]
    if "text" in options:
        text = options.index("text")
        if remaining[0]["gpu_s"][text] < remaining[0]["bits"][lowest] / rate_bps:
            return "text"
    return options[lowest]


for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "context":
        contexts[message["context"]] = message["table"]
    elif message["type"] == "request":
        requests[message["request"]] = dict(message, history=[])
    elif message["type"] == "end":
        del requests[message["request"]]
    else:
        print(json.dumps({"choice": decide(requests[message["request"]], message)}), flush=True)
