//! The model's kubectl views of every seed scenario (`conformance/scenarios/`), settle point
//! by settle point, as committed insta snapshots. A change to what the model lets a cluster
//! show for a documented example is a snapshot diff someone reviews. Generated pod names are
//! filtered (`frontend-#####`); which pods exist, their owners, readiness and labels are not.

use rsmc_oracle::prepared::Prepared;
use rsmc_oracle::replay;
use rsmc_oracle::views::render::generated_name_filters;
use rsmc_spec::profile::Profile;
use std::path::Path;

fn replay_of(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/scenarios")
        .join(file);
    let prepared = Prepared::load(&path, Profile::K8s120).unwrap();
    replay::render(
        &replay::replay(&prepared.subject(), &rsmc_oracle::explore::default_budget()).unwrap(),
    )
}

macro_rules! seed {
    ($test:ident, $file:literal) => {
        #[test]
        fn $test() {
            let text = replay_of($file);
            insta::with_settings!({filters => generated_name_filters()}, {
                insta::assert_snapshot!(text);
            });
        }
    };
}

seed!(frontend, "frontend.yaml");
seed!(bare_pods_after, "bare-pods-after.yaml");
seed!(bare_pods_before, "bare-pods-before.yaml");
seed!(scale, "scale.yaml");
seed!(delete_background, "delete-background.yaml");
seed!(delete_foreground, "delete-foreground.yaml");
seed!(delete_orphan, "delete-orphan.yaml");
seed!(isolate_by_relabelling, "isolate-by-relabelling.yaml");

/// The seed's numbers, asserted outright (the snapshots hold the rest).
#[test]
fn the_seed_examples_settle_as_documented() {
    let frontend = replay_of("frontend.yaml");
    assert!(
        frontend.contains("frontend   3         3         3       tier=frontend\n"),
        "{frontend}"
    );
    // The status line: every count of status, the generation observed.
    assert!(
        frontend.contains("frontend   1            1          3          3               3       3           <none>\n"),
        "{frontend}"
    );
    let before = replay_of("bare-pods-before.yaml");
    assert!(
        before.contains("pod1")
            && before.contains("pod2")
            && before.matches("ReplicaSet/frontend").count() >= 3,
        "bare pods created first are adopted: {before}"
    );
}
