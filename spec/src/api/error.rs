//! API errors, shaped like the `metav1.Status` a real API server returns.

use serde::{Deserialize, Serialize};
use std::fmt;

/// The `reason` of a failed request (staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go
/// `StatusReason`), with its HTTP code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Reason {
    /// 404.
    NotFound,
    /// 409: a resourceVersion or UID precondition failed.
    Conflict,
    /// 409: the name is taken.
    AlreadyExists,
    /// 422: validation failed.
    Invalid,
    /// 403: refused, e.g. by a ResourceQuota.
    Forbidden,
}

impl Reason {
    /// Every reason, in the order error messages list them.
    pub const ALL: [Reason; 5] = [
        Reason::NotFound,
        Reason::Conflict,
        Reason::AlreadyExists,
        Reason::Invalid,
        Reason::Forbidden,
    ];

    /// The reason as `metav1.Status.reason` spells it.
    pub fn name(self) -> &'static str {
        match self {
            Reason::NotFound => "NotFound",
            Reason::Conflict => "Conflict",
            Reason::AlreadyExists => "AlreadyExists",
            Reason::Invalid => "Invalid",
            Reason::Forbidden => "Forbidden",
        }
    }

    pub fn code(self) -> u16 {
        match self {
            Reason::NotFound => 404,
            Reason::Conflict | Reason::AlreadyExists => 409,
            Reason::Invalid => 422,
            Reason::Forbidden => 403,
        }
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Reason {
    type Err = String;

    /// A reason as a scenario or `metav1.Status.reason` spells it.
    fn from_str(s: &str) -> Result<Self, String> {
        Reason::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Reason::ALL.iter().map(|r| r.name()).collect();
                format!("unknown reason {s:?}, expected one of {}", names.join(", "))
            })
    }
}

/// A failed request: the reason plus the message a client would print.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ApiError {
    pub reason: Reason,
    pub message: String,
}

impl ApiError {
    pub fn not_found(resource: &str, name: &str) -> Self {
        ApiError {
            reason: Reason::NotFound,
            message: format!("{resource} \"{name}\" not found"),
        }
    }

    pub fn already_exists(resource: &str, name: &str) -> Self {
        ApiError {
            reason: Reason::AlreadyExists,
            message: format!("{resource} \"{name}\" already exists"),
        }
    }

    /// The optimistic-concurrency failure of an update with a stale resourceVersion
    /// (apiserver registry/generic/registry/store.go `Update` → `NewConflict`).
    pub fn stale_resource_version(resource: &str, name: &str) -> Self {
        ApiError {
            reason: Reason::Conflict,
            message: format!(
                "Operation cannot be fulfilled on {resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        }
    }

    /// A failed UID precondition on delete (store.go `Delete` → `checkPreconditions`).
    pub fn uid_precondition(resource: &str, name: &str, wanted: u32, actual: u32) -> Self {
        ApiError {
            reason: Reason::Conflict,
            message: format!(
                "Operation cannot be fulfilled on {resource} \"{name}\": Precondition failed: UID in precondition: {wanted}, UID in object meta: {actual}"
            ),
        }
    }

    /// A failed resourceVersion precondition on delete (store.go `Delete` →
    /// `checkPreconditions`): the object was written after the version the client saw.
    pub fn resource_version_precondition(
        resource: &str,
        name: &str,
        wanted: u32,
        actual: u32,
    ) -> Self {
        ApiError {
            reason: Reason::Conflict,
            message: format!(
                "Operation cannot be fulfilled on {resource} \"{name}\": Precondition failed: ResourceVersion in precondition: {wanted}, ResourceVersion in object meta: {actual}"
            ),
        }
    }

    /// A 422 for `kind "name"` with one or more field errors.
    pub fn invalid(kind: &str, name: &str, causes: &[String]) -> Self {
        ApiError {
            reason: Reason::Invalid,
            message: format!("{kind}.apps \"{name}\" is invalid: {}", causes.join(", "))
                .replace("Pod.apps", "Pod"),
        }
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({:?}): {}",
            self.reason.code(),
            self.reason,
            self.message
        )
    }
}

impl std::error::Error for ApiError {}
