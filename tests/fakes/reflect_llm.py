"""A stand-in for MEMLANE_LLM_CMD in the reflection tests: reads the prompt on stdin,
answers on stdout as the mode (argv[1]) says.

good       3 insights on the new memories, and pack operations: add one, merge the
           first two new ones, retire the last packed memory besides those
malformed  chatter instead of JSON, every time
stranger   well-formed JSON naming a memory the prompt never showed
fixes      chatter, until the prompt says the last answer was rejected; then good
rewrite    the insights of good, and one operation: rewrite the newest new memory
slow       sleeps past any timeout
"""

import json
import re
import sys
import time

mode = sys.argv[1]
prompt = sys.stdin.read()
new_part, _, pack_part = prompt.partition("The curated pack now:")
new = re.findall(r"^#(m-[0-9a-z]+) ", new_part, re.M)
packed = re.findall(r"^#(m-[0-9a-z]+) ", pack_part, re.M)

if mode == "slow":
    time.sleep(30)
if mode == "malformed" or (mode == "fixes" and "was rejected" not in prompt):
    print("Here is what I noticed about these memories: quite a lot!")
    sys.exit(0)
if mode == "stranger":
    print(json.dumps({"insights": [{"content": "x", "sources": ["m-notshown"]}]}))
    sys.exit(0)
insights = [
    {
        "title": f"Pattern {i}",
        "content": f"Pattern {i}: the team keeps returning to {new[i % len(new)]}.",
        "sources": new[: 2 + i % 2],
    }
    for i in range(3)
]
ops = [
    {
        "op": "add",
        "ids": new[:1],
        "content": "Deploys need a green CI run and a reviewer.",
        "title": "Deploy gate",
        "reason": "stated three times",
    }
]
if len(new) >= 2:
    ops.append(
        {
            "op": "merge",
            "ids": new[:2],
            "content": "Merged: " + " / ".join(new[:2]),
            "reason": "they say the same",
        }
    )
others = [p for p in packed if p not in new[:2]]
if others:
    ops.append({"op": "retire", "ids": others[-1:], "reason": "no longer true"})
if mode == "rewrite":
    ops = [{"op": "rewrite", "ids": new[-1:], "content": "Rewritten.", "reason": "clearer"}]
print("```json")
print(json.dumps({"insights": insights, "ops": ops}))
print("```")
