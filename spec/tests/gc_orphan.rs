//! Orphaning is one patch per dependent, in any order, and the `orphan` finalizer goes only
//! once the garbage collector's view shows no dependent left (garbagecollector.go
//! `attemptToOrphanWorker` / `orphanDependents`).

mod common;

use common::{create_pod, create_rs, must, new_pod, replicaset};
use rsmc_spec::api::{ApiServer, DeleteOptions, Propagation, Request};
use rsmc_spec::gc::{request, work_items, GcWork};
use rsmc_spec::object::{Finalizer, OwnerReference};

fn owned_pod(api: &mut ApiServer, name: &str, owner: &str, owner_uid: u32) {
    let mut pod = new_pod(name);
    pod.meta.owner_references = vec![OwnerReference::controller_of(owner, owner_uid)];
    create_pod(api, pod);
}

#[test]
fn each_dependent_is_orphaned_by_its_own_step_then_the_finalizer_goes() {
    let mut api = ApiServer::default();
    let rs = create_rs(&mut api, replicaset("web", 2));
    owned_pod(&mut api, "a", "web", rs.meta.uid);
    owned_pod(&mut api, "b", "web", rs.meta.uid);
    must(
        &mut api,
        Request::DeleteReplicaSet {
            name: "web".into(),
            options: DeleteOptions {
                propagation: Some(Propagation::Orphan),
                ..DeleteOptions::default()
            },
        },
    );
    let view = |api: &ApiServer| (api.replicasets_at(api.rv), api.pods_at(api.rv));

    // Both dependents are work of their own; the finalizer removal is not yet enabled.
    let (rss, pods) = view(&api);
    let items = work_items(&rss, &pods, &[]);
    let dependents: Vec<&str> = items
        .iter()
        .filter_map(|w| match w {
            GcWork::OrphanDependent { pod, .. } => Some(pod.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(dependents, vec!["a", "b"]);
    assert!(!items.iter().any(|w| matches!(w, GcWork::Orphan { .. })));

    // Orphan b first: another order than the name order, as goroutines allow.
    let b = items
        .iter()
        .find(|w| matches!(w, GcWork::OrphanDependent { pod, .. } if pod == "b"))
        .unwrap();
    let req = request(b, &api, &pods).expect("b is still owned");
    must(&mut api, req);
    assert!(api.pods["b"].meta.owner_references.is_empty());
    assert!(api.replicasets["web"].meta.has_finalizer(Finalizer::Orphan));

    // A stale view still shows b owned: its patch would change nothing and is no request.
    assert!(request(b, &api, &pods).is_none());

    let (rss, pods) = view(&api);
    let items = work_items(&rss, &pods, &[]);
    assert_eq!(items.len(), 1, "{items:?}");
    let req = request(&items[0], &api, &pods).expect("a is still owned");
    must(&mut api, req);

    let (rss, pods) = view(&api);
    let items = work_items(&rss, &pods, &[]);
    assert!(matches!(&items[..], [GcWork::Orphan { .. }]), "{items:?}");
    let req = request(&items[0], &api, &pods).expect("the finalizer is there");
    must(&mut api, req);
    assert!(api.replicasets.is_empty());
    assert_eq!(api.pods.len(), 2);
}
