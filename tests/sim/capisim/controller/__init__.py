"""The simulated Cluster API controllers (MachineDeployment, MachineSet, Machine, KubeadmControlPlane, Cluster).

Pure decision logic lives in ``fenceposts``, ``mdplan``, ``msplan``, ``kcpplan`` and ``status`` (dicts in, plans out,
no I/O) so that it can be unit-tested against the reference's tables and golden traces; ``loop`` and the
``reconcile_*`` modules apply those plans to a real API server like a controller-runtime manager would.
Run it with ``python -m capisim.controller --kubeconfig PATH --capi-version RELEASE`` (a release of capisim.releases).
"""
