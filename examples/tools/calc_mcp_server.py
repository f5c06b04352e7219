#!/usr/bin/env python3
"""A small MCP server over stdio offering the tool `calculator`, for examples/mcp-profile.yaml.

The worker starts it once per attempt (agent.mcp_servers), sends `initialize` and `tools/list`, then `tools/call` for
each call the model makes, and stops it when the attempt ends. The stdio transport is one JSON-RPC 2.0 message per
line on stdin and stdout; anything on stderr is the server's log (the worker quotes its end when the server fails).
Standard library only, so the example needs nothing installed; a real server would use an MCP SDK.

    python3 examples/tools/calc_mcp_server.py      # started by the worker, not by hand
"""
import json
import sys

TOOL = {
    "name": "calculator",
    "description": "Computes a op b for op add, subtract, multiply, divide or power.",
    "inputSchema": {
        "type": "object",
        "properties": {
            "op": {"type": "string", "enum": ["add", "subtract", "multiply", "divide", "power"]},
            "a": {"type": "number"},
            "b": {"type": "number"},
        },
        "required": ["op", "a", "b"],
        "additionalProperties": False,
    },
}


def calculate(arguments):
    a, b, op = arguments["a"], arguments["b"], arguments["op"]
    if op == "divide" and b == 0:
        raise ValueError("division by zero")
    value = {"add": a + b, "subtract": a - b, "multiply": a * b, "divide": a / b if b else 0, "power": a ** b}[op]
    return str(int(value) if float(value).is_integer() else value)


def result(request):
    method = request.get("method")
    params = request.get("params") or {}
    if method == "initialize":
        # Answer with the client's protocol version: this server uses nothing that differs between versions.
        return {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "vigilo-example-calculator", "version": "1.0.0"},
        }
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": [TOOL]}
    if method == "tools/call":
        if params.get("name") != TOOL["name"]:
            return {"content": [{"type": "text", "text": "unknown tool " + str(params.get("name"))}], "isError": True}
        try:
            text = calculate(params.get("arguments") or {})
            return {"content": [{"type": "text", "text": text}], "isError": False}
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            # A tool's failure is a result the model sees (isError), not a protocol error.
            return {"content": [{"type": "text", "text": "cannot compute: " + str(e)}], "isError": True}
    raise LookupError(method)


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        if "id" not in request:
            continue  # a notification (notifications/initialized, cancellations): nothing to answer
        try:
            answer = {"jsonrpc": "2.0", "id": request["id"], "result": result(request)}
        except LookupError as e:
            answer = {"jsonrpc": "2.0", "id": request["id"],
                      "error": {"code": -32601, "message": "method not found: " + str(e)}}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        print("answered " + str(request.get("method")), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
