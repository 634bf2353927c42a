"""capisim: local Cluster API management clusters for tests and the demo (never shipped).

Real etcd + kube-apiserver + kube-controller-manager processes carry the real CAPI CRDs; only
CAPI's controllers are simulated (``capisim.controller``). See docs/dev/CONTRACTS.md.
"""
