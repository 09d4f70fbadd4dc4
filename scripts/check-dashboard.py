#!/usr/bin/env python3
"""Check deploy/grafana/ribbridge-dashboard.json.

Usage: check-dashboard.py [--exprs]

Every panel but a row has targets; panel ids are unique; every target has
a refId, the dashboard's datasource variable and an expression; every
expression is valid PromQL (each is put in a temporary rules file as a
recording rule and `promtool check rules` parses it). Whether each returns
data is checked against a real Prometheus by netns-tests/alerts.rs.

--exprs: print the expressions, one per line, and check nothing.
Exit status: 0 good, 1 a check failed.
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DASHBOARD = "deploy/grafana/ribbridge-dashboard.json"


def panels(d):
    for p in d.get("panels", []):
        yield p
        yield from panels(p)


def main():
    with open(os.path.join(ROOT, DASHBOARD), encoding="utf-8") as f:
        dash = json.load(f)
    exprs = []
    problems = []
    ids = set()
    for p in panels(dash):
        where = f"{DASHBOARD}: panel {p.get('title')!r}"
        if p.get("id") in ids:
            problems.append(f"{where}: id {p.get('id')} used twice")
        ids.add(p.get("id"))
        if p.get("type") == "row":
            continue
        if not p.get("targets"):
            problems.append(f"{where}: no targets")
        for t in p.get("targets", []):
            if not t.get("refId") or not t.get("expr"):
                problems.append(f"{where}: a target without refId or expr")
                continue
            if (t.get("datasource") or {}).get("uid") != "${datasource}":
                problems.append(f"{where}: target {t['refId']} does not use the datasource variable")
            exprs.append(t["expr"])
    if sys.argv[1:] == ["--exprs"]:
        print("\n".join(exprs))
        return 0
    if sys.argv[1:]:
        sys.exit(__doc__)
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": e} for i, e in enumerate(exprs)]}]}
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        json.dump(rules, f)  # JSON is YAML
        path = f.name
    try:
        r = subprocess.run(["promtool", "check", "rules", path], capture_output=True, text=True)
    finally:
        os.unlink(path)
    if r.returncode != 0:
        problems.append(f"promtool refuses an expression:\n{r.stdout}{r.stderr}")
    for p in problems:
        print(f"check-dashboard: {p}", file=sys.stderr)
    if not problems:
        print(f"check-dashboard: {len(exprs)} expressions of {DASHBOARD} are valid PromQL")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
