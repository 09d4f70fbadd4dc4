#!/usr/bin/env python3
"""Check deploy/grafana/ribbridge-dashboard.json.

Usage: check-dashboard.py [--exprs]

Every panel but a row has targets; panel ids are unique; every target has
a refId, the dashboard's datasource variable and an expression; every
expression is valid PromQL (each is put in a temporary rules file as a
recording rule and `promtool check rules` parses it). Whether each returns
data is checked against a real Prometheus by netns-tests/alerts.rs.

The template variables: `node` (the Kubernetes node, the `node` label the
shipped monitors add) and `vip` (the VIP's prefix), both queries on the
datasource variable, each used by some panel. Every selector of a node's
series (job="ribbridge-monitor") filters node=~"$node"; every selector of
a metric with a `prefix` label (by the catalogue's `name{labels}` doc
lines in src/telemetry/mod.rs) and every cluster-view recording rule filters
prefix=~"$vip". Every series a panel reads exists: a metric of the
catalogue (src/telemetry/mod.rs' constants, PROCESS_METRICS, a histogram's
_bucket/_sum/_count), a recording rule of deploy/prometheus/ribbridge-rules.yaml,
or one of Prometheus' own (up, scrape_*). The dashboard has panels for the
BMP station, the backend probes, the drain and the process.

--exprs: print the expressions, one per line, and check nothing.
Exit status: 0 good, 1 a check failed.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DASHBOARD = "deploy/grafana/ribbridge-dashboard.json"
TELEMETRY = "src/telemetry/mod.rs"
RULES = "deploy/prometheus/ribbridge-rules.yaml"
# Prometheus' own series of a scrape.
PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped",
                  "scrape_samples_post_metric_relabeling", "scrape_series_added"}
VARIABLES = {"node": 'node=~"$node"', "vip": 'prefix=~"$vip"'}
# What some panel must read, by what the dashboard must show.
MUST_SHOW = {
    "the BMP station": "ribbridge_bmp_sessions",
    "the backend probes": "ribbridge_backend_up",
    "the drain": "ribbridge_drained",
    "the process' memory": "process_resident_memory_bytes",
    "the process' CPU": "process_cpu_seconds_total",
    "the process' descriptors": "process_open_fds",
}
SELECTOR = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)\s*\{([^}]*)\}')
NAME = re.compile(r'(?<![\w:"$.])([a-zA-Z_][a-zA-Z0-9_]*(?::[a-zA-Z0-9_]+)*)(?![\w(])')


def catalogue():
    """The metric names src/telemetry/mod.rs declares, and the labels its doc
    lines give them (`name{a,b}`)."""
    with open(os.path.join(ROOT, TELEMETRY), encoding="utf-8") as f:
        text = f.read()
    names = set(re.findall(r'pub const [A-Z_]+: &str = "((?:ribbridge|process)_[a-z_]+)";', text))
    m = re.search(r"pub const PROCESS_METRICS: &\[&str\] = &\[(.*?)\];", text, re.S)
    names |= set(re.findall(r'"(process_[a-z_]+)"', m.group(1))) if m else set()
    labels = {n: set(ls.split(",")) for n, ls in re.findall(r"/// `([a-z_]+)\{([a-z_,]+)\}`", text)}
    return names, labels


def recording_rules():
    with open(os.path.join(ROOT, RULES), encoding="utf-8") as f:
        rules = yaml.safe_load(f)
    return {r["record"] for g in rules["groups"] for r in g["rules"] if "record" in r}


def series_read(expr):
    """The series names an expression reads (selectors and bare names that
    are no function, keyword or label)."""
    text = re.sub(r'"[^"]*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    words = {"and", "or", "unless", "bool", "offset", "inf", "nan"}
    return {n for n in NAME.findall(text) if n.lower() not in words and not re.fullmatch(r"[0-9eE]+", n)}


def check_variables(dash, exprs, problems):
    names, labels = catalogue()
    known = set(names) | recording_rules() | PROMETHEUS_OWN
    for n in list(names):
        known |= {n + "_bucket", n + "_sum", n + "_count"}
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    for name in VARIABLES:
        v = variables.get(name)
        if v is None:
            problems.append(f"{DASHBOARD}: no template variable {name!r}")
            continue
        if v.get("type") != "query" or (v.get("datasource") or {}).get("uid") != "${datasource}":
            problems.append(f"{DASHBOARD}: variable {name!r} is not a query on the datasource variable")
        if not any(f"${name}" in e for _, e in exprs):
            problems.append(f"{DASHBOARD}: variable {name!r} is used by no panel")
    for where, e in exprs:
        for metric, body in SELECTOR.findall(e):
            if 'job="ribbridge-monitor"' in body and VARIABLES["node"] not in body:
                problems.append(f"{where}: {metric}{{{body}}} reads nodes' series without {VARIABLES['node']}")
            if "prefix" in labels.get(metric, set()) and VARIABLES["vip"] not in body:
                problems.append(f"{where}: {metric}{{{body}}} has a prefix label and no {VARIABLES['vip']}")
            if metric.startswith(("prefix:", "prefix_state:")) and VARIABLES["vip"] not in body:
                problems.append(f"{where}: {metric} without {VARIABLES['vip']}")
        for bare in re.findall(r"(?<![\w:])(prefix(?:_state)?:[a-z_]+:[a-z]+)\b(?!\s*\{)", e):
            problems.append(f"{where}: {bare} without {VARIABLES['vip']}")
        for n in series_read(e):
            if n in FUNCTIONS:
                continue
            if n not in known:
                problems.append(f"{where}: reads {n!r}, which no catalogue entry, recording rule or Prometheus series names")
    read = {n for _, e in exprs for n in series_read(e)}
    for what, metric in MUST_SHOW.items():
        if metric not in read:
            problems.append(f"{DASHBOARD}: no panel for {what} (none reads {metric})")


# PromQL's functions and aggregations (followed by `(` they are not
# matched as names; listed for the forms with a space before it).
FUNCTIONS = {"sum", "min", "max", "avg", "count", "rate", "increase", "irate", "time", "vector",
             "histogram_quantile", "last_over_time", "max_over_time", "label_values", "topk", "bottomk"}


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
            exprs.append((f"{where} {t['refId']}", t["expr"]))
    if sys.argv[1:] == ["--exprs"]:
        print("\n".join(e for _, e in exprs))
        return 0
    if sys.argv[1:]:
        sys.exit(__doc__)
    check_variables(dash, exprs, problems)
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:expr_{i}", "expr": e} for i, (_, e) in enumerate(exprs)]}]}
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
