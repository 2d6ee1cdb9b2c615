#!/usr/bin/env python3
"""The smallest external policy (docs/POLICIES.md): every chunk at one option, named by the first
argument (e.g. `external:cmd="python3 examples/policies/fixed.py cachegen:2"`), the twin of the C++
policy `fixed:cachegen:2`. The skeleton every external policy shares: read a JSON line, answer each
"decide" with one line, flushed."""
import json
import sys

answer = json.dumps({"choice": sys.argv[1]}) + "\n"
for line in sys.stdin:
    if json.loads(line)["type"] == "decide":
        sys.stdout.write(answer)
        sys.stdout.flush()
