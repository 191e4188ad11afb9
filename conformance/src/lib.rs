//! rsmc-conformance: replaying rsmc scenarios and traces against real Kubernetes clusters
//! (a local etcd + kube-apiserver + kube-controller-manager, kind, or any kubeconfig) and
//! judging what they did with the oracle.
//!
//! The runner arrives with the conformance work; until then this crate only fixes the
//! workspace layout, so that `rsmc-conformance` is where that code goes.
