use rsmc_spec::{
    config::Config,
    model::{RsModel, State},
    profile::Profile,
};
use stateright::{Checker, Model, StateRecorder};
use std::collections::HashSet;
fn strip_rv(s: &State) -> State {
    let mut s = s.clone();
    // order-preserving dense renumbering of every rv in the state
    let mut rvs = std::collections::BTreeSet::new();
    let j = serde_json::to_value(&s).unwrap();
    let _ = j;
    for r in s.api.replicasets.values() {
        rvs.insert(r.meta.resource_version);
    }
    for p in s.api.pods.values() {
        rvs.insert(p.meta.resource_version);
    }
    for r in s.api.replicasets.values_mut() {
        r.meta.resource_version = 0;
        r.meta.created = 0;
        r.meta.deletion_timestamp = r.meta.deletion_timestamp.map(|_| 0);
    }
    for p in s.api.pods.values_mut() {
        p.meta.resource_version = 0;
    }
    s
}
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cfg = Config::load(&args[1]).unwrap();
    let model = RsModel::new(cfg, Profile::K8s120);
    let (rec, acc) = StateRecorder::new_with_accessor();
    let c = model
        .clone()
        .checker()
        .threads(1)
        .visitor(rec)
        .spawn_bfs()
        .join();
    let states = acc();
    println!("unique {} visited {}", c.unique_state_count(), states.len());
    let mut quiet = 0;
    let mut proj_q = HashSet::new();
    let mut logs = 0usize;
    let mut p1 = HashSet::new();
    for s in &states {
        logs += s.api.log.len();
        let mut a = Vec::new();
        model.actions(s, &mut a);
        p1.insert(strip_rv(s));
        let mut t = s.clone();
        t.api.log.clear();
        t.controllers
            .iter_mut()
            .for_each(|c| c.seen = Default::default());
        t.gc = Default::default();
        proj_q.insert((t.api.replicasets.clone(), t.api.pods.clone()));
        if a.iter().all(|x| x.is_environment()) {
            quiet += 1;
        }
    }
    println!(
        "quiescent-ish {quiet}, distinct clusters {} , rv-stripped {} avg log {}",
        proj_q.len(),
        p1.len(),
        logs as f64 / states.len() as f64
    );
}
