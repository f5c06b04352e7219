#!/usr/bin/env python3
"""A calculator tool for examples/tools-profile.yaml (docs/formats/agent-protocol.md, "Tools").

Vigilo runs it once per call: the call's arguments JSON on stdin, e.g. {"op": "add", "a": 17, "b": 25}; what it
prints is the result the model gets. A failure (exit status other than 0) is an error result the model sees too.
"""
import json
import sys

OPS = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
    "power": lambda a, b: a**b,
}

args = json.load(sys.stdin)
try:
    result = OPS[args["op"]](args["a"], args["b"])
except ZeroDivisionError:
    print("division by zero", file=sys.stderr)
    sys.exit(1)
if isinstance(result, float) and result.is_integer():
    result = int(result)
print(result)
