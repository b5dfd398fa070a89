#!/usr/bin/env bash
# Makes the admission webhook's TLS set-up with openssl: a private CA and a serving
# certificate for muster-webhook.muster-system.svc signed by it; stores the serving
# pair as the Secret the Deployment mounts (tls.crt, tls.key) and puts the CA into the
# MutatingWebhookConfiguration's caBundle, so the API server trusts muster's webhook.
# Run after `kubectl apply -k deploy/`; run again to rotate (the running replicas are
# restarted to load the new pair: muster reads it at start).
#
#   deploy/certs/generate.sh                 # the cluster of kubectl's current context
#   KUBECTL="kubectl --context kind-muster" deploy/certs/generate.sh
#   deploy/certs/generate.sh --out-dir DIR --no-kubectl   # files only (CA key kept)
#
# Environment: NAMESPACE (muster-system), SERVICE (muster-webhook), SECRET
# (muster-webhook-certs), WEBHOOK (muster), DEPLOYMENT (muster), DAYS (730).
set -euo pipefail

namespace="${NAMESPACE:-muster-system}"
service="${SERVICE:-muster-webhook}"
secret="${SECRET:-muster-webhook-certs}"
webhook="${WEBHOOK:-muster}"
deployment="${DEPLOYMENT:-muster}"
days="${DAYS:-730}"
kubectl_cmd="${KUBECTL:-kubectl}"
out_dir=""
use_kubectl=1

while [ $# -gt 0 ]; do
  case "$1" in
    --out-dir) out_dir="$2"; shift 2 ;;
    --no-kubectl) use_kubectl=0; shift ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "generate.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
command -v openssl >/dev/null || { echo "generate.sh: needs openssl" >&2; exit 1; }

if [ -z "$out_dir" ]; then
  out_dir=$(mktemp -d)
  trap 'rm -rf "$out_dir"' EXIT  # the CA key is not kept: rotating makes a new CA
fi
mkdir -p "$out_dir"
cd "$out_dir"

host="$service.$namespace.svc"
# The names the API server may use for the Service (it uses $host).
san="DNS:$service,DNS:$service.$namespace,DNS:$host,DNS:$host.cluster.local"

openssl req -x509 -newkey rsa:2048 -nodes -sha256 -days "$((days * 2))" \
  -subj "/CN=muster-webhook-ca" -keyout ca.key -out ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -sha256 -subj "/CN=$host" \
  -keyout tls.key -out tls.csr 2>/dev/null
cat >tls.ext <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=$san
EXT
openssl x509 -req -sha256 -days "$days" -in tls.csr -CA ca.crt -CAkey ca.key \
  -CAcreateserial -extfile tls.ext -out tls.crt 2>/dev/null
openssl verify -CAfile ca.crt tls.crt >/dev/null
chmod 600 ca.key tls.key
echo "serving certificate for $host (valid $days days) in $out_dir" >&2

if [ "$use_kubectl" = 0 ]; then exit 0; fi

$kubectl_cmd -n "$namespace" create secret tls "$secret" --cert=tls.crt --key=tls.key \
  --dry-run=client -o yaml | $kubectl_cmd apply -f -
ca_bundle=$(openssl base64 -A <ca.crt)
$kubectl_cmd patch mutatingwebhookconfiguration "$webhook" --type=json \
  -p "[{\"op\":\"add\",\"path\":\"/webhooks/0/clientConfig/caBundle\",\"value\":\"$ca_bundle\"}]"
if $kubectl_cmd -n "$namespace" get deployment "$deployment" >/dev/null 2>&1; then
  $kubectl_cmd -n "$namespace" rollout restart deployment "$deployment"
fi
