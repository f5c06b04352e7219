"""A command tool for the tool-loop tests: the arguments JSON on stdin, the result on stdout.

{"a": 1, "b": 2}            prints the sum
{"fail": 3}                 prints to stderr and exits with status 3
{"me": "x", "other": "y"}   creates $TOOL_DIR/x, then waits (up to 20 s) until $TOOL_DIR/y exists: two calls only
                            meet when they run at the same time
{"hang": true}              waits until killed; with "started": "f" it first creates $TOOL_DIR/f
"""
import json
import os
import sys
import time

args = json.load(sys.stdin)
if "fail" in args:
    print("tool failed on purpose", file=sys.stderr)
    sys.exit(args["fail"])
if "me" in args:
    d = os.environ["TOOL_DIR"]
    open(os.path.join(d, args["me"]), "w").close()
    deadline = time.time() + 20
    while not os.path.exists(os.path.join(d, args["other"])):
        if time.time() > deadline:
            print("nobody came", file=sys.stderr)
            sys.exit(1)
        time.sleep(0.01)
    print("met " + args["other"])
    sys.exit(0)
if "hang" in args:
    if "started" in args:
        with open(os.path.join(os.environ["TOOL_DIR"], args["started"]), "w") as f:
            f.write(str(os.getpid()))
    while True:
        time.sleep(1)
print(args["a"] + args["b"])
