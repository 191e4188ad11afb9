//! Re-expresses `TestControllerBurstReplicas` (pkg/controller/replicaset/replica_set_test.go):
//! one sync creates or deletes at most `BurstReplicas` pods, expects exactly that many, and
//! leaves the rest to the next sync once the expectations are met.

mod common;

use common::*;
use rsmc_spec::api::ApiServer;
use rsmc_spec::controller::Expectations;
use rsmc_spec::profile::Profile;

#[test]
fn scale_up_is_capped_at_the_burst_and_expected_exactly() {
    for profile in Profile::ALL {
        let sem = profile.semantics();
        let mut api = ApiServer::default();
        create_rs(&mut api, replicaset("web", 5));
        let mut exp = Expectations::default();
        let at = api.rv;
        let run = run_sync_burst(&mut api, "web", at, &sem, &mut exp, 2, |_| None);
        assert_eq!(run.creates(), 2, "{profile}: only a burst's worth");
        assert_eq!(
            exp.0["web"].add, 2,
            "{profile}: the burst is what is expected"
        );
        assert!(
            !exp.satisfied("web"),
            "{profile}: the next sync waits for the creates"
        );
        // Once both creates are observed the next sync creates the next burst.
        exp.creation_observed("web");
        exp.creation_observed("web");
        let at = api.rv;
        let run = run_sync_burst(&mut api, "web", at, &sem, &mut exp, 2, |_| None);
        assert_eq!(run.creates(), 2, "{profile}: second burst");
        assert_eq!(api.pods.len(), 4, "{profile}");
    }
}

#[test]
fn scale_down_is_capped_at_the_burst() {
    for profile in Profile::ALL {
        let sem = profile.semantics();
        let mut api = ApiServer::default();
        let rs = create_rs(&mut api, replicaset("web", 0));
        for name in ["a", "b", "c", "d", "e"] {
            create_pod(&mut api, new_pod(name).controlled_by(&rs));
        }
        let mut exp = Expectations::default();
        let at = api.rv;
        let run = run_sync_burst(&mut api, "web", at, &sem, &mut exp, 2, |_| None);
        assert_eq!(run.deletes().len(), 2, "{profile}: only a burst's worth");
        assert_eq!(exp.0["web"].del, 2, "{profile}");
        assert_eq!(api.pods.len(), 3, "{profile}");
    }
}
