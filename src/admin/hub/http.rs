//! The Hub's two loopback HTTP servers.
//!
//! The admin origin (`127.0.0.1:<port>`) serves `admin.html`, `/login`, the JSON API and the event
//! stream (INTERFACE.md §16.5); every request passes [`auth::authorize`] first. The sandbox origin
//! (`127.0.0.1:<second port>`) serves only `sandbox.html`, the MCP Apps sandbox proxy, with a strict
//! CSP that lets only the admin origin frame it (MCP-APPS.md §5.1); it reads no cookie and has no API.
//!
//! Architecture invariant: the guard runs before every admin route and the fallback; handlers
//! never check access themselves.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use futures_util::StreamExt as _;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::broadcast::error::RecvError;

use super::auth::{self, CSRF_HEADER, Facts, Refusal, Session};
use super::{ApiError, HubState};
use crate::admin::protocol::HubRequest;
use crate::widgets::{embedded_asset, missing_asset_page};

/// Placeholders in the built pages, replaced when they are served.
const CSRF_PLACEHOLDER: &str = "__FORGEMCP_CSRF__";
const SANDBOX_PLACEHOLDER: &str = "__FORGEMCP_SANDBOX_ORIGIN__";
const ADMIN_ORIGIN_PLACEHOLDER: &str = "__FORGEMCP_ADMIN_ORIGIN__";

pub(super) async fn serve_admin(state: Arc<HubState>, listener: TcpListener) {
    if let Err(err) = axum::serve(listener, admin_router(state)).await {
        tracing::warn!("the admin panel server stopped: {err}");
    }
}

pub(super) async fn serve_sandbox(state: Arc<HubState>, listener: TcpListener) {
    let router = Router::new()
        .route("/sandbox.html", get(sandbox_page))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found") })
        .with_state(state);
    if let Err(err) = axum::serve(listener, router).await {
        tracing::warn!("the widget sandbox server stopped: {err}");
    }
}

fn admin_router(state: Arc<HubState>) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/login", get(login))
        .route("/api/instances", get(instances))
        .route("/api/instances/{iid}/history", get(history))
        .route("/api/instances/{iid}/catalog", get(catalog))
        .route("/api/instances/{iid}/status", get(status))
        .route("/api/instances/{iid}/resources/read", post(read_resource))
        .route("/api/instances/{iid}/calls", post(start_call))
        .route("/api/instances/{iid}/calls/{call_id}/cancel", post(cancel_call))
        .route("/api/instances/{iid}/elicitations/{eid}", post(answer_elicitation))
        .route("/api/events", get(events))
        .fallback(|| async { api_error(ApiError { status: 404, message: "not found".into() }) })
        .layer(middleware::from_fn_with_state(state.clone(), guard))
        .layer(middleware::map_response(common_headers))
        .with_state(state)
}

async fn common_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|value| value.to_str().ok())
}

/// The `csrf` query parameter (percent-decoded).
fn query_param(query: Option<&str>, key: &str) -> Option<String> {
    query?.split('&').find_map(|pair| {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        (k == key).then(|| percent_encoding::percent_decode_str(v).decode_utf8_lossy().into_owned())
    })
}

async fn guard(State(state): State<Arc<HubState>>, mut request: Request, next: Next) -> Response {
    let csrf_query = query_param(request.uri().query(), "csrf");
    let decision = {
        let headers = request.headers();
        let facts = Facts {
            method: request.method().as_str(),
            path: request.uri().path(),
            host: header(headers, "host"),
            origin: header(headers, "origin"),
            cookie: header(headers, "cookie"),
            csrf_header: header(headers, CSRF_HEADER),
            csrf_query: csrf_query.as_deref(),
            sec_fetch_site: header(headers, "sec-fetch-site"),
        };
        auth::authorize(&state.auth, state.port, &facts)
    };
    match decision {
        Ok(session) => {
            if let Some(session) = session {
                request.extensions_mut().insert(session);
            }
            next.run(request).await
        }
        Err(Refusal::NoSession) if request.uri().path() == "/" => {
            html(StatusCode::UNAUTHORIZED, SIGN_IN_PAGE.to_owned(), None).into_response()
        }
        Err(refusal) => {
            let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::FORBIDDEN);
            (status, Json(json!({ "error": refusal.message() }))).into_response()
        }
    }
}

const SIGN_IN_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ForgeMCP admin</title></head>\n\
<body style=\"font: 14px/1.5 system-ui, sans-serif; margin: 24px\"><h1 style=\"font-size: 18px\">ForgeMCP admin panel</h1>\n\
<p>This browser session is not signed in. The panel's address alone does not sign anyone in.</p>\n\
<p>Run <code>forgemcp --open-admin</code> (with <code>--admin-ipc NAME</code> for another group) in a terminal of the \
same user: it opens a private, single-use link in your browser.</p></body></html>\n";

const LOGIN_FAILED_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>ForgeMCP admin</title></head>\n\
<body style=\"font: 14px/1.5 system-ui, sans-serif; margin: 24px\"><h1 style=\"font-size: 18px\">This login link cannot be used</h1>\n\
<p>Login links work once and only for a minute. Run <code>forgemcp --open-admin</code> again for a new one.</p></body></html>\n";

fn html(status: StatusCode, body: String, csp: Option<String>) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    let csp = csp.unwrap_or_else(|| "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'".into());
    if let Ok(value) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
}

/// The host name the browser used (`127.0.0.1` or `localhost`; the guard allowed only these).
fn host_name(headers: &HeaderMap) -> &'static str {
    match header(headers, "host") {
        Some(host) if host.starts_with("localhost:") => "localhost",
        _ => "127.0.0.1",
    }
}

async fn page(
    State(state): State<Arc<HubState>>,
    Extension(session): Extension<Session>,
    headers: HeaderMap,
) -> Response {
    let sandbox_origin = format!("http://{}:{}", host_name(&headers), state.sandbox_port);
    let body = match embedded_asset("admin.html") {
        Some(bytes) => String::from_utf8_lossy(bytes)
            .replace(CSRF_PLACEHOLDER, &session.csrf)
            .replace(SANDBOX_PLACEHOLDER, &sandbox_origin),
        None => missing_asset_page("admin.html"),
    };
    let csp = format!(
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; \
         connect-src 'self'; frame-src {sandbox_origin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    );
    html(StatusCode::OK, body, Some(csp))
}

#[derive(Deserialize)]
struct LoginQuery {
    #[serde(default)]
    token: String,
}

/// The script of [`SIGNED_IN_PAGE`]: leave the login address (and its spent token) out of the
/// history.
const SIGNED_IN_SCRIPT: &str = "location.replace(\"/\")";

/// What `/login` answers with its cookie: a page of the admin origin that moves on to `/`. A
/// redirect would not do: the chain started at the private `file://` page, so the browser treats
/// its end as cross-site and withholds the `SameSite=Strict` cookie; a navigation this same-origin
/// page starts is same-site and carries it.
const SIGNED_IN_PAGE: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta http-equiv=\"refresh\" content=\"0;url=/\"><title>ForgeMCP admin</title></head>\n\
<body style=\"font: 14px/1.5 system-ui, sans-serif; margin: 24px\"><p>Signed in. \
<a href=\"/\">Open the ForgeMCP admin panel</a></p><script>__SCRIPT__</script></body></html>\n";

async fn login(State(state): State<Arc<HubState>>, Query(query): Query<LoginQuery>) -> Response {
    match state.auth.redeem(&query.token) {
        Some((cookie, _)) => {
            use base64::Engine as _;
            use sha2::Digest as _;
            let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SIGNED_IN_SCRIPT));
            let csp = format!(
                "default-src 'none'; script-src 'sha256-{hash}'; style-src 'unsafe-inline'; base-uri 'none'; \
                 form-action 'none'; frame-ancestors 'none'"
            );
            let body = SIGNED_IN_PAGE.replace("__SCRIPT__", SIGNED_IN_SCRIPT);
            let mut response = html(StatusCode::OK, body, Some(csp));
            if let Ok(value) = HeaderValue::from_str(&state.auth.set_cookie(&cookie)) {
                response.headers_mut().insert(header::SET_COOKIE, value);
            }
            response
        }
        None => html(StatusCode::FORBIDDEN, LOGIN_FAILED_PAGE.to_owned(), None),
    }
}

fn api_error(err: ApiError) -> Response {
    let status = StatusCode::from_u16(err.status).unwrap_or(StatusCode::BAD_GATEWAY);
    (status, Json(json!({ "error": err.message }))).into_response()
}

fn api(result: Result<Value, ApiError>) -> Response {
    match result {
        Ok(value) => Json(value).into_response(),
        Err(err) => api_error(err),
    }
}

async fn instances(State(state): State<Arc<HubState>>) -> Response {
    api(Ok(json!({ "instances": state.instances() })))
}

async fn history(State(state): State<Arc<HubState>>, Path(iid): Path<String>) -> Response {
    api(state.request(&iid, HubRequest::HistoryList).await)
}

async fn catalog(State(state): State<Arc<HubState>>, Path(iid): Path<String>) -> Response {
    api(state.request(&iid, HubRequest::CatalogGet).await)
}

async fn status(State(state): State<Arc<HubState>>, Path(iid): Path<String>) -> Response {
    api(state.request(&iid, HubRequest::StatusGet).await)
}

#[derive(Deserialize)]
struct ReadBody {
    uri: String,
}

async fn read_resource(
    State(state): State<Arc<HubState>>,
    Path(iid): Path<String>,
    Json(body): Json<ReadBody>,
) -> Response {
    api(state.request(&iid, HubRequest::ResourceRead { uri: body.uri }).await)
}

#[derive(Deserialize)]
struct CallBody {
    tool: String,
    #[serde(default)]
    arguments: serde_json::Map<String, Value>,
}

async fn start_call(
    State(state): State<Arc<HubState>>,
    Path(iid): Path<String>,
    Json(body): Json<CallBody>,
) -> Response {
    api(state.request(&iid, HubRequest::ToolCall { tool: body.tool, arguments: body.arguments }).await)
}

async fn cancel_call(State(state): State<Arc<HubState>>, Path((iid, call_id)): Path<(String, u64)>) -> Response {
    api(state.request(&iid, HubRequest::CallCancel { call_id }).await)
}

#[derive(Deserialize)]
struct ElicitationBody {
    action: String,
    #[serde(default)]
    content: Option<Value>,
}

async fn answer_elicitation(
    State(state): State<Arc<HubState>>,
    Path((iid, eid)): Path<(String, String)>,
    Json(body): Json<ElicitationBody>,
) -> Response {
    let request = HubRequest::ElicitationRespond { elicitation_id: eid, action: body.action, content: body.content };
    api(state.request(&iid, request).await)
}

/// Server-Sent Events: first `{"kind":"hello","instances":[…]}`, then every relayed event; a
/// `{"kind":"resync"}` tells a lagging page to reload its data.
async fn events(State(state): State<Arc<HubState>>) -> Response {
    let receiver = state.events.subscribe();
    let hello = json!({ "kind": "hello", "instances": state.instances() }).to_string();
    let first = futures_util::stream::once(async move { Ok::<Event, Infallible>(Event::default().data(hello)) });
    let rest = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let data: Arc<str> = match receiver.recv().await {
            Ok(data) => data,
            Err(RecvError::Lagged(_)) => Arc::from(r#"{"kind":"resync"}"#),
            Err(RecvError::Closed) => return None,
        };
        Some((Ok::<Event, Infallible>(Event::default().data(&*data)), receiver))
    });
    Sse::new(first.chain(rest)).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))).into_response()
}

#[derive(Deserialize)]
struct SandboxQuery {
    #[serde(default)]
    host: Option<String>,
}

/// `sandbox.html` for the admin page on `?host=127.0.0.1|localhost` (the host name the admin page
/// was opened with): only that origin may frame it and talk to it.
async fn sandbox_page(
    State(state): State<Arc<HubState>>,
    Query(query): Query<SandboxQuery>,
    headers: HeaderMap,
) -> Response {
    let own = [format!("127.0.0.1:{}", state.sandbox_port), format!("localhost:{}", state.sandbox_port)];
    if !header(&headers, "host").is_some_and(|host| own.iter().any(|o| o == host)) {
        return (StatusCode::FORBIDDEN, "unexpected Host header").into_response();
    }
    let admin_host = match query.host.as_deref() {
        None | Some("127.0.0.1") => "127.0.0.1",
        Some("localhost") => "localhost",
        Some(_) => return (StatusCode::BAD_REQUEST, "unknown admin host").into_response(),
    };
    let admin_origin = format!("http://{admin_host}:{}", state.port);
    let body = match embedded_asset("sandbox.html") {
        Some(bytes) => String::from_utf8_lossy(bytes).replace(ADMIN_ORIGIN_PLACEHOLDER, &admin_origin),
        None => missing_asset_page("sandbox.html"),
    };
    let csp = sandbox_csp(&admin_origin);
    let mut response = html(StatusCode::OK, body, Some(csp));
    let response_headers = response.headers_mut();
    response_headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response_headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response_headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    response_headers
        .insert(HeaderName::from_static("cross-origin-resource-policy"), HeaderValue::from_static("same-origin"));
    response
}

/// The MCP Apps restrictive default, plus no plugins, no base, no forms, and framing only by the
/// admin origin. Inner `srcdoc` documents inherit it: widgets reach no network at all.
pub(crate) fn sandbox_csp(admin_origin: &str) -> String {
    format!(
        "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; \
         img-src 'self' data:; media-src 'self' data:; connect-src 'none'; object-src 'none'; base-uri 'none'; \
         form-action 'none'; frame-ancestors {admin_origin}"
    )
}
