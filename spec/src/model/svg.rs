//! The Explorer's picture of a state (`Model::as_svg`): the cluster as a person draws it, then
//! the kubectl tables of the same objects.
//!
//! Without it the Explorer shows a state as its `Debug` output, hundreds of lines in which
//! who controls which pod is hard to see — and the races this model finds are about exactly
//! that: adoption, release, orphaning, deletion. So each ReplicaSet is a box holding the pods
//! it controls; pods whose controller reference names a ReplicaSet that no longer exists (or
//! one recreated under the same name, with another UID) sit in a box of their own, as do pods
//! with no controller at all (bare, or orphaned by the garbage collector: the API server
//! keeps no difference between the two). A ReplicaSet or pod being deleted is drawn dashed
//! and grey; a pod card shows its name, labels, status and readiness.
//!
//! The picture depends on the API server's objects only: the controllers' caches, queues and
//! expectations are in the Explorer's complete-state view.

use crate::api::ApiServer;
use crate::object::{render_labels, Meta, Pod, PodPhase, ReplicaSet};
use crate::render;
use std::fmt::Write;

/// Pixels per character of the 12px monospace font: a generous estimate, so text fits.
const CHAR: f64 = 7.4;
/// Pixels per character of the 11px font in pod cards.
const SMALL_CHAR: f64 = 6.8;
const LINE: f64 = 16.0;
const MARGIN: f64 = 12.0;
const GAP: f64 = 10.0;
const POD_HEIGHT: f64 = 58.0;
/// Pod cards per row inside a group.
const PER_ROW: usize = 4;
/// The smallest pod card, wide enough for a generated name and its status.
const MIN_POD_WIDTH: f64 = 170.0;

/// The picture of `api`'s objects and their kubectl tables, as one SVG document, headed by
/// the safety properties the state breaks (`violated`), if any: the Explorer's own page says
/// only what its search is doing, so a counterexample opened there (`rsmc explore --trace`)
/// names what it breaks here.
pub fn svg(api: &ApiServer, violated: &[&str]) -> String {
    let groups = groups(api);
    let pod_width = api
        .pods
        .values()
        .flat_map(|p| pod_lines(p).map(|l| l.chars().count()))
        .map(|n| n as f64 * SMALL_CHAR + 2.0 * GAP + 14.0)
        .fold(MIN_POD_WIDTH, f64::max);
    let tables = render::wide_tables(api);

    let mut body = String::new();
    let mut y = MARGIN;
    let mut width: f64 = 0.0;
    for name in violated {
        let line = format!("VIOLATES: {name}");
        y += LINE;
        text(
            &mut body,
            MARGIN,
            y,
            "class=\"violated\" fill=\"#b00020\" font-weight=\"bold\"",
            &line,
        );
        width = width.max(line.chars().count() as f64 * CHAR);
    }
    if !violated.is_empty() {
        y += GAP;
    }
    for group in &groups {
        let (w, h) = draw_group(&mut body, group, MARGIN, y, pod_width);
        width = width.max(w);
        y += h + GAP;
    }
    y += GAP;
    for line in tables.lines() {
        y += LINE;
        text(&mut body, MARGIN, y, "", line);
        width = width.max(line.chars().count() as f64 * CHAR);
    }
    let width = width + 2.0 * MARGIN;
    let height = y + MARGIN;
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" \
         font-family=\"monospace\" font-size=\"12\">\
         <rect width=\"100%\" height=\"100%\" rx=\"4\" fill=\"#ffffff\"/>{body}</svg>"
    )
}

/// What a group box stands for.
enum Group<'a> {
    /// A ReplicaSet and the pods it controls.
    Owner(&'a ReplicaSet),
    /// Pods whose controller reference names no live ReplicaSet: the garbage collector
    /// deletes them.
    ControllerGone,
    /// Pods with no controller reference.
    NoController,
}

/// The boxes to draw, with their pods: every ReplicaSet (even without pods), then the two
/// boxes of pods without a live controller when they have any.
fn groups(api: &ApiServer) -> Vec<(Group<'_>, Vec<&Pod>)> {
    let mut groups: Vec<(Group, Vec<&Pod>)> = api
        .replicasets
        .values()
        .map(|rs| (Group::Owner(rs), Vec::new()))
        .collect();
    let mut gone = Vec::new();
    let mut bare = Vec::new();
    for pod in api.pods.values() {
        let Some(r) = pod.meta.controller_ref() else {
            bare.push(pod.as_ref());
            continue;
        };
        let owner = groups
            .iter_mut()
            .find(|(g, _)| matches!(g, Group::Owner(rs) if rs.meta.name == r.name && rs.meta.uid == r.uid));
        match owner {
            Some((_, pods)) => pods.push(pod),
            None => gone.push(pod.as_ref()),
        }
    }
    if !gone.is_empty() {
        groups.push((Group::ControllerGone, gone));
    }
    if !bare.is_empty() {
        groups.push((Group::NoController, bare));
    }
    groups
}

/// Draws a group box at (x, y) with its title lines and pod cards; returns its size.
fn draw_group(
    out: &mut String,
    (group, pods): &(Group, Vec<&Pod>),
    x: f64,
    y: f64,
    pod_width: f64,
) -> (f64, f64) {
    let (title, detail, style) = match group {
        Group::Owner(rs) => (
            format!("ReplicaSet {}", rs.meta.name),
            rs_detail(rs),
            if rs.meta.is_deleting() {
                Style::OwnerDeleting
            } else {
                Style::Owner
            },
        ),
        Group::ControllerGone => (
            "controller gone".to_string(),
            format!(
                "{} no longer exists: the garbage collector deletes these",
                gone_controllers(pods)
            ),
            Style::ControllerGone,
        ),
        Group::NoController => (
            "no controller".to_string(),
            "bare, or orphaned (the API server keeps no difference)".into(),
            Style::NoController,
        ),
    };
    let rows = pods.len().div_ceil(PER_ROW);
    let columns = pods.len().clamp(1, PER_ROW) as f64;
    let width = (columns * (pod_width + GAP) + GAP)
        .max(title.chars().count().max(detail.chars().count()) as f64 * CHAR + 2.0 * GAP);
    let header = 2.0 * LINE + GAP;
    let height = header + rows.max(1) as f64 * (POD_HEIGHT + GAP);
    let (stroke, fill, dash) = style.colours();
    let _ = write!(
        out,
        "<g class=\"group {}\"><rect x=\"{x}\" y=\"{y}\" width=\"{width:.0}\" height=\"{height:.0}\" \
         rx=\"6\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"1.5\"{dash}/>",
        style.class()
    );
    text(
        out,
        x + GAP,
        y + LINE,
        &format!("font-weight=\"bold\" fill=\"{stroke}\""),
        &title,
    );
    text(out, x + GAP, y + 2.0 * LINE, "fill=\"#333333\"", &detail);
    if pods.is_empty() {
        text(
            out,
            x + GAP,
            y + header + LINE,
            "fill=\"#777777\" font-style=\"italic\"",
            "no pods",
        );
    }
    for (i, pod) in pods.iter().enumerate() {
        let px = x + GAP + (i % PER_ROW) as f64 * (pod_width + GAP);
        let py = y + header + (i / PER_ROW) as f64 * (POD_HEIGHT + GAP);
        draw_pod(out, pod, px, py, pod_width);
    }
    out.push_str("</g>");
    (width, height)
}

/// The controllers that pods' references name but that are gone: `ReplicaSet/frontend (uid
/// 1)`, comma-separated (a name recreated since shows with the old UID).
fn gone_controllers(pods: &[&Pod]) -> String {
    let mut refs: Vec<String> = pods
        .iter()
        .filter_map(|p| p.meta.controller_ref())
        .map(|r| format!("ReplicaSet/{} (uid {})", r.name, r.uid))
        .collect();
    refs.sort();
    refs.dedup();
    refs.join(", ")
}

/// `desired 2 · current 1 · ready 1 · selector tier=frontend`, and the deletion under way.
fn rs_detail(rs: &ReplicaSet) -> String {
    let mut detail = format!(
        "desired {} · current {} · ready {} · selector {}",
        rs.spec.replicas,
        rs.status.replicas,
        rs.status.ready_replicas,
        render::format_selector(&rs.spec.selector)
    );
    if rs.meta.is_deleting() {
        let _ = write!(detail, " · being deleted ({})", finalizers(&rs.meta));
    }
    detail
}

fn finalizers(meta: &Meta) -> String {
    if meta.finalizers.is_empty() {
        return "no finalizers".into();
    }
    let names: Vec<_> = meta.finalizers.iter().map(|f| f.as_str()).collect();
    names.join(",")
}

/// A pod card's text lines: name, labels, status (with readiness and node).
fn pod_lines(pod: &Pod) -> impl Iterator<Item = String> {
    let node = match &pod.node_name {
        Some(n) => format!("on {n}"),
        None => "unscheduled".into(),
    };
    let readiness = if pod.is_ready() { "ready" } else { "not ready" };
    [
        pod.meta.name.clone(),
        render_labels(&pod.meta.labels),
        format!("{} · {readiness} · {node}", render::pod_status(pod)),
    ]
    .into_iter()
}

/// A pod card: a readiness dot before the name; dashed and grey once terminating, red when
/// failed.
fn draw_pod(out: &mut String, pod: &Pod, x: f64, y: f64, width: f64) {
    let style = if pod.meta.is_deleting() {
        Style::PodTerminating
    } else if pod.phase == PodPhase::Failed {
        Style::PodFailed
    } else {
        Style::Pod
    };
    let (stroke, fill, dash) = style.colours();
    let _ = write!(
        out,
        "<g class=\"pod {}\"><rect x=\"{x}\" y=\"{y}\" width=\"{width:.0}\" \
         height=\"{POD_HEIGHT}\" rx=\"4\" fill=\"{fill}\" stroke=\"{stroke}\"{dash}/>",
        style.class()
    );
    let dot = if pod.is_ready() { "#2e8b57" } else { "none" };
    let _ = write!(
        out,
        "<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{dot}\" stroke=\"#2e8b57\"/>",
        x + 10.0,
        y + LINE - 4.0
    );
    let text_colour = if style == Style::PodTerminating {
        "#666666"
    } else {
        "#111111"
    };
    for (i, line) in pod_lines(pod).enumerate() {
        let attrs = match i {
            0 => format!("font-weight=\"bold\" fill=\"{text_colour}\""),
            _ => format!("font-size=\"11\" fill=\"{text_colour}\""),
        };
        let indent = if i == 0 { 20.0 } else { 8.0 };
        text(out, x + indent, y + (i + 1) as f64 * LINE, &attrs, &line);
    }
    out.push_str("</g>");
}

/// How a box is drawn: grey and dashed while being deleted, red where something is wrong.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Owner,
    OwnerDeleting,
    ControllerGone,
    NoController,
    Pod,
    PodTerminating,
    PodFailed,
}

const DASHED: &str = " stroke-dasharray=\"5,3\"";

impl Style {
    /// Stroke, fill and the dash attribute.
    fn colours(self) -> (&'static str, &'static str, &'static str) {
        match self {
            Style::Owner => ("#1f4e99", "#eef3fb", ""),
            Style::OwnerDeleting | Style::PodTerminating => ("#888888", "#eeeeee", DASHED),
            Style::ControllerGone => ("#b03a2e", "#fdf0ef", DASHED),
            Style::PodFailed => ("#b03a2e", "#fdf0ef", ""),
            Style::NoController => ("#555555", "#f7f7f7", ""),
            Style::Pod => ("#333333", "#ffffff", ""),
        }
    }

    /// Class names, so the elements can be found (and tested) by what they mean.
    fn class(self) -> &'static str {
        match self {
            Style::Owner => "replicaset",
            Style::OwnerDeleting => "replicaset deleting",
            Style::ControllerGone => "controller-gone",
            Style::NoController => "no-controller",
            Style::Pod => "live",
            Style::PodTerminating => "terminating",
            Style::PodFailed => "failed",
        }
    }
}

/// One line of text, white space kept (tables are laid out with spaces).
fn text(out: &mut String, x: f64, y: f64, attrs: &str, content: &str) {
    let _ = write!(
        out,
        "<text x=\"{x}\" y=\"{y}\" xml:space=\"preserve\" style=\"white-space:pre\" {attrs}>{}</text>",
        escape(content)
    );
}

/// XML text escaping: names are DNS labels, but `<none>` and selectors are not.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            _ => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{labels, Finalizer, LabelSelector, OwnerReference, Uid};
    use std::sync::Arc;

    fn frontend(uid: Uid) -> ReplicaSet {
        let mut rs = ReplicaSet::new(
            "frontend",
            2,
            LabelSelector::match_labels(&[("tier", "frontend")]),
            labels(&[("tier", "frontend")]),
        );
        rs.meta.uid = uid;
        rs
    }

    /// A running pod labelled tier=frontend on node-1, controlled by `owner` if given.
    fn pod(name: &str, owner: Option<Uid>, ready: bool) -> Pod {
        let mut pod = Pod::new(name, labels(&[("tier", "frontend")]));
        pod.node_name = Some("node-1".into());
        pod.phase = PodPhase::Running;
        pod.ready_since = ready.then_some(0);
        if let Some(uid) = owner {
            pod.meta.owner_references = vec![OwnerReference::controller_of("frontend", uid)];
        }
        pod
    }

    fn cluster(replicasets: Vec<ReplicaSet>, pods: Vec<Pod>) -> ApiServer {
        ApiServer {
            replicasets: replicasets
                .into_iter()
                .map(|rs| (rs.meta.name.clone(), Arc::new(rs)))
                .collect(),
            pods: pods
                .into_iter()
                .map(|p| (p.meta.name.clone(), Arc::new(p)))
                .collect(),
            ..ApiServer::default()
        }
    }

    /// The part of the picture from the group box with these classes to the next box.
    fn group<'a>(svg: &'a str, classes: &str) -> &'a str {
        let marker = format!("<g class=\"group {classes}\">");
        let start = svg
            .find(&marker)
            .unwrap_or_else(|| panic!("no {marker} in {svg}"));
        let rest = &svg[start + marker.len()..];
        let end = rest.find("<g class=\"group ").unwrap_or(rest.len());
        &rest[..end]
    }

    #[test]
    fn owned_orphaned_dangling_and_terminating_pods() {
        let mut terminating = pod("frontend-b9xkq", Some(1), true);
        terminating.meta.deletion_timestamp = Some(7);
        let api = cluster(
            vec![frontend(1)],
            vec![
                pod("frontend-c2d4f", Some(1), true),
                terminating,
                // Controlled by an earlier `frontend` (UID 9) that is gone.
                pod("frontend-zz9x2", Some(9), false),
                pod("pod1", None, false),
            ],
        );
        let svg = svg(&api, &[]);
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>"));
        assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());

        let owner = group(&svg, "replicaset");
        assert!(owner.contains(">ReplicaSet frontend</text>"));
        assert!(owner.contains("desired 2 · current 0 · ready 0 · selector tier=frontend</text>"));
        assert!(owner.contains("<g class=\"pod live\">"));
        assert!(owner.contains(">frontend-c2d4f</text>"));
        assert!(owner.contains(">Running · ready · on node-1</text>"));
        // The terminating pod is still the ReplicaSet's, drawn dashed and grey.
        let card = &owner[owner
            .find("<g class=\"pod terminating\">")
            .expect("terminating")..];
        assert!(card.contains("stroke-dasharray"));
        assert!(card.contains(">frontend-b9xkq</text>"));
        assert!(card.contains(">Terminating · ready · on node-1</text>"));

        let gone = group(&svg, "controller-gone");
        assert!(gone.contains(">ReplicaSet/frontend (uid 9) no longer exists: "));
        assert!(gone.contains(">frontend-zz9x2</text>"));
        assert!(!gone.contains("frontend-c2d4f"));
        let bare = group(&svg, "no-controller");
        assert!(bare.contains(">pod1</text>"));
        assert!(bare.contains(">tier=frontend</text>"));
        assert!(bare.contains(">Running · not ready · on node-1</text>"));

        // The kubectl tables follow, escaped.
        assert!(svg.contains(">$ kubectl get pods -o wide --show-labels</text>"));
        assert!(svg.contains("ReplicaSet/frontend (gone)"));
        assert!(svg.contains("&lt;none&gt;"));
    }

    #[test]
    fn a_replicaset_being_deleted_and_an_empty_cluster() {
        let mut rs = frontend(1);
        rs.meta.deletion_timestamp = Some(3);
        rs.meta.finalizers = vec![Finalizer::ForegroundDeletion];
        let svg = svg(&cluster(vec![rs], vec![]), &[]);
        let owner = group(&svg, "replicaset deleting");
        assert!(owner.contains("stroke-dasharray"));
        assert!(owner.contains(" · being deleted (foregroundDeletion)</text>"));
        assert!(owner.contains(">no pods</text>"));
        assert!(!svg.contains("no-controller"));

        let empty = super::svg(&ApiServer::default(), &[]);
        assert!(empty.contains("No resources found in default namespace."));
    }
}
