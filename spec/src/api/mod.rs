//! The API server: requests, validation, errors, the event log.

pub mod error;
pub mod log;
pub mod names;
pub mod pattern;
pub mod request;
pub mod server;
pub mod validation;

pub use error::{ApiError, Reason};
pub use log::{Change, Event, EventType, Kind, View};
pub use pattern::{RequestPattern, Resource, Verb};
pub use request::{DeleteOptions, OwnerRefPatch, Propagation, Request, Response};
pub use server::ApiServer;
