#!/usr/bin/env python3
"""A scripted OpenAI-compatible model for trying examples/tools-profile.yaml without a real endpoint.

It plays a model that uses the calculator: asked "What is 17 + 25?" it calls the tool `calculator` with
{"op": "add", "a": 17, "b": 25}; given the tool's result it answers with that result alone. A question it cannot
read as arithmetic gets the answer "I do not know" (no tool call). Every answer reports token usage, so the run's
usage and cost are filled in. Standard library only; it is a stand-in for trying Vigilo, not a model.

    python3 examples/tools/scripted_model.py [PORT]      # default 8000, the profile's url

Then, from the repository root, in another terminal:

    ./vigilo dataset upload examples/quickstart.jsonl
    ./vigilo run create --profile-file examples/tools-profile.yaml --dataset-upload-id UPLOAD_ID
    AGENT_KEY=anything ./vigilo worker --exit-when-idle
    ./vigilo run transcript RUN_ID arith-001
"""
import json
import re
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

QUESTION = re.compile(r"(-?\d+(?:\.\d+)?)\s*([-+*/^x×÷])\s*(-?\d+(?:\.\d+)?)")
OPS = {"+": "add", "-": "subtract", "*": "multiply", "x": "multiply", "×": "multiply", "/": "divide", "÷": "divide",
       "^": "power"}


def number(text):
    value = float(text)
    return int(value) if value.is_integer() else value


def reply(request):
    messages = request.get("messages", [])
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        # The tool answered: the answer is its result.
        return {"role": "assistant", "content": str(last.get("content", "")).strip()}
    question = ""
    for m in messages:
        if m.get("role") == "user":
            content = m.get("content")
            question = content if isinstance(content, str) else json.dumps(content)
    match = QUESTION.search(question)
    if not match or not request.get("tools"):
        return {"role": "assistant", "content": "I do not know"}
    a, op, b = match.groups()
    arguments = {"op": OPS[op], "a": number(a), "b": number(b)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{
            "id": "call_1",
            "type": "function",
            "function": {"name": "calculator", "arguments": json.dumps(arguments)},
        }],
    }


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        try:
            request = json.loads(self.rfile.read(length))
        except ValueError:
            self.send_error(400, "the body is not JSON")
            return
        message = reply(request)
        body = json.dumps({
            "id": "scripted",
            "object": "chat.completion",
            "model": request.get("model", "scripted"),
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": 40 + 10 * len(request.get("messages", [])), "completion_tokens": 12,
                      "total_tokens": 52 + 10 * len(request.get("messages", []))},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8000
    print(f"scripted model on http://127.0.0.1:{port}/v1/chat/completions; Ctrl-C stops it", flush=True)
    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
