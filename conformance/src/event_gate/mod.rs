//! The event gate: an HTTP proxy between the ReplicaSet controller under test and the API
//! server that can hold back the watch events of one resource type.
//!
//! The model lets a controller's informer fall behind (`maxLag`), and a scenario can make it
//! fall behind on purpose (`hold: pods` … `release: pods`): that is how the races of the bug
//! catalogue — a sync deciding from a cache that misses its own creations, an orphaning, a
//! replaced pod — become runs a real cluster takes every time instead of once in a while.
//! On a cluster the runner forces it here, in the path of the controller's watches: while a
//! type is held, the gate keeps reading the API server's watch responses of that type (so the
//! server never sees a slow client) and keeps what it read; on release it passes everything
//! on in order. Requests are otherwise forwarded untouched: lists, gets, writes and the
//! other types' watches, so the controller's live reads and its writes are never delayed —
//! exactly the model's held informer.
//!
//! The local control plane runs the gate as a component of its own (`rsmc event-gate`,
//! plain HTTP on loopback, in front of the HTTPS API server): `kcm-replicaset` talks to the
//! API server through it, and an external controller gets its kubeconfig
//! (`controller.kubeconfig`). The runner steers it over the same port, on paths no API
//! server serves:
//! - `PUT /rsmc-gate/hold/{pods|replicasets}`, `PUT /rsmc-gate/release/{pods|replicasets}`,
//!   `PUT /rsmc-gate/release` (everything);
//! - `PUT /rsmc-gate/requests/hold`, `PUT /rsmc-gate/requests/release`,
//!   `PUT /rsmc-gate/requests/rehold` (release and hold again at once) with a
//!   [`RequestHold`] as JSON: the controller's requests in a namespace that a pattern catches
//!   wait in the gate until released ([`held_requests`]);
//! - `GET /rsmc-gate/status`: what is held, how many watches of each type are open (so a
//!   runner can tell whether the controller watches through the gate at all), how far the
//!   controller's watches have got ([`progress`]) and what each hold of requests has caught.

mod held_requests;
pub mod progress;

pub use held_requests::{HeldRequests, RequestHold};

use bytes::Bytes;
use held_requests::RequestHolds;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rsmc_oracle::scenario::resource_name;
use rsmc_spec::api::Kind;
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The path prefix of the gate's own endpoints.
const CONTROL: &str = "/rsmc-gate";

type Body = BoxBody<Bytes, hyper::Error>;

/// What a running gate knows.
struct Gate {
    upstream: Uri,
    /// `Bearer TOKEN` for requests that carry no credentials of their own: clients do not
    /// send a token to a plain-HTTP server (client-go refuses), so the gate adds it.
    authorization: Option<hyper::header::HeaderValue>,
    client: Client<hyper_rustls::HttpsConnector<HttpConnector>, Incoming>,
    /// Per type ([`index`]): its watches through the gate.
    watches: [Arc<Watches>; 2],
    requests: RequestHolds,
    /// Per namespace, when a request in it was last answered with an error (see
    /// [`GateStatus::failed`]).
    failed: std::sync::Mutex<std::collections::BTreeMap<String, std::time::Instant>>,
}

/// What the gate knows of the watches of one resource type.
#[derive(Default)]
struct Watches {
    /// Whether their events are held.
    held: watch::Sender<bool>,
    /// How many are open.
    open: AtomicUsize,
    /// The newest resourceVersion passed on in any of them ([`progress`]).
    delivered: AtomicU64,
    /// Whether some could not be read (then `delivered` tells nothing).
    unreadable: AtomicBool,
}

impl Gate {
    fn watches(&self, kind: Kind) -> &Arc<Watches> {
        &self.watches[index(kind)]
    }
}

fn index(kind: Kind) -> usize {
    match kind {
        Kind::ReplicaSet => 0,
        Kind::Pod => 1,
    }
}

const KINDS: [Kind; 2] = [Kind::ReplicaSet, Kind::Pod];

/// What `GET /rsmc-gate/status` answers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateStatus {
    pub held: PerType<bool>,
    pub watches: PerType<usize>,
    #[serde(default)]
    pub requests: Vec<HeldRequests>,
    /// Per namespace, the milliseconds since a request of the gate's controller in it was last
    /// answered with an error (not 404, which the controllers take as done). The controller
    /// retries such a sync after a backoff that its work queue does not show
    /// ([`crate::workqueues`]), so a settle point reading the queues waits out the quiet
    /// window after it.
    #[serde(default)]
    pub failed: std::collections::BTreeMap<String, u64>,
    /// Per type, the newest resourceVersion the gate has passed on to the controller in a
    /// watch event (or bookmark), `None` where some watch of that type could not be read
    /// ([`progress`]): events come in resourceVersion order, so the controller has every
    /// event up to it.
    #[serde(default)]
    pub delivered: PerType<Option<u64>>,
}

/// One value per resource type the gate knows.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PerType<T> {
    pub replicasets: T,
    pub pods: T,
}

impl<T: Copy> PerType<T> {
    pub fn get(&self, kind: Kind) -> T {
        match kind {
            Kind::ReplicaSet => self.replicasets,
            Kind::Pod => self.pods,
        }
    }
}

/// The watch of `uri`, when it is one of pods or ReplicaSets (cluster-wide or namespaced).
fn watched(uri: &Uri) -> Option<Kind> {
    let watch = uri
        .query()
        .is_some_and(|q| q.split('&').any(|kv| kv == "watch=true" || kv == "watch=1"));
    if !watch {
        return None;
    }
    let path = uri.path().trim_end_matches('/');
    let last = path.rsplit('/').next()?;
    match last {
        "pods" if path.starts_with("/api/v1/") => Some(Kind::Pod),
        "replicasets" if path.starts_with("/apis/apps/v1/") => Some(Kind::ReplicaSet),
        _ => None,
    }
}

/// Serve the gate on `listen` in front of the API server at `upstream` (whose certificate
/// `ca` signs), until the process is told to stop. Requests without credentials are sent
/// with the bearer token `token`.
pub async fn serve(
    listen: SocketAddr,
    upstream: &str,
    ca: &Path,
    token: Option<&str>,
) -> Result<(), String> {
    let authorization = token
        .map(|t| hyper::header::HeaderValue::from_str(&format!("Bearer {t}")))
        .transpose()
        .map_err(|e| format!("the token: {e}"))?;
    let upstream: Uri = upstream
        .parse()
        .map_err(|e| format!("--upstream {upstream}: {e}"))?;
    let connector = crate::tls::connector(ca)?;
    let gate = Arc::new(Gate {
        upstream,
        authorization,
        client: Client::builder(TokioExecutor::new()).build(connector),
        watches: [Arc::default(), Arc::default()],
        requests: RequestHolds::default(),
        failed: Default::default(),
    });
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
    eprintln!(
        "event gate: listening on http://{listen}, forwarding to {}",
        gate.upstream
    );
    let mut stop = stop_signal()?;
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted.map_err(|e| e.to_string())?,
            _ = &mut stop => {
                eprintln!("event gate: stopping");
                return Ok(());
            }
        };
        let gate = gate.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(gate.clone(), req));
            // Errors of one connection (a client that went away) end that connection only.
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Resolves on SIGTERM or SIGINT.
fn stop_signal() -> Result<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>, String>
{
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).map_err(|e| e.to_string())?;
    let mut int = signal(SignalKind::interrupt()).map_err(|e| e.to_string())?;
    Ok(Box::pin(async move {
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
    }))
}

async fn handle(gate: Arc<Gate>, req: Request<Incoming>) -> Result<Response<Body>, Infallible> {
    if req.uri().path().starts_with(CONTROL) {
        return Ok(control(&gate, req).await);
    }
    if let Some(target) = held_requests::target_of(req.method(), req.uri()) {
        gate.requests.pass(&target).await;
    }
    let namespace = namespace_of(req.uri().path()).map(str::to_string);
    let resp = forward(&gate, req)
        .await
        .unwrap_or_else(|message| text(StatusCode::BAD_GATEWAY, message));
    let status = resp.status();
    if let Some(ns) =
        namespace.filter(|_| status.as_u16() >= 400 && status != StatusCode::NOT_FOUND)
    {
        let mut failed = gate.failed.lock().unwrap();
        // Forget what no settle point asks about any more (a namespace's run is over).
        failed.retain(|_, at| at.elapsed() < std::time::Duration::from_secs(600));
        failed.insert(ns, std::time::Instant::now());
    }
    Ok(resp)
}

fn text(status: StatusCode, message: String) -> Response<Body> {
    let mut resp = Response::new(
        Full::new(Bytes::from(message))
            .map_err(|e| match e {})
            .boxed(),
    );
    *resp.status_mut() = status;
    resp
}

/// The gate's own endpoints.
async fn control(gate: &Gate, req: Request<Incoming>) -> Response<Body> {
    let (head, body) = req.into_parts();
    let path = head.uri.path()[CONTROL.len()..].trim_matches('/');
    let parts: Vec<&str> = path.split('/').collect();
    if let (&Method::PUT, ["requests", name]) = (&head.method, parts.as_slice()) {
        if let Some(call) = RequestsCall::named(name) {
            return requests_control(gate, call, body).await;
        }
    }
    let req = Request::from_parts(head.clone(), ());
    let kind = |name: &str| KINDS.into_iter().find(|k| resource_name(*k) == name);
    match (req.method(), parts.as_slice()) {
        (&Method::GET, ["status"]) => {
            let status = status_of(gate);
            let mut resp = text(
                StatusCode::OK,
                serde_json::to_string(&status).expect("the status serialises"),
            );
            resp.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static("application/json"),
            );
            resp
        }
        (&Method::PUT, ["hold", name]) | (&Method::PUT, ["release", name]) if kind(name).is_some() => {
            let k = kind(name).expect("checked");
            let hold = parts[0] == "hold";
            gate.watches(k).held.send_replace(hold);
            eprintln!(
                "event gate: {} {name} watch events ({} watches open)",
                if hold { "holding" } else { "releasing" },
                gate.watches(k).open.load(Ordering::SeqCst)
            );
            text(StatusCode::OK, String::new())
        }
        (&Method::PUT, ["release"]) => {
            for k in KINDS {
                gate.watches(k).held.send_replace(false);
            }
            gate.requests.release_all();
            eprintln!("event gate: releasing everything");
            text(StatusCode::OK, String::new())
        }
        _ => text(
            StatusCode::NOT_FOUND,
            format!(
                "the event gate serves GET {CONTROL}/status, PUT {CONTROL}/hold/TYPE, PUT {CONTROL}/release/TYPE, PUT {CONTROL}/release (TYPE: pods or replicasets), and PUT {CONTROL}/requests/hold, …/requests/release and …/requests/rehold with a hold as JSON"
            ),
        ),
    }
}

/// What a `PUT /rsmc-gate/requests/{hold|release|rehold}` does with the hold it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestsCall {
    /// Hold the requests it catches.
    Hold,
    /// Let the requests it caught go on.
    Release,
    /// Let the requests it caught go on and hold the same requests again at once, letting
    /// its `after` through first.
    Rehold,
}

impl RequestsCall {
    const ALL: [RequestsCall; 3] = [
        RequestsCall::Hold,
        RequestsCall::Release,
        RequestsCall::Rehold,
    ];

    /// The last segment of its path.
    fn name(self) -> &'static str {
        match self {
            RequestsCall::Hold => "hold",
            RequestsCall::Release => "release",
            RequestsCall::Rehold => "rehold",
        }
    }

    fn named(name: &str) -> Option<RequestsCall> {
        RequestsCall::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// `PUT /rsmc-gate/requests/{hold|release|rehold}` with a [`RequestHold`].
async fn requests_control(gate: &Gate, call: RequestsCall, body: Incoming) -> Response<Body> {
    let body = match body.collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => return text(StatusCode::BAD_REQUEST, e.to_string()),
    };
    let hold: RequestHold = match serde_json::from_slice(&body) {
        Ok(h) => h,
        Err(e) => {
            return text(
                StatusCode::BAD_REQUEST,
                format!("expected a hold as JSON ({{\"namespace\": …, \"pattern\": {{\"verb\": …, \"resource\": …}}}}): {e}"),
            )
        }
    };
    let result = match call {
        RequestsCall::Hold => gate
            .requests
            .hold(hold.clone())
            .map(|()| eprintln!("event gate: holding {hold}")),
        RequestsCall::Rehold => gate.requests.rehold(hold.clone()).map(|waiting| {
            eprintln!(
                "event gate: releasing {hold} ({waiting} waiting) and holding them again after {}",
                hold.requests.after
            )
        }),
        RequestsCall::Release => gate
            .requests
            .release(&hold)
            .map(|waiting| eprintln!("event gate: releasing {hold} ({waiting} waiting)")),
    };
    match result {
        Ok(()) => text(StatusCode::OK, String::new()),
        Err(message) => text(StatusCode::CONFLICT, message),
    }
}

fn status_of(gate: &Gate) -> GateStatus {
    let held = |k: Kind| *gate.watches(k).held.borrow();
    let open = |k: Kind| gate.watches(k).open.load(Ordering::SeqCst);
    let delivered = |k: Kind| {
        let w = gate.watches(k);
        (!w.unreadable.load(Ordering::SeqCst)).then(|| w.delivered.load(Ordering::SeqCst))
    };
    GateStatus {
        held: PerType {
            replicasets: held(Kind::ReplicaSet),
            pods: held(Kind::Pod),
        },
        watches: PerType {
            replicasets: open(Kind::ReplicaSet),
            pods: open(Kind::Pod),
        },
        delivered: PerType {
            replicasets: delivered(Kind::ReplicaSet),
            pods: delivered(Kind::Pod),
        },
        requests: gate.requests.status(),
        failed: gate
            .failed
            .lock()
            .unwrap()
            .iter()
            .map(|(ns, at)| (ns.clone(), at.elapsed().as_millis() as u64))
            .collect(),
    }
}

/// The namespace of a request path (`/api/v1/namespaces/NS/…`, `/apis/G/V/namespaces/NS/…`).
fn namespace_of(path: &str) -> Option<&str> {
    let mut parts = path.split('/');
    parts.find(|p| *p == "namespaces")?;
    let ns = parts.next()?;
    // `/api/v1/namespaces/NS` is the namespace itself, not a request in it.
    parts.next().map(|_| ns)
}

/// Forward one request to the API server; a watch of a held type comes back through
/// [`gated`].
async fn forward(gate: &Gate, req: Request<Incoming>) -> Result<Response<Body>, String> {
    let kind = watched(req.uri());
    let initial_events = req
        .uri()
        .query()
        .is_some_and(|q| q.split('&').any(|p| p == "sendInitialEvents=true"));
    let (mut parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str())
        .unwrap_or("/");
    parts.uri = format!(
        "{}{}",
        gate.upstream.to_string().trim_end_matches('/'),
        path
    )
    .parse()
    .map_err(|e| format!("cannot forward {path}: {e}"))?;
    parts.headers.remove(hyper::header::HOST);
    if kind.is_some() {
        // A watch the gate reads comes uncompressed: v1.37 gzips a watch-list for a client
        // that accepts it (`WatchListCompression`), which kube-controller-manager's
        // transport does. The client reads a plain body as well; only the bytes on the
        // loopback between gate and server change.
        parts.headers.remove(hyper::header::ACCEPT_ENCODING);
    }
    if let Some(auth) = &gate.authorization {
        parts
            .headers
            .entry(hyper::header::AUTHORIZATION)
            .or_insert_with(|| auth.clone());
    }
    let resp = gate
        .client
        .request(Request::from_parts(parts, body))
        .await
        .map_err(|e| format!("the event gate cannot reach the API server: {e}"))?;
    let (parts, body) = resp.into_parts();
    let body = match kind {
        Some(kind) if parts.status.is_success() => {
            // Read in the encoding the server chose; a compressed body (a v1.37 watch-list
            // whose client accepts gzip) is not read.
            let header = |name| parts.headers.get(name).and_then(|v| v.to_str().ok());
            let plain = header(hyper::header::CONTENT_ENCODING).is_none_or(|e| e == "identity");
            let reader = header(hyper::header::CONTENT_TYPE)
                .and_then(progress::Format::of)
                .filter(|_| plain)
                .map(|format| progress::Progress::new(format, initial_events));
            gated(gate, kind, reader, body)
        }
        _ => body.boxed(),
    };
    Ok(Response::from_parts(parts, body))
}

/// A watch response that waits while its type is held. The upstream body is read eagerly
/// into a queue (the API server must never see a slow watcher: it would end the watch), and
/// each frame is passed on only when the type is not held, in order, read on its way by
/// `progress` for the version it carries the controller to (`None` where the encoding
/// cannot be read, which makes the type unreadable).
fn gated(
    gate: &Gate,
    kind: Kind,
    progress: Option<progress::Progress>,
    upstream: Incoming,
) -> Body {
    let (tx, rx) = mpsc::unbounded_channel::<Result<Frame<Bytes>, hyper::Error>>();
    tokio::spawn(async move {
        let mut upstream = upstream;
        while let Some(frame) = upstream.frame().await {
            let end = frame.is_err();
            if tx.send(frame).is_err() || end {
                // The client went away (dropping the upstream ends the watch), or the
                // upstream failed and that was passed on.
                return;
            }
        }
    });
    let watches = gate.watches(kind).clone();
    watches.open.fetch_add(1, Ordering::SeqCst);
    let held = watches.held.subscribe();
    if progress.is_none() {
        eprintln!(
            "event gate: cannot read a watch of {} (its encoding)",
            resource_name(kind)
        );
        watches.unreadable.store(true, Ordering::SeqCst);
    }
    let reader = Reader { progress, watches };
    let frames = futures::stream::unfold(
        (rx, held, reader),
        |(mut rx, mut held, mut reader)| async move {
            let frame = rx.recv().await?;
            // Released, or the gate is going away: pass it on.
            let _ = held.wait_for(|h| !*h).await;
            if let Some(bytes) = frame.as_ref().ok().and_then(|f| f.data_ref()) {
                reader.passed_on(bytes);
            }
            Some((frame, (rx, held, reader)))
        },
    );
    StreamBody::new(frames).boxed()
}

/// A watch being passed on: counted open while it lives, read as it goes by.
struct Reader {
    /// `None` once the watch cannot be read.
    progress: Option<progress::Progress>,
    watches: Arc<Watches>,
}

impl Drop for Reader {
    fn drop(&mut self) {
        self.watches.open.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Reader {
    fn passed_on(&mut self, bytes: &[u8]) {
        let Some(progress) = &mut self.progress else {
            return;
        };
        match progress.feed(bytes) {
            Ok(Some(version)) => {
                self.watches.delivered.fetch_max(version, Ordering::SeqCst);
            }
            Ok(None) => {}
            Err(e) => {
                eprintln!("event gate: cannot tell how far a watch got: {e}");
                self.watches.unreadable.store(true, Ordering::SeqCst);
                self.progress = None;
            }
        }
    }
}

/// The runner's handle on a gate: its control endpoints.
#[derive(Clone, Debug)]
pub struct GateClient {
    base: String,
}

impl GateClient {
    /// The gate at `url` (`http://127.0.0.1:PORT`).
    pub fn new(url: &str) -> GateClient {
        GateClient {
            base: url.trim_end_matches('/').to_string(),
        }
    }

    async fn call(&self, method: Method, path: &str) -> Result<Bytes, String> {
        self.call_with(method, path, Bytes::new()).await
    }

    async fn call_with(&self, method: Method, path: &str, body: Bytes) -> Result<Bytes, String> {
        let client: Client<HttpConnector, Full<Bytes>> =
            Client::builder(TokioExecutor::new()).build_http();
        let uri = format!("{}{CONTROL}/{path}", self.base);
        let req = Request::builder()
            .method(method)
            .uri(&uri)
            .body(Full::new(body))
            .map_err(|e| e.to_string())?;
        let resp = tokio::time::timeout(Duration::from_secs(5), client.request(req))
            .await
            .map_err(|_| format!("the event gate at {} does not answer", self.base))?
            .map_err(|e| format!("the event gate at {}: {e}", self.base))?;
        let status = resp.status();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        if !status.is_success() {
            return Err(format!(
                "the event gate refused {uri}: {status} {}",
                String::from_utf8_lossy(&body)
            ));
        }
        Ok(body)
    }

    /// Hold the watch events of `kind`.
    pub async fn hold(&self, kind: Kind) -> Result<(), String> {
        self.call(Method::PUT, &format!("hold/{}", resource_name(kind)))
            .await
            .map(|_| ())
    }

    /// Pass on what was held of `kind`, and everything after.
    pub async fn release(&self, kind: Kind) -> Result<(), String> {
        self.call(Method::PUT, &format!("release/{}", resource_name(kind)))
            .await
            .map(|_| ())
    }

    /// Release every type and every hold of requests (the start and the end of a run, and
    /// an interrupted one).
    pub async fn release_all(&self) -> Result<(), String> {
        self.call(Method::PUT, "release").await.map(|_| ())
    }

    /// Hold, release or release and hold again (`call`) the controller's requests `hold`
    /// catches.
    pub async fn requests(&self, call: RequestsCall, hold: &RequestHold) -> Result<(), String> {
        let body = serde_json::to_vec(hold).expect("a hold serialises");
        let path = format!("requests/{}", call.name());
        self.call_with(Method::PUT, &path, body.into())
            .await
            .map(|_| ())
    }

    pub async fn status(&self) -> Result<GateStatus, String> {
        let body = self.call(Method::GET, "status").await?;
        serde_json::from_slice(&body).map_err(|e| format!("the event gate's status: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requests_namespace_is_read_from_its_path() {
        assert_eq!(namespace_of("/api/v1/namespaces/ns1/pods/p"), Some("ns1"));
        assert_eq!(
            namespace_of("/apis/apps/v1/namespaces/ns2/replicasets/rs/status"),
            Some("ns2")
        );
        assert_eq!(namespace_of("/api/v1/namespaces/ns3"), None);
        assert_eq!(namespace_of("/api/v1/pods"), None);
    }

    #[test]
    fn only_watches_of_pods_and_replicasets_are_gated() {
        let kind = |uri: &str| watched(&uri.parse().unwrap());
        assert_eq!(
            kind("/api/v1/pods?allowWatchBookmarks=true&resourceVersion=5&watch=true"),
            Some(Kind::Pod)
        );
        assert_eq!(
            kind("/apis/apps/v1/namespaces/ns/replicasets?watch=1"),
            Some(Kind::ReplicaSet)
        );
        assert_eq!(kind("/api/v1/pods?limit=500"), None, "a list is not held");
        assert_eq!(kind("/api/v1/namespaces/ns/pods/p"), None);
        assert_eq!(kind("/api/v1/nodes?watch=true"), None);
        assert_eq!(kind("/apis/apps/v1/replicasets?watch=false"), None);
    }
}
