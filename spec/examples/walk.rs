use rsmc_spec::{
    config::Config,
    model::{Action, RsModel},
    profile::Profile,
};
use stateright::Model;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cfg = Config::load(&args[1]).unwrap();
    let model = RsModel::new(cfg, Profile::K8s120);
    let walks: u64 = args[2].parse().unwrap();
    let mut maxpods = 0;
    for seed0 in 0..walks {
        let mut seed = seed0 * 7919 + 1;
        let mut s = model.init_states().remove(0);
        let mut trail = Vec::new();
        for _ in 0..300 {
            let mut acts = Vec::new();
            model.actions(&s, &mut acts);
            let acts: Vec<Action> = acts
                .into_iter()
                .filter(|a| model.next_state(&s, a.clone()).is_some())
                .collect();
            if acts.is_empty() {
                break;
            }
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = acts[(seed >> 33) as usize % acts.len()].clone();
            trail.push(format!("rv={} {a}", s.api.rv));
            s = model.next_state(&s, a).unwrap();
            maxpods = maxpods.max(s.api.pods.len());
            if !s.ghost.violated.is_empty() {
                println!("VIOLATION {:?}", s.ghost.violated);
                for t in &trail {
                    println!("  {t}");
                }
                return;
            }
        }
    }
    println!("none; max pods {maxpods}");
}
