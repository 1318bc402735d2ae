#!/usr/bin/env python3
"""A stub support agent that speaks agenteval's JSON-lines protocol.

agenteval starts this program once per conversation and writes one request
per line to its stdin:

    {"conversation_id": "...", "turn": 1, "messages": [...], "tools": [...]}

"messages" is the whole conversation so far (user, assistant and tool
messages); "tools" are the mock tools declared in agenteval.yaml. The
program answers each request with one line on stdout:

    {"messages": [{"role": "assistant", "content": "..."}]}

or, to call tools, an assistant message with "tool_calls": [{"id", "name",
"args"}]. agenteval answers those calls with the mock results and sends the
request again, the calls and their results appended, until the reply has no
tool calls. Print nothing else on stdout; stderr is kept for errors.

Swap in your real agent: replace respond() with a call to it (your model,
your prompt, your framework), and keep main() as it is. If your agent runs
its own tools, return its tool calls and their results as messages
("role": "tool", "tool_call_id": ...) and agenteval grades them the same way.

This stub is rules, not a model: it answers only the starter's eval.
"""

import json
import re
import sys

ORDER_ID = re.compile(r"\b[A-Z]\d{4}\b")


def respond(messages, tools):
    """Return the new messages of one step of the conversation."""
    last = messages[-1]
    if last["role"] == "tool":
        return [say(after_tool(messages, last))]
    text = last.get("content", "")
    order = find_order(messages)
    address = re.search(r"send it to (.+?)(?: instead)?[.?!]*$", text, re.I)
    if address and order:
        return [call("update_address", {"order_id": order, "address": address.group(1)})]
    if ORDER_ID.search(text):
        return [call("lookup_order", {"order_id": ORDER_ID.search(text).group(0)})]
    if re.search(r"\barrive\b", text, re.I) and order:
        eta = find_result(messages, "eta")
        return [say(f"Order {order} should arrive {eta}.")]
    return [say("I can help with your orders. What is the order number?")]


def after_tool(messages, result):
    """What to say once a tool has answered."""
    data = json.loads(result.get("content") or "{}")
    order = find_order(messages)
    if "eta" in data:
        return f"Order {order} has {data['status']} and should arrive {data['eta']}."
    return f"Done: order {order} will now go to {find_address(messages)}."


def find_order(messages):
    """The order number the user gave, in any earlier turn."""
    for m in messages:
        if m["role"] == "user":
            found = ORDER_ID.search(m.get("content", ""))
            if found:
                return found.group(0)
    return None


def find_address(messages):
    for m in reversed(messages):
        for c in m.get("tool_calls") or []:
            if c["name"] == "update_address":
                return c["args"]["address"]
    return "the new address"


def find_result(messages, key):
    for m in reversed(messages):
        if m["role"] == "tool":
            try:
                data = json.loads(m.get("content") or "{}")
            except ValueError:
                continue
            if key in data:
                return data[key]
    return "soon"


def say(text):
    return {"role": "assistant", "content": text}


calls = 0


def call(name, args):
    global calls
    calls += 1
    return {"role": "assistant", "tool_calls": [{"id": f"call_{calls}", "name": name, "args": args}]}


def main():
    for line in sys.stdin:
        req = json.loads(line)
        try:
            reply = {"messages": respond(req["messages"], req.get("tools", []))}
        except Exception as e:  # an error the run records against this test
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
