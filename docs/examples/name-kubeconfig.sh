#!/usr/bin/env bash
# Name the cluster, user and context of a management cluster's own kubeconfig after the management cluster, so that
# kubeconfigs merged with `kubectl config view --flatten` keep every cluster's credentials (docs/awx.md, section 3:
# kubectl keeps the first of same-named entries). kubectl only; token and client-certificate users.
# usage: name-kubeconfig.sh MANAGEMENT_CLUSTER IN_KUBECONFIG OUT_KUBECONFIG [USER_PREFIX]
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 MANAGEMENT_CLUSTER IN_KUBECONFIG OUT_KUBECONFIG [USER_PREFIX]" >&2; exit 2; }
mc=$1 in=$2 out=$3 user=${4:-rollout-operator}@$1
view() { KUBECONFIG=$in kubectl config view --raw --minify -o jsonpath="$1"; }
config() { kubectl config --kubeconfig="$out" "$@" >/dev/null; }

token=$(view '{.users[0].user.token}')
cert=$(view '{.users[0].user.client-certificate-data}')
if [ -z "$token" ] && [ -z "$cert" ]; then
  echo "$in: the user of its current context has neither a token nor client-certificate-data; rename it by hand" >&2
  exit 1
fi
umask 077
rm -f "$out"
config set-cluster "$mc" --server="$(view '{.clusters[0].cluster.server}')"
ca=$(view '{.clusters[0].cluster.certificate-authority-data}')
[ -z "$ca" ] || config set "clusters.$mc.certificate-authority-data" "$ca"
if [ -n "$token" ]; then
  config set-credentials "$user" --token="$token"
else
  config set-credentials "$user"
  config set "users.$user.client-certificate-data" "$cert"
  config set "users.$user.client-key-data" "$(view '{.users[0].user.client-key-data}')"
fi
config set-context "$mc" --cluster="$mc" --user="$user"
config use-context "$mc"
