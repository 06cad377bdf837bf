#!/usr/bin/env python3
"""Check that the metrics the docs and the monitoring files name are the binary's.

Usage: check_metrics.py BATON_BINARY REPO_ROOT

`baton __metrics` lists every family /metrics serves (name, type, labels). Then:
  - docs/operating.md's metric table has one row per family, with its labels and
    type, and no other row;
  - every expression of monitoring/baton-alerts.yaml and every query of
    monitoring/baton-dashboard.json (its panels and its variables) names at least
    one metric, only metrics the binary exports (a histogram's _bucket, _sum and
    _count series included), and only labels those metrics carry (besides the
    scrape's job and instance);
  - each rule group has its promtool test file, monitoring/tests/NAME.test.yaml
    for group baton-NAME, and that file expects each alert of the group both
    firing and silent at some time (tests/deploy/check_monitoring.py runs them).
Exit 1 with one line per problem, or 0.
"""

import json
import os
import re
import subprocess
import sys

import yaml

# Words of PromQL and of Grafana's variable queries that are not metric names.
FUNCTIONS = {
    "abs", "absent", "absent_over_time", "avg_over_time", "ceil", "changes", "clamp",
    "clamp_max", "clamp_min", "count_over_time", "day_of_month", "day_of_week", "delta",
    "deriv", "exp", "floor", "histogram_quantile", "holt_winters", "hour", "idelta",
    "increase", "irate", "label_join", "label_replace", "last_over_time", "ln", "log2",
    "log10", "max_over_time", "min_over_time", "minute", "month", "predict_linear",
    "quantile_over_time", "rate", "resets", "round", "scalar", "sgn", "sort", "sort_desc",
    "sqrt", "stddev_over_time", "stdvar_over_time", "sum_over_time", "time", "timestamp",
    "vector", "year", "label_values", "query_result",
}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count",
                "count_values", "bottomk", "topk", "quantile"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and",
            "or", "unless", "offset", "inf", "nan"}
SCRAPE_LABELS = {"job", "instance"}
HISTOGRAM_SERIES = ("_bucket", "_sum", "_count")

IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
SELECTOR = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}")
MATCHER_LABEL = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)")


def exported_families(baton):
    r = subprocess.run([baton, "__metrics"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        sys.exit(f"FAIL baton __metrics exited {r.returncode}: {r.stderr.strip()}")
    families = {}
    for line in r.stdout.splitlines():
        name, kind, labels, _help = line.split("\t", 3)
        families[name] = (kind, [label for label in labels.split(",") if label])
    return families


def series_family(name, families):
    """The family a series name belongs to (a histogram's series by their suffix)."""
    if name in families:
        return name
    for suffix in HISTOGRAM_SERIES:
        base = name[: -len(suffix)]
        if name.endswith(suffix) and families.get(base, ("",))[0] == "histogram":
            return base
    return None


def metric_names(expr):
    """The metric names an expression reads, from a plain reading of PromQL."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # string literals
    # Grafana's label_values(METRIC, LABEL): the label is no metric.
    text = re.sub(r"\blabel_values\(([^,()]*),\s*\w+\s*\)", r"\1", text)
    text = re.sub(r"\$\{[^}]*\}|\$\w+", "", text)  # Grafana variables
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # ranges and subqueries
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = []
    for m in IDENT.finditer(text):
        word = m.group(0)
        if word in FUNCTIONS or word in AGGREGATIONS or word in KEYWORDS:
            continue
        # The exponent of a number such as 1e3.
        if m.start() > 0 and text[m.start() - 1] in "0123456789.":
            continue
        names.append(word)
    return names


def check_expression(expr, where, families, problems):
    names = metric_names(expr)
    if not names:
        problems.append(f"{where}: names no metric: {expr.strip()}")
    for name in names:
        if series_family(name, families) is None:
            problems.append(f"{where}: {name} is not a metric `baton __metrics` lists")
    for m in SELECTOR.finditer(re.sub(r"\$\{[^}]*\}|\$\w+", "x", expr)):
        family = series_family(m.group(1), families)
        if family is None:
            continue
        allowed = set(families[family][1]) | SCRAPE_LABELS
        if m.group(1).endswith("_bucket"):
            allowed.add("le")
        for label in MATCHER_LABEL.findall(m.group(2)):
            if label not in allowed:
                problems.append(f"{where}: {m.group(1)} has no label {label}")


def check_docs_table(root, families, problems):
    rel = "docs/operating.md"
    rows = {}
    for line in open(os.path.join(root, rel), encoding="utf-8"):
        m = re.match(r"^\| `(baton_[a-z0-9_]+)(?:\{([a-z_,]+)\})?` \| (\w+) \|", line)
        if m:
            rows[m.group(1)] = (m.group(3), [x for x in (m.group(2) or "").split(",") if x])
    for name, (kind, labels) in families.items():
        if name not in rows:
            problems.append(f"{rel}: the metric table has no row for {name}")
        elif rows[name] != (kind, labels):
            problems.append(f"{rel}: {name} is shown as {rows[name]}, the binary has {(kind, labels)}")
    for name in rows:
        if name not in families:
            problems.append(f"{rel}: the metric table lists {name}, which the binary does not export")


def check_alert_tests(root, groups, problems):
    for group in groups:
        name = group["name"]
        test = f"monitoring/tests/{name.removeprefix('baton-')}.test.yaml"
        path = os.path.join(root, test)
        if not os.path.isfile(path):
            problems.append(f"monitoring/baton-alerts.yaml: group {name} has no test file {test}")
            continue
        cases = [case for t in yaml.safe_load(open(path, encoding="utf-8"))["tests"]
                 for case in t.get("alert_rule_test", [])]
        for rule in group["rules"]:
            alert = rule.get("alert")
            if not alert:
                continue
            expected = [bool(c.get("exp_alerts")) for c in cases if c.get("alertname") == alert]
            if True not in expected or False not in expected:
                problems.append(f"{test}: {alert} is not tested both firing and silent")


def dashboard_queries(dashboard):
    """(where, query) for every panel target and query variable of a dashboard."""
    found = []
    panels = list(dashboard.get("panels", []))
    while panels:
        panel = panels.pop(0)
        panels += panel.get("panels", [])  # collapsed rows hold their panels
        for target in panel.get("targets", []):
            found.append((f"panel {panel.get('title')!r} {target.get('refId')}", target.get("expr", "")))
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            query = variable.get("query")
            found.append((f"variable {variable.get('name')}",
                          query.get("query", "") if isinstance(query, dict) else query or ""))
    return found


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    baton, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    families = exported_families(baton)
    problems = []
    check_docs_table(root, families, problems)

    rules = yaml.safe_load(open(os.path.join(root, "monitoring/baton-alerts.yaml"), encoding="utf-8"))
    count = 0
    for group in rules["groups"]:
        for rule in group["rules"]:
            count += 1
            check_expression(rule["expr"], f"monitoring/baton-alerts.yaml: {rule.get('alert')}",
                             families, problems)
    check_alert_tests(root, rules["groups"], problems)

    dashboard = json.load(open(os.path.join(root, "monitoring/baton-dashboard.json"), encoding="utf-8"))
    queries = dashboard_queries(dashboard)
    for where, query in queries:
        check_expression(query, f"monitoring/baton-dashboard.json: {where}", families, problems)

    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"ok   {len(families)} metric families: docs/operating.md lists them; {count} alert "
              f"rules and {len(queries)} dashboard queries name only them, each alert tested")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
