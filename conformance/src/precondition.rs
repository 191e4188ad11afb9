//! The runner's writes that the recording attributes by their answer, conditioned on the
//! resourceVersion the runner read just before.
//!
//! A write that changes nothing (re-applying an unchanged manifest, scaling to the current
//! count, setting a label a pod already has) makes no event, and the API server answers with
//! the object as it is. Its resourceVersion is then the last writer's: if the controller
//! wrote in between the runner's read and its request, the runner would take the
//! controller's event for its own. That happened on v1.37.2 with two suites sharing the
//! cores: re-applying `frontend.yaml` while the old frontend was still being deleted answered
//! with the controller's status update, which the recording then gave to the user's step, and
//! the oracle rightly found that the user cannot write a status.
//!
//! With the resourceVersion read as a precondition nobody can write in between: an answer
//! whose resourceVersion differs from it is this write's own event, and an answer with the
//! same one changed nothing. A conflict (someone wrote after the read) is read and tried
//! again: the model's step lands a little later, which is one of the interleavings it allows.
//!
//! Deletes are conditioned the same way ([`delete`]), for the same reason: the answer to a
//! delete of an object someone else has just marked deleting (the controller deleting the
//! very pod the user's step picked) is the object marked deleting, exactly the answer to
//! the delete that marked it — seen on kind with the reference controller, whose deletion
//! the recording then gave to the user's step. A delete taken on the version the runner read
//! made the object's next deleting event, unless that version was already deleting.

use kube::api::{DeleteParams, Preconditions};
use kube::core::Status;
use kube::{Api, ResourceExt};
use serde::de::DeserializeOwned;
use std::future::Future;

/// How many times a write refused for a conflict is read and tried again before the step
/// fails (the controller would have to write between every read and request).
pub const ATTEMPTS: usize = 10;

/// The resourceVersion of the object `name`, or `None` when there is no such object.
pub async fn version_of<K>(api: &Api<K>, name: &str) -> Result<Option<String>, kube::Error>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    Ok(api
        .get_opt(name)
        .await?
        .and_then(|o| o.meta().resource_version.clone()))
}

/// Read the object's resourceVersion (`read`: `None` when the object does not exist), then
/// `write` conditioned on it, again while the answer is a conflict (at most [`ATTEMPTS`]).
/// `write` answers with the resourceVersion of the object as written; the result is that
/// resourceVersion when it is this write's own event, and `None` when the write changed
/// nothing (the answer kept the version the write was conditioned on).
pub async fn write<R, RF, W, WF>(mut read: R, mut write: W) -> Result<Option<String>, kube::Error>
where
    R: FnMut() -> RF,
    RF: Future<Output = Result<Option<String>, kube::Error>>,
    W: FnMut(Option<String>) -> WF,
    WF: Future<Output = Result<Option<String>, kube::Error>>,
{
    let mut attempt = 1;
    loop {
        let before = read().await?;
        match write(before.clone()).await {
            Err(e) if attempt < ATTEMPTS && conflict(&e) => attempt += 1,
            answer => return Ok(answer?.filter(|after| Some(after) != before.as_ref())),
        }
    }
}

/// Delete the object `before` is, conditioned on its uid and resourceVersion as read; while
/// the answer is a conflict (at most [`ATTEMPTS`]) read it again and delete that. Returns the
/// object as read for the delete that was taken. A 404 means it is gone, and so does another
/// object of the same name found on a re-read (the one read was deleted and made again).
pub async fn delete<K>(api: &Api<K>, mut before: K, params: &DeleteParams) -> Result<K, kube::Error>
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug,
{
    let name = before.name_any();
    let uid = before.uid();
    let mut attempt = 1;
    loop {
        let conditioned = DeleteParams {
            preconditions: Some(Preconditions {
                uid: uid.clone(),
                resource_version: before.resource_version(),
            }),
            ..params.clone()
        };
        match api.delete(&name, &conditioned).await {
            Err(e) if attempt < ATTEMPTS && conflict(&e) => {
                attempt += 1;
                before = api.get(&name).await?;
                if before.uid() != uid {
                    let gone = format!("{name} was deleted and made again after it was read");
                    return Err(kube::Error::Api(
                        Status::failure(&gone, "NotFound").with_code(404).boxed(),
                    ));
                }
            }
            answer => return answer.map(|_| before),
        }
    }
}

/// A 409: the object changed after the read (the runner's server-side applies force their
/// fields, so a field-manager conflict is not one of these).
fn conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// `body` with `metadata.resourceVersion` set to `rv` (removed when there is none).
pub fn with_resource_version(body: &serde_json::Value, rv: Option<&str>) -> serde_json::Value {
    let mut body = body.clone();
    if let Some(meta) = body.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        match rv {
            Some(rv) => meta.insert("resourceVersion".into(), rv.into()),
            None => meta.remove("resourceVersion"),
        };
    }
    body
}
