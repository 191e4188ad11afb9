#!/usr/bin/env python3
"""A small ReplicaSet controller with deliberate bugs, for trying rsmc on.

It polls: every interval it lists all ReplicaSets and all pods, works out the writes that
bring each ReplicaSet to spec.replicas (`plan`, a pure function), and makes them. Upstream's
controller (pkg/controller/replicaset) watches instead, and keeps "expectations" of its own
writes; the differences that matter are marked `# BUG:` with the name rsmc gives them.

    controller.py [--interval S] [--kubeconfig PATH] [--plan FILE]

`--plan FILE` prints the writes of one poll of the cluster in FILE and exits (no network).
Standard library only.
"""

import argparse
import base64
import copy
import http.client
import json
import os
import signal
import ssl
import sys
import tempfile
import time
import urllib.error
import urllib.request

TIMEOUT = 10  # seconds, for every request


def log(message):
    print(f"{time.strftime('%H:%M:%S')} naive-controller: {message}", file=sys.stderr, flush=True)


# --- Labels, owners and pod states ------------------------------------------------------

def selector_matches(selector, labels):
    """Whether a LabelSelector (matchLabels and matchExpressions) selects `labels`.
    apps/v1 rejects an empty selector; here one selects nothing, to be safe."""
    selector = selector or {}
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return False
    if any(labels.get(k) != v for k, v in match_labels.items()):
        return False
    for e in expressions:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
        if op not in ("In", "NotIn", "Exists", "DoesNotExist"):
            return False  # an operator we do not know selects nothing
    return True


def meta(obj):
    return obj.get("metadata") or {}


def labels_of(obj):
    return meta(obj).get("labels") or {}


def is_deleting(obj):
    return bool(meta(obj).get("deletionTimestamp"))


def controller_ref(pod):
    """The owner reference with controller: true, if any (a pod has at most one)."""
    return next((r for r in meta(pod).get("ownerReferences") or [] if r.get("controller")), None)


def is_ready(pod):
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def phase(pod):
    return (pod.get("status") or {}).get("phase")


def controller_ref_to(rs):
    m = meta(rs)
    return {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": m["name"], "uid": m.get("uid"),
            "controller": True, "blockOwnerDeletion": True}


# --- What to write: a pure function of the lists ------------------------------------------
#
# A write is a dict {"verb", "namespace", "name", "replicaset", "body"}; verb is one of
#   patch:  adopt a pod (merge patch of metadata.ownerReferences)
#   create: create a pod from the template ("name" is None: the server picks one)
#   delete: delete a pod
#   status: replace the ReplicaSet's status (PUT of the status subresource)

def plan(replicasets, pods):
    """The writes of one poll, by ReplicaSet namespace/name, each in the order above."""
    by_namespace = {}
    for pod in sorted(pods, key=lambda p: meta(p).get("name", "")):
        by_namespace.setdefault(meta(pod).get("namespace"), []).append(pod)
    adopted = set()  # pods an earlier ReplicaSet of this poll adopts: no longer orphans
    writes = []
    for rs in sorted(replicasets, key=lambda r: (meta(r).get("namespace", ""), meta(r)["name"])):
        writes += plan_one(rs, by_namespace.get(meta(rs).get("namespace"), []), adopted)
    return writes


def plan_one(rs, pods, adopted):
    m, spec = meta(rs), rs.get("spec") or {}
    namespace, name, uid = m.get("namespace"), m["name"], m.get("uid")

    def write(verb, pod_name, body):
        return {"verb": verb, "namespace": namespace, "name": pod_name, "replicaset": name,
                "body": body}

    # BUG: leaves a deleting ReplicaSet alone (rsmc: "did not settle within 60s").
    # Marking a ReplicaSet deleted bumps its generation, and rsmc's settle waits until
    # status.observedGeneration catches up. Upstream still syncs a deleting ReplicaSet
    # (releases, but adopts and creates nothing) and writes its status.
    if is_deleting(rs):
        return []

    writes = []
    selector = spec.get("selector")

    # The pods this ReplicaSet controls: its UID in their controller reference.
    # BUG: never releases (rsmc: "settled: each ReplicaSet controls spec.replicas matching pods").
    # An owned pod whose labels no longer match the selector is kept and counted; upstream
    # removes its owner reference (a merge patch), and so makes a replacement.
    owned = [p for p in pods if (controller_ref(p) or {}).get("uid") == uid]

    # Adoption: a matching pod that has no controller, is not being deleted and has not
    # finished. The patch writes the whole list, keeping the owners already there (one that
    # names this ReplicaSet without controller: true is replaced, not doubled), and carries
    # the resourceVersion we listed, so that if someone else wrote the pod in between
    # (another ReplicaSet adopting it) it fails with 409 instead of overwriting.
    for pod in pods:
        key = (namespace, meta(pod).get("name"))
        if (controller_ref(pod) is None and key not in adopted and not is_deleting(pod)
                and phase(pod) not in ("Succeeded", "Failed")
                and selector_matches(selector, labels_of(pod))):
            refs = [r for r in meta(pod).get("ownerReferences") or [] if r.get("uid") != uid]
            refs.append(controller_ref_to(rs))
            body = {"metadata": {"resourceVersion": meta(pod).get("resourceVersion"),
                                 "ownerReferences": refs}}
            writes.append(write("patch", key[1], body))
            adopted.add(key)
            owned.append(pod)  # counted from now on, as upstream's claim does

    # BUG: counts deleting pods (rsmc: "settled: status counts the pods").
    # Upstream's FilterActivePods also leaves out pods with a deletionTimestamp, so a pod on
    # its way out is replaced at once and not counted in status.replicas; here it holds its
    # place until it is gone (so also "settled: each ReplicaSet controls spec.replicas ...").
    active = [p for p in owned if phase(p) not in ("Succeeded", "Failed")]

    wanted = spec.get("replicas", 1)
    if len(active) < wanted:
        # BUG: no expectations (rsmc: "creations never exceed the replicas acted on").
        # Nothing remembers the creates in flight: a poll whose list does not show them yet
        # (a create that outlived its timeout, a second copy of this controller) creates
        # again. (Upstream also creates in slow-start batches, 1, 2, 4, ...: the same
        # writes when no create fails.)
        template = spec.get("template") or {}
        tmeta = template.get("metadata") or {}
        for _ in range(wanted - len(active)):
            pod_meta = {"generateName": name + "-", "namespace": namespace,
                        "labels": dict(tmeta.get("labels") or {}),
                        "ownerReferences": [controller_ref_to(rs)]}
            for field in ("annotations", "finalizers"):
                if tmeta.get(field):
                    pod_meta[field] = copy.deepcopy(tmeta[field])
            body = {"apiVersion": "v1", "kind": "Pod", "metadata": pod_meta,
                    "spec": copy.deepcopy(template.get("spec") or {})}
            writes.append(write("create", None, body))
    elif len(active) > wanted:
        # BUG: no ranking (rsmc: "scale-down deletes the pods the ranking puts first").
        # Victims go by name. Upstream ranks them: unassigned before assigned, Pending before
        # Running, not ready before ready, lower deletion cost, ..., newer first.
        victims = sorted(active, key=lambda p: meta(p)["name"])[: len(active) - wanted]
        for pod in victims:
            body = {"kind": "DeleteOptions", "apiVersion": "v1",
                    "preconditions": {"uid": meta(pod).get("uid")}}
            writes.append(write("delete", meta(pod)["name"], body))

    # Status, from the pods as listed (plus this poll's adoptions): it does not count this
    # poll's own creates and deletes, which the next poll sees. Many controllers do the same.
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    fully_labeled = [p for p in active
                     if all(labels_of(p).get(k) == v for k, v in template_labels.items())]
    ready = sum(1 for p in active if is_ready(p))
    new = {
        "replicas": len(active),
        "fullyLabeledReplicas": len(fully_labeled),
        "readyReplicas": ready,
        "availableReplicas": ready,  # available = ready, as minReadySeconds is 0 in the scenarios
        "observedGeneration": m.get("generation"),
    }
    # BUG: no terminatingReplicas (rsmc: "differs from v1.37.2: status.terminatingReplicas").
    # Controllers of v1.35 and later also write the number of owned pods being deleted
    # (feature gate DeploymentReplicaSetTerminatingReplicas). A release difference on v1.37.
    old = rs.get("status") or {}
    if any(old.get(k, None if k == "observedGeneration" else 0) != v for k, v in new.items()):
        if old.get("conditions"):
            new["conditions"] = old["conditions"]
        body = copy.deepcopy(rs)
        body.update({"apiVersion": "apps/v1", "kind": "ReplicaSet", "status": new})
        writes.append(write("status", name, body))
    return writes


# --- Talking to the API server ----------------------------------------------------------

KUBECONFIG_KEYS = ("server", "certificate-authority-data", "token", "client-certificate-data",
                   "client-key-data", "insecure-skip-tls-verify")


def read_kubeconfig(path):
    """The first value of each key in KUBECONFIG_KEYS. Not a YAML parser: it reads only the
    simple kubeconfigs that rsmc and kind write, with one cluster, user and context."""
    found = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            text = line.strip()
            if text.startswith("- "):
                text = text[2:].strip()
            key, sep, value = text.partition(":")
            if sep and key in KUBECONFIG_KEYS and key not in found:
                found[key] = value.strip().strip("'\"")
    if not found.get("server"):
        raise ValueError(f"{path}: no `server:` found")
    return found


class Client:
    def __init__(self, config):
        self.server = config["server"].rstrip("/")
        self.headers = {"Accept": "application/json", "User-Agent": "naive-controller/0.1"}
        if config.get("token"):
            self.headers["Authorization"] = "Bearer " + config["token"]
        handlers = [urllib.request.ProxyHandler({})]  # loopback clusters: ignore *_proxy
        if self.server.startswith("https://"):
            handlers.append(urllib.request.HTTPSHandler(context=tls_context(config)))
        self.opener = urllib.request.build_opener(*handlers)

    def call(self, method, path, body=None, content_type="application/json"):
        headers = dict(self.headers)
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        request = urllib.request.Request(self.server + path, data, headers, method=method)
        with self.opener.open(request, timeout=TIMEOUT) as response:
            return json.loads(response.read() or b"null")


def tls_context(config):
    ca = config.get("certificate-authority-data")
    context = ssl.create_default_context(cadata=base64.b64decode(ca).decode() if ca else None)
    if config.get("insecure-skip-tls-verify") == "true":
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if config.get("client-certificate-data") and config.get("client-key-data"):
        # ssl loads a client certificate only from files: write them to a private directory
        # and remove it as soon as they are loaded (nothing is left if we are killed later).
        with tempfile.TemporaryDirectory(prefix="naive-controller-") as private:
            cert, key = os.path.join(private, "cert.pem"), os.path.join(private, "key.pem")
            for path, field in ((cert, "client-certificate-data"), (key, "client-key-data")):
                with open(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600), "wb") as f:
                    f.write(base64.b64decode(config[field]))
            context.load_cert_chain(cert, key)
    return context


# The errors a request may end in: an HTTP status (HTTPError), a refused or reset
# connection, a timeout, a truncated or non-JSON answer. All are logged and retried.
TRANSIENT = (OSError, http.client.HTTPException, ValueError)


def describe(error):
    if isinstance(error, urllib.error.HTTPError):
        try:
            message = json.loads(error.read()).get("message", "")
        except (OSError, ValueError, AttributeError, http.client.HTTPException):
            message = ""
        normal = " (normal; retried next poll)" if error.code in (404, 409) else ""
        return f"{error.code} {error.reason}{normal}: {message[:160]}"
    return f"{type(error).__name__}: {error}"


def perform(client, w):
    """Makes one write; returns whether it succeeded. One log line either way."""
    ns, name, rs = w["namespace"], w["name"], w["replicaset"]
    pods = f"/api/v1/namespaces/{ns}/pods"
    try:
        if w["verb"] == "patch":
            client.call("PATCH", f"{pods}/{name}", w["body"], "application/merge-patch+json")
            log(f"adopted pod {ns}/{name} into rs/{rs}")
        elif w["verb"] == "create":
            created = client.call("POST", pods, w["body"])
            log(f"created pod {ns}/{meta(created).get('name')} for rs/{rs}")
        elif w["verb"] == "delete":
            client.call("DELETE", f"{pods}/{name}", w["body"])
            log(f"deleted pod {ns}/{name} of rs/{rs}")
        else:
            path = f"/apis/apps/v1/namespaces/{ns}/replicasets/{name}/status"
            client.call("PUT", path, w["body"])
            s = w["body"]["status"]
            log(f"status of rs {ns}/{name}: replicas {s['replicas']}, ready {s['readyReplicas']}, "
                f"observedGeneration {s['observedGeneration']}")
        return True
    except TRANSIENT as e:
        log(f"{w['verb']} {ns}/{name or rs + '-*'} for rs/{rs} failed: {describe(e)}")
        return False


def run(client, interval):
    log(f"polling {client.server} every {interval} s")
    while True:
        try:
            replicasets = client.call("GET", "/apis/apps/v1/replicasets").get("items") or []
            pods = client.call("GET", "/api/v1/pods").get("items") or []
        except TRANSIENT as e:
            log(f"list failed: {describe(e)}")
        else:
            # A ReplicaSet whose adoption failed makes no more writes this poll: the rest of
            # its plan counted the pod.
            failed = set()
            for w in plan(replicasets, pods):
                if w["replicaset"] in failed:
                    continue
                if not perform(client, w) and w["verb"] == "patch":
                    failed.add(w["replicaset"])
        time.sleep(interval)


# --- Command line -----------------------------------------------------------------------

def plan_file(path):
    """--plan: the writes of one poll of the cluster in `path`, as JSON on stdout."""
    def bad(what):
        print(f"controller.py: --plan {path}: {what}; expected a JSON object "
              '{"replicasets": [...], "pods": [...]} of API objects, each with metadata.name',
              file=sys.stderr)
        return 2
    try:
        with open(path, encoding="utf-8") as f:
            cluster = json.load(f)
    except OSError as e:
        return bad(f"cannot read it ({e.strerror})")
    except ValueError as e:
        return bad(f"not JSON ({e})")
    lists = [cluster.get(k) if isinstance(cluster, dict) else None
             for k in ("replicasets", "pods")]
    named = lambda o: isinstance(o, dict) and "name" in (o.get("metadata") or {})
    if not all(isinstance(items, list) and all(map(named, items)) for items in lists):
        return bad("not that shape")
    try:
        writes = plan(*lists)
    except (AttributeError, KeyError, TypeError) as e:
        return bad(f"an object of an unexpected shape ({e!r})")
    print(json.dumps(writes, indent=2, sort_keys=True))
    return 0


def main():
    parser = argparse.ArgumentParser(description="A deliberately broken ReplicaSet controller.")
    parser.add_argument("--interval", type=float, default=0.5, help="seconds between polls")
    parser.add_argument("--kubeconfig", default=os.environ.get("KUBECONFIG"),
                        help="the cluster (default: $KUBECONFIG; the first of a list)")
    parser.add_argument("--plan", metavar="FILE", help="print one poll's writes for FILE and exit")
    args = parser.parse_args()
    if args.plan is not None:
        return plan_file(args.plan)
    if not args.kubeconfig:
        parser.error("no kubeconfig: set KUBECONFIG or pass --kubeconfig")

    def stop(signum, _frame):
        log(f"stopping on signal {signum}")
        sys.exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        client = Client(read_kubeconfig(args.kubeconfig.split(os.pathsep)[0]))
    except (OSError, ValueError, ssl.SSLError) as e:
        log(f"cannot use the kubeconfig: {e}")
        return 2
    run(client, args.interval)


if __name__ == "__main__":
    sys.exit(main())
