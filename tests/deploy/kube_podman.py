#!/usr/bin/env python3
"""docker/kubernetes/ as podman 4 can play it, and what the test needs to know of it.

Usage (DIR is docker/kubernetes):
  kube_podman.py images DIR                 the images the manifests run, one a line
  kube_podman.py secret DIR NAME            Secret NAME as the JSON object of base64
                                            values podman 4.3 reads for secretKeyRef
  kube_podman.py backend DIR SERVICE        the Deployment whose pods SERVICE selects
  kube_podman.py probe DIR DEPLOYMENT CONTAINER KIND
                                            KIND (liveness or readiness) probe of that
                                            container: "PATH PORT", a named port resolved
  kube_podman.py play DIR DEPLOYMENT [--first N] [--replicas N] [--alias HOST=IP]...
                                            the ConfigMaps of DIR and DEPLOYMENT, adapted
                                            as below, as one YAML stream for `podman kube play`

What `play` changes, each for a gap between podman 4.3 and Kubernetes; nothing else:
  - every replica becomes a Deployment of its own, DEPLOYMENT-I (I from --first, as many
    as --replicas or spec.replicas), with its emptyDir volumes named after it: podman
    gives all replicas of one Deployment the same emptyDir volume, Kubernetes one per pod;
  - container `ports` are dropped: podman 4 publishes every containerPort on the host's
    port of the same number (three replicas cannot share it), Kubernetes publishes none;
    the pods are reached at their own addresses instead;
  - liveness and readiness probes are dropped: podman 4.3 ignores readiness probes and
    runs a liveness probe only through systemd timers (none here) as a `curl` the image
    lacks, with named ports unresolved; the test probes each pod as the kubelet would;
  - `hostAliases` from --alias stand in for the cluster DNS of Services, which podman
    does not have.
Secrets are left out of `play`: podman 4.3 stores a played Secret in a form its own
secretKeyRef cannot read (fixed in 4.4); the test creates it with `podman secret create`.
"""

import base64
import copy
import glob
import json
import os
import sys

import yaml


def objects(directory):
    found = []
    for path in sorted(glob.glob(os.path.join(directory, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            found += [doc for doc in yaml.safe_load_all(f) if doc]
    return found


def find(docs, kind, name):
    for doc in docs:
        if doc["kind"] == kind and doc["metadata"]["name"] == name:
            return doc
    sys.exit(f"kube_podman: no {kind} named {name}")


def images(docs):
    seen = []
    for doc in docs:
        if doc["kind"] == "Deployment":
            for container in doc["spec"]["template"]["spec"]["containers"]:
                if container["image"] not in seen:
                    seen.append(container["image"])
    return seen


def secret(docs, name):
    values = {}
    doc = find(docs, "Secret", name)
    for key, value in (doc.get("stringData") or {}).items():
        values[key] = base64.b64encode(str(value).encode()).decode()
    values.update(doc.get("data") or {})
    return json.dumps(values)


def backend(docs, service_name):
    selector = find(docs, "Service", service_name)["spec"]["selector"]
    for doc in docs:
        labels = doc.get("spec", {}).get("template", {}).get("metadata", {}).get("labels", {})
        if doc["kind"] == "Deployment" and all(labels.get(k) == v for k, v in selector.items()):
            return doc["metadata"]["name"]
    sys.exit(f"kube_podman: Service {service_name} selects no Deployment")


def probe(docs, deployment, container_name, kind):
    for container in find(docs, "Deployment", deployment)["spec"]["template"]["spec"]["containers"]:
        if container["name"] != container_name:
            continue
        get = container[f"{kind}Probe"]["httpGet"]
        port = get["port"]
        for declared in container.get("ports", []):
            if declared.get("name") == port:
                port = declared["containerPort"]
        return f"{get['path']} {int(port)}"
    sys.exit(f"kube_podman: {deployment} has no container {container_name}")


def play(docs, deployment, first, replicas, aliases):
    out = [doc for doc in docs if doc["kind"] == "ConfigMap"]
    original = find(docs, "Deployment", deployment)
    count = replicas if replicas is not None else original["spec"].get("replicas", 1)
    for index in range(first, first + count):
        doc = copy.deepcopy(original)
        doc["metadata"]["name"] = f"{deployment}-{index}"
        doc["spec"]["replicas"] = 1
        pod = doc["spec"]["template"]["spec"]
        renamed = {}
        for volume in pod.get("volumes", []):
            if "emptyDir" in volume:
                renamed[volume["name"]] = volume["name"] = f"{volume['name']}-{deployment}-{index}"
        for container in pod["containers"]:
            for key in ("ports", "livenessProbe", "readinessProbe"):
                container.pop(key, None)
            for mount in container.get("volumeMounts", []):
                mount["name"] = renamed.get(mount["name"], mount["name"])
        if aliases:
            pod["hostAliases"] = [{"ip": ip, "hostnames": [host]} for host, ip in aliases]
        out.append(doc)
    return yaml.safe_dump_all(out, sort_keys=False)


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    command, docs = argv[1], objects(argv[2])
    if command == "images" and len(argv) == 3:
        print("\n".join(images(docs)))
    elif command == "secret" and len(argv) == 4:
        print(secret(docs, argv[3]))
    elif command == "backend" and len(argv) == 4:
        print(backend(docs, argv[3]))
    elif command == "probe" and len(argv) == 6:
        print(probe(docs, argv[3], argv[4], argv[5]))
    elif command == "play" and len(argv) >= 4:
        first, replicas, aliases, rest = 0, None, [], argv[4:]
        while rest:
            flag, value, rest = rest[0], rest[1] if len(rest) > 1 else None, rest[2:]
            if value is None:
                print(f"kube_podman: {flag} needs a value", file=sys.stderr)
                return 2
            if flag == "--first":
                first = int(value)
            elif flag == "--replicas":
                replicas = int(value)
            elif flag == "--alias" and "=" in value:
                aliases.append(tuple(value.split("=", 1)))
            else:
                print(f"kube_podman: unknown option {flag} {value}", file=sys.stderr)
                return 2
        sys.stdout.write(play(docs, argv[3], first, replicas, aliases))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
