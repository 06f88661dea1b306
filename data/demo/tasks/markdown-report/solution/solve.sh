#!/bin/bash
python3 - <<'PY'
import json
items = json.load(open("/app/inventory.json"))
lines = ["# Inventory Report", "", "| Name | Qty | Price |", "| --- | --- | --- |"]
lines += [f"| {i['name']} | {i['qty']} | {i['price']:.2f} |" for i in items]
total = sum(i["qty"] * i["price"] for i in items)
lines += ["", f"Total value: {total:.2f}"]
open("/app/report.md", "w").write("\n".join(lines) + "\n")
PY
