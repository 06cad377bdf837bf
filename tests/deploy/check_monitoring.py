#!/usr/bin/env python3
"""Check monitoring/ with Prometheus's own tool, promtool (Debian's prometheus package).

Usage: check_monitoring.py REPO_ROOT

  - `promtool check rules monitoring/baton-alerts.yaml`: the rules parse and their
    expressions are valid PromQL;
  - `promtool test rules` on every monitoring/tests/*.test.yaml: each alert fires,
    with its labels and annotations, exactly when its test says, on made-up series;
  - every query of monitoring/baton-dashboard.json, its Grafana variables replaced
    ($__rate_interval by 1m, $election by a name), written as a recording rule and
    put through `promtool check rules`: the dashboard's PromQL is valid too.
Which metrics the files name is tests/docs/check_metrics.py's business.
Exit 0 all passed, 1 a failure, 77 promtool is not installed (skipped).
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77


def promtool(*args):
    r = subprocess.run(["promtool", *args], capture_output=True, text=True, timeout=120)
    return r.returncode, (r.stdout + r.stderr).strip()


def dashboard_expressions(dashboard):
    panels, found = list(dashboard.get("panels", [])), []
    while panels:
        panel = panels.pop(0)
        panels += panel.get("panels", [])
        found += [t["expr"] for t in panel.get("targets", []) if t.get("expr")]
    return found


def as_promql(query):
    query = query.replace("$__rate_interval", "1m").replace("${__rate_interval}", "1m")
    return re.sub(r"\$\{[^}]*\}|\$\w+", "x", query)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = os.path.abspath(sys.argv[1])
    if shutil.which("promtool") is None:
        print("check_monitoring: SKIP: promtool is not installed (Debian package prometheus; "
              "scripts/install-deps.sh)")
        return SKIP
    failed = False

    rules = os.path.join(root, "monitoring/baton-alerts.yaml")
    code, out = promtool("check", "rules", rules)
    print(out)
    failed |= code != 0

    tests = sorted(glob.glob(os.path.join(root, "monitoring/tests/*.test.yaml")))
    if not tests:
        print("FAIL no monitoring/tests/*.test.yaml")
        failed = True
    for test in tests:
        code, out = promtool("test", "rules", test)
        print(out)
        failed |= code != 0

    with open(os.path.join(root, "monitoring/baton-dashboard.json"), encoding="utf-8") as f:
        expressions = dashboard_expressions(json.load(f))
    with tempfile.TemporaryDirectory(prefix="baton-dashboard-") as scratch:
        path = os.path.join(scratch, "dashboard-queries.yaml")
        with open(path, "w", encoding="utf-8") as out_file:
            out_file.write("groups:\n  - name: dashboard\n    rules:\n")
            for i, expr in enumerate(expressions):
                out_file.write(f"      - record: baton_dashboard:query_{i}\n"
                               f"        expr: {json.dumps(as_promql(expr))}\n")
        code, out = promtool("check", "rules", path)
        print(out.replace(path, "monitoring/baton-dashboard.json (its queries as rules)"))
        failed |= code != 0 or f"{len(expressions)} rules found" not in out

    print("check_monitoring: " + ("FAIL" if failed else "ok"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
