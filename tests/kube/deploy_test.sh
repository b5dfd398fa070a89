#!/usr/bin/env bash
# Checks deploy/ offline: the kustomization renders (`kubectl kustomize`), every CRD
# is structural and named <plural>.<group>, RBAC covers every kind muster reads and
# every kind the webhook mutates, the webhook, Service, Deployment and Secret agree,
# and certs/generate.sh makes a serving certificate the API server would accept.
# Prints PASS / FAIL / SKIP lines; exits non-zero on any FAIL.
#   tests/kube/deploy_test.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
python="${PYTHON:-/usr/bin/python3}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

if command -v kubectl >/dev/null 2>&1; then
  if kubectl kustomize deploy/ >"$work/rendered.yaml" 2>"$work/kustomize.err"; then
    pass "kubectl kustomize deploy/ renders $(grep -c '^kind:' "$work/rendered.yaml") objects"
  else
    fail "kubectl kustomize deploy/: $(cat "$work/kustomize.err")"
  fi
else
  echo "SKIP kubectl kustomize (no kubectl): checking the listed files instead"
fi

if ! "$python" -c 'import yaml' 2>/dev/null; then
  fail "$python cannot import yaml (Debian: python3-yaml)"
  exit 1
fi

"$python" - "$work/rendered.yaml" <<'PY' || fails=$((fails + 1))
import os
import sys

import yaml

failures = 0


def report(ok, what):
    global failures
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        failures += 1


def load_docs():
    rendered = sys.argv[1]
    if os.path.exists(rendered) and os.path.getsize(rendered) > 0:
        with open(rendered) as f:
            return [d for d in yaml.safe_load_all(f) if d]
    # No kubectl: the files the kustomization lists.
    with open("deploy/kustomization.yaml") as f:
        resources = yaml.safe_load(f)["resources"]
    docs = []
    for path in resources:
        with open(os.path.join("deploy", path)) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def structural_problems(node, path):
    """Every node has a type, or is explicitly open (preserve-unknown-fields) or
    int-or-string; metadata at the root says nothing but type: object."""
    if not isinstance(node, dict):
        return [path + ": not a schema object"]
    problems = []
    open_node = node.get("x-kubernetes-preserve-unknown-fields") is True
    int_or_string = node.get("x-kubernetes-int-or-string") is True
    if "type" not in node and not open_node and not int_or_string:
        problems.append(path + ": no type")
    if int_or_string and "type" in node:
        problems.append(path + ": int-or-string with a type")
    for key in ("oneOf", "anyOf", "allOf", "not"):
        if key in node and not int_or_string:
            problems.append(path + ": " + key + " outside int-or-string")
    for name, child in (node.get("properties") or {}).items():
        problems += structural_problems(child, path + "." + name)
    if isinstance(node.get("additionalProperties"), dict):
        problems += structural_problems(node["additionalProperties"], path + ".*")
    if "items" in node:
        problems += structural_problems(node["items"], path + "[]")
    if node.get("type") == "object" and "properties" in node and "additionalProperties" in node:
        problems.append(path + ": both properties and additionalProperties")
    return problems


docs = load_docs()
by_kind = {}
for d in docs:
    by_kind.setdefault(d.get("kind"), []).append(d)

# CRDs.
crds = by_kind.get("CustomResourceDefinition", [])
report(len(crds) >= 7, "%d CustomResourceDefinitions" % len(crds))
crd_resources = set()  # (group, plural)
for crd in crds:
    spec = crd["spec"]
    group, names = spec["group"], spec["names"]
    name = crd["metadata"]["name"]
    report(name == names["plural"] + "." + group, "%s is named <plural>.<group>" % name)
    crd_resources.add((group, names["plural"]))
    storage = [v["name"] for v in spec["versions"] if v.get("storage")]
    report(len(storage) == 1, "%s has one storage version (%s)" % (name, storage))
    for version in spec["versions"]:
        schema = version.get("schema", {}).get("openAPIV3Schema")
        where = "%s %s" % (name, version["name"])
        if schema is None:
            report(False, where + " has a schema")
            continue
        problems = structural_problems(schema, "openAPIV3Schema")
        report(not problems, where + " is structural" + ("" if not problems else ": " + "; ".join(problems)))
        meta = schema.get("properties", {}).get("metadata", {})
        report(set(meta) <= {"type"}, where + " leaves metadata to the API server")
        has_status = "status" in schema.get("properties", {})
        marked = "status" in (version.get("subresources") or {})
        report(has_status == marked,
               where + (" marks its status subresource" if has_status else " has no status"))

# RBAC.
role = next((r for r in by_kind.get("ClusterRole", []) if r["metadata"]["name"] == "muster"), None)
report(role is not None, "ClusterRole muster exists")
rules = role["rules"] if role else []


def qualified(group, plural):
    return plural + "." + group if group else plural


def allowed(group, resource, verbs):
    granted = set()
    for rule in rules:
        if group in rule.get("apiGroups", []) and resource in rule.get("resources", []):
            granted |= set(rule.get("verbs", []))
    return set(verbs) <= granted


for group, plural in sorted(crd_resources):
    report(allowed(group, plural, ["get", "list", "watch"]), "RBAC reads " + qualified(group, plural))
for group, plural in [("", "nodes"), ("", "pods"), ("scheduling.k8s.io", "priorityclasses"),
                      ("topology.node.k8s.io", "noderesourcetopologies"),
                      ("scheduling.volcano.sh", "podgroups"), ("scheduling.volcano.sh", "queues"),
                      ("topology.volcano.sh", "hypernodes"), ("batch.volcano.sh", "jobs")]:
    report(allowed(group, plural, ["get", "list", "watch"]), "RBAC reads " + qualified(group, plural))
report(allowed("", "pods/binding", ["create"]), "RBAC binds pods")
report(allowed("", "events", ["create", "patch"]), "RBAC records Events")
report(allowed("kueue.x-k8s.io", "workloads", ["create", "update", "patch", "delete"])
       and allowed("kueue.x-k8s.io", "workloads/status", ["update", "patch"]),
       "RBAC writes Workloads and their status")
report(not any("*" in r.get("verbs", []) or "*" in r.get("resources", []) for r in rules),
       "RBAC has no wildcards")

# The webhook: every kind it mutates is one muster may read and suspend.
webhooks = by_kind.get("MutatingWebhookConfiguration", [])
report(len(webhooks) == 1, "one MutatingWebhookConfiguration")
services = {(s["metadata"]["namespace"], s["metadata"]["name"]): s for s in by_kind.get("Service", [])}
for config in webhooks:
    for hook in config["webhooks"]:
        hname = hook["name"]
        report(hook.get("failurePolicy") == "Fail" and hook.get("sideEffects") == "None",
               hname + ": failurePolicy Fail, sideEffects None")
        excluded = [v for e in hook.get("namespaceSelector", {}).get("matchExpressions", [])
                    if e.get("key") == "kubernetes.io/metadata.name" and e.get("operator") == "NotIn"
                    for v in e.get("values", [])]
        report({"muster-system", "kube-system"} <= set(excluded),
               hname + ": leaves muster-system and kube-system out")
        for rule in hook["rules"]:
            report(rule.get("operations") == ["CREATE"], hname + ": mutates CREATE only")
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    report(allowed(group, resource, ["get", "list", "watch", "update", "patch"]),
                           "%s: RBAC reads and suspends %s" % (hname, qualified(group, resource)))
        svc_ref = hook["clientConfig"]["service"]
        svc = services.get((svc_ref["namespace"], svc_ref["name"]))
        report(svc is not None, hname + ": Service %s/%s exists" % (svc_ref["namespace"], svc_ref["name"]))
        report(svc_ref.get("path") == "/mutate-jobs", hname + ": path /mutate-jobs")
        if svc is not None:
            ports = [p for p in svc["spec"]["ports"] if p["port"] == svc_ref.get("port", 443)]
            report(len(ports) == 1, hname + ": Service port %s" % svc_ref.get("port", 443))

# The Deployment: what it runs and mounts matches the rest.
deployments = by_kind.get("Deployment", [])
report(len(deployments) == 1, "one Deployment")
for dep in deployments:
    pod = dep["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = container.get("command", []) + container.get("args", [])
    report(dep["spec"].get("replicas") == 2 and "--leader-elect" in args, "2 replicas with --leader-elect")
    report(pod.get("serviceAccountName") == "muster", "runs as ServiceAccount muster")
    report(pod.get("securityContext", {}).get("runAsNonRoot") is True, "runs as non-root")
    port = args[args.index("--webhook-port") + 1] if "--webhook-port" in args else None
    named = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
    report(port is not None and named.get("webhook") == int(port),
           "container port 'webhook' is --webhook-port %s" % port)
    for svc in services.values():
        report(svc["spec"]["selector"].items() <= dep["spec"]["template"]["metadata"]["labels"].items(),
               "Service %s selects the Deployment's pods" % svc["metadata"]["name"])
    cert_dir = args[args.index("--webhook-cert-dir") + 1] if "--webhook-cert-dir" in args else None
    mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
    volumes = {v["name"]: v for v in pod.get("volumes", [])}
    secret = volumes.get(mounts.get(cert_dir, ""), {}).get("secret", {}).get("secretName")
    report(secret == "muster-webhook-certs", "--webhook-cert-dir %s is the Secret muster-webhook-certs" % cert_dir)
    for probe in ("livenessProbe", "readinessProbe"):
        get = container.get(probe, {}).get("httpGet", {})
        report(get.get("path") == "/healthz" and get.get("scheme") == "HTTPS", probe + " on https /healthz")

# Namespaced objects live in muster-system.
namespaced = [d for d in docs if d["kind"] in ("ServiceAccount", "Service", "Deployment", "Role", "RoleBinding")]
report(all(d["metadata"].get("namespace") == "muster-system" for d in namespaced),
       "namespaced objects are in muster-system")
lease_role = next((r for r in by_kind.get("Role", []) if any("leases" in x.get("resources", []) for x in r["rules"])), None)
report(lease_role is not None and {"get", "create", "update"} <= set(
    v for x in lease_role["rules"] for v in x["verbs"]), "Role for the leader-election Lease")

# The cert-manager alternative writes the same Secret.
with open("deploy/certs/cert-manager.yaml") as f:
    cm = [d for d in yaml.safe_load_all(f) if d]
serving = [d for d in cm if d["kind"] == "Certificate" and not d["spec"].get("isCA")]
report(len(serving) == 1 and serving[0]["spec"]["secretName"] == "muster-webhook-certs"
       and "muster-webhook.muster-system.svc" in serving[0]["spec"]["dnsNames"],
       "cert-manager.yaml issues muster-webhook-certs for muster-webhook.muster-system.svc")
sys.exit(1 if failures else 0)
PY

# certs/generate.sh, files only: a CA-signed serving certificate for the Service name.
if command -v openssl >/dev/null 2>&1; then
  if deploy/certs/generate.sh --out-dir "$work/certs" --no-kubectl 2>"$work/certs.err" &&
    openssl verify -CAfile "$work/certs/ca.crt" -purpose sslserver "$work/certs/tls.crt" >/dev/null 2>&1 &&
    openssl x509 -in "$work/certs/tls.crt" -noout -checkhost muster-webhook.muster-system.svc |
      grep -q "does match"; then
    pass "certs/generate.sh makes a serving certificate for muster-webhook.muster-system.svc"
  else
    fail "certs/generate.sh: $(cat "$work/certs.err")"
  fi
else
  echo "SKIP certs/generate.sh (no openssl)"
fi

if [ "$fails" -gt 0 ]; then
  echo "deploy_test: $fails failed"
  exit 1
fi
echo "deploy_test: all passed"
