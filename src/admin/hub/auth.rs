//! Who may use the panel: single-use login tokens, session cookies, and the one guard every HTTP
//! request of the admin origin passes (INTERFACE.md §16.4).
//!
//! - `--open-admin` gets a login URL over the same-user socket: `/login?token=<32 random bytes,
//!   base64url>`, valid once and for [`TOKEN_TTL`].
//! - `/login` swaps a valid token for a session cookie (256 random bits) named per port
//!   (`forgemcp_session_<port>`; cookies are not port-scoped, so two Hubs must not share a name),
//!   `HttpOnly; SameSite=Strict; Path=/`.
//! - Every request: the `Host` header must be `127.0.0.1:<port>` or `localhost:<port>` (DNS
//!   rebinding), and an `Origin` header, when present, must be one of those two origins.
//! - Everything but `/login` needs the session cookie; `/` without it shows how to sign in.
//! - `/api/*` also needs the session's CSRF value in `X-ForgeMCP-CSRF` (the event stream, which
//!   `EventSource` opens without custom headers, takes it as the `csrf` query parameter), and a
//!   `Sec-Fetch-Site`, when the browser sends one, of `same-origin`.
//! - State-changing requests (anything but GET) also need an `Origin` header.
//!
//! Architecture invariant: [`authorize`] is the only place that decides access; the router runs it
//! before every route and the fallback, so no route can forget it.
//! Architecture invariant: tokens and cookies are compared through their SHA-256 digests (map
//! lookups by digest), never by their text, and neither is ever logged.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use base64::Engine as _;
use parking_lot::Mutex;
use sha2::{Digest as _, Sha256};

/// How long a login token stays valid.
pub const TOKEN_TTL: Duration = Duration::from_secs(60);
/// The CSRF header.
pub const CSRF_HEADER: &str = "x-forgemcp-csrf";

/// One browser session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The value `X-ForgeMCP-CSRF` must carry.
    pub csrf: String,
}

/// Tokens and sessions of one Hub.
pub struct Auth {
    port: u16,
    token_ttl: Duration,
    tokens: Mutex<HashMap<[u8; 32], Instant>>,
    sessions: Mutex<HashMap<[u8; 32], Session>>,
}

/// 32 random bytes, base64url without padding.
pub fn random_secret() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system provides random bytes");
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

impl Auth {
    pub fn new(port: u16, token_ttl: Duration) -> Auth {
        Auth { port, token_ttl, tokens: Mutex::default(), sessions: Mutex::default() }
    }

    /// The session cookie's name for this Hub's port.
    pub fn cookie_name(&self) -> String {
        format!("forgemcp_session_{}", self.port)
    }

    /// A new single-use login token.
    pub fn issue_token(&self) -> String {
        let token = random_secret();
        let now = Instant::now();
        let mut tokens = self.tokens.lock();
        tokens.retain(|_, expires| *expires > now);
        tokens.insert(digest(&token), now + self.token_ttl);
        token
    }

    /// Spends `token` (whatever the outcome, it cannot be used again) and opens a session:
    /// returns the cookie value and the session.
    pub fn redeem(&self, token: &str) -> Option<(String, Session)> {
        let expires = self.tokens.lock().remove(&digest(token))?;
        if Instant::now() >= expires {
            return None;
        }
        let cookie = random_secret();
        let session = Session { csrf: random_secret() };
        self.sessions.lock().insert(digest(&cookie), session.clone());
        Some((cookie, session))
    }

    /// The session of a cookie value.
    pub fn session(&self, cookie: &str) -> Option<Session> {
        self.sessions.lock().get(&digest(cookie)).cloned()
    }

    /// `Set-Cookie` for a new session.
    pub fn set_cookie(&self, cookie: &str) -> String {
        format!("{}={cookie}; HttpOnly; SameSite=Strict; Path=/", self.cookie_name())
    }

    fn session_from_header(&self, cookie_header: Option<&str>) -> Option<Session> {
        let name = self.cookie_name();
        cookie_header?
            .split(';')
            .filter_map(|pair| pair.trim().split_once('='))
            .filter(|(key, _)| *key == name)
            .find_map(|(_, value)| self.session(value.trim()))
    }
}

/// What kind of route a request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `GET /`: the panel page.
    Page,
    /// `GET /login?token=`.
    Login,
    /// `GET /api/events`: the event stream.
    Events,
    /// Any other `/api/*` request.
    Api,
    /// Anything else (unknown pages).
    Other,
}

impl Route {
    pub fn of(path: &str) -> Route {
        match path {
            "/" => Route::Page,
            "/login" => Route::Login,
            "/api/events" => Route::Events,
            p if p.starts_with("/api/") => Route::Api,
            _ => Route::Other,
        }
    }
}

/// The parts of a request the guard looks at.
#[derive(Debug, Clone, Default)]
pub struct Facts<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub host: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub cookie: Option<&'a str>,
    pub csrf_header: Option<&'a str>,
    /// The `csrf` query parameter (event stream only).
    pub csrf_query: Option<&'a str>,
    pub sec_fetch_site: Option<&'a str>,
}

/// Why a request is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// 403: the `Host` header is not this Hub's loopback address.
    Host,
    /// 403: the `Origin` is foreign, or missing on a state-changing request.
    Origin,
    /// 401: no valid session cookie.
    NoSession,
    /// 403: the CSRF value is missing or wrong.
    Csrf,
    /// 403: the browser says the request comes from another site or origin.
    CrossSite,
}

impl Refusal {
    pub fn status(self) -> u16 {
        match self {
            Refusal::NoSession => 401,
            _ => 403,
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            Refusal::Host => "unexpected Host header",
            Refusal::Origin => "cross-origin requests are not accepted",
            Refusal::NoSession => "not signed in: run `forgemcp --open-admin` to open the panel",
            Refusal::Csrf => "missing or wrong X-ForgeMCP-CSRF header",
            Refusal::CrossSite => "cross-site requests are not accepted",
        }
    }
}

/// Whether `value` is this Hub's own origin or host (`127.0.0.1:<port>` / `localhost:<port>`).
fn is_own(value: &str, port: u16, scheme: &str) -> bool {
    [format!("{scheme}127.0.0.1:{port}"), format!("{scheme}localhost:{port}")].iter().any(|own| own == value)
}

fn same(a: &str, b: &str) -> bool {
    // Both sides are public-length secrets; compare digests so timing says nothing about a prefix.
    digest(a) == digest(b)
}

/// The guard. `Ok(Some(session))` for a signed-in request, `Ok(None)` for the routes that need no
/// session (`/login`, which checks its token itself).
pub fn authorize(auth: &Auth, port: u16, facts: &Facts<'_>) -> Result<Option<Session>, Refusal> {
    if !facts.host.is_some_and(|host| is_own(host, port, "")) {
        return Err(Refusal::Host);
    }
    if facts.origin.is_some_and(|origin| !is_own(origin, port, "http://")) {
        return Err(Refusal::Origin);
    }
    let route = Route::of(facts.path);
    let writes = !matches!(facts.method, "GET" | "HEAD");
    if writes && facts.origin.is_none() {
        return Err(Refusal::Origin);
    }
    if route == Route::Login {
        return Ok(None);
    }
    let session = auth.session_from_header(facts.cookie).ok_or(Refusal::NoSession)?;
    if matches!(route, Route::Api | Route::Events) || writes {
        if facts.sec_fetch_site.is_some_and(|site| site != "same-origin") {
            return Err(Refusal::CrossSite);
        }
        let presented = match route {
            Route::Events => facts.csrf_header.or(facts.csrf_query),
            _ => facts.csrf_header,
        };
        if !presented.is_some_and(|value| same(value, &session.csrf)) {
            return Err(Refusal::Csrf);
        }
    }
    Ok(Some(session))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PORT: u16 = 8765;

    fn signed_in() -> (Auth, String, Session) {
        let auth = Auth::new(PORT, TOKEN_TTL);
        let token = auth.issue_token();
        let (cookie, session) = auth.redeem(&token).expect("fresh token");
        (auth, cookie, session)
    }

    fn api_get<'a>(cookie: &'a str, csrf: &'a str) -> Facts<'a> {
        Facts {
            method: "GET",
            path: "/api/instances",
            host: Some("127.0.0.1:8765"),
            cookie: Some(cookie),
            csrf_header: Some(csrf),
            ..Facts::default()
        }
    }

    #[test]
    fn a_token_works_once() {
        let auth = Auth::new(PORT, TOKEN_TTL);
        let token = auth.issue_token();
        assert_eq!(token.len(), 43, "32 bytes in base64url without padding");
        assert!(auth.redeem(&token).is_some());
        assert!(auth.redeem(&token).is_none(), "single use");
        assert!(auth.redeem("made-up").is_none());
    }

    #[test]
    fn an_expired_token_is_refused_and_spent() {
        let auth = Auth::new(PORT, Duration::ZERO);
        let token = auth.issue_token();
        assert!(auth.redeem(&token).is_none());
        assert!(auth.tokens.lock().is_empty());
    }

    #[test]
    fn cookies_are_port_specific_and_strict() {
        let (auth, cookie, _) = signed_in();
        let header = auth.set_cookie(&cookie);
        assert!(header.starts_with("forgemcp_session_8765="));
        assert!(header.contains("HttpOnly") && header.contains("SameSite=Strict") && header.contains("Path=/"));
        let other = Auth::new(9000, TOKEN_TTL);
        assert!(other.session_from_header(Some(&format!("forgemcp_session_8765={cookie}"))).is_none());
    }

    #[test]
    fn a_signed_in_api_request_passes() {
        let (auth, cookie, session) = signed_in();
        let cookie_header = format!("other=1; {}={cookie}", auth.cookie_name());
        let facts = api_get(&cookie_header, &session.csrf);
        assert_eq!(authorize(&auth, PORT, &facts), Ok(Some(session.clone())));
        let localhost = Facts { host: Some("localhost:8765"), origin: Some("http://localhost:8765"), ..facts };
        assert!(authorize(&auth, PORT, &localhost).is_ok());
    }

    #[test]
    fn each_missing_piece_is_refused() {
        let (auth, cookie, session) = signed_in();
        let cookie = format!("{}={cookie}", auth.cookie_name());
        let ok = api_get(&cookie, &session.csrf);
        let cases: Vec<(Facts<'_>, Refusal)> = vec![
            (Facts { host: None, ..ok.clone() }, Refusal::Host),
            (Facts { host: Some("127.0.0.1:9999"), ..ok.clone() }, Refusal::Host),
            (Facts { host: Some("evil.example:8765"), ..ok.clone() }, Refusal::Host),
            (Facts { origin: Some("http://127.0.0.1:9999"), ..ok.clone() }, Refusal::Origin),
            (Facts { origin: Some("null"), ..ok.clone() }, Refusal::Origin),
            (Facts { cookie: None, ..ok.clone() }, Refusal::NoSession),
            (Facts { cookie: Some("forgemcp_session_8765=forged"), ..ok.clone() }, Refusal::NoSession),
            (Facts { csrf_header: None, ..ok.clone() }, Refusal::Csrf),
            (Facts { csrf_header: Some("wrong"), ..ok.clone() }, Refusal::Csrf),
            (Facts { sec_fetch_site: Some("same-site"), ..ok.clone() }, Refusal::CrossSite),
            (Facts { method: "POST", ..ok.clone() }, Refusal::Origin),
        ];
        for (facts, refusal) in cases {
            assert_eq!(authorize(&auth, PORT, &facts), Err(refusal), "{facts:?}");
        }
        let post = Facts { method: "POST", origin: Some("http://127.0.0.1:8765"), ..ok.clone() };
        assert!(authorize(&auth, PORT, &post).is_ok());
    }

    #[test]
    fn the_page_needs_a_session_but_no_csrf_and_login_needs_neither() {
        let (auth, cookie, _) = signed_in();
        let cookie = format!("{}={cookie}", auth.cookie_name());
        let page =
            Facts { method: "GET", path: "/", host: Some("127.0.0.1:8765"), cookie: Some(&cookie), ..Facts::default() };
        assert!(matches!(authorize(&auth, PORT, &page), Ok(Some(_))));
        assert_eq!(authorize(&auth, PORT, &Facts { cookie: None, ..page.clone() }), Err(Refusal::NoSession));
        let login = Facts { path: "/login", cookie: None, ..page.clone() };
        assert_eq!(authorize(&auth, PORT, &login), Ok(None));
        assert_eq!(authorize(&auth, PORT, &Facts { host: Some("x:8765"), ..login }), Err(Refusal::Host));
    }

    #[test]
    fn the_event_stream_takes_csrf_from_the_query() {
        let (auth, cookie, session) = signed_in();
        let cookie = format!("{}={cookie}", auth.cookie_name());
        let events = Facts {
            method: "GET",
            path: "/api/events",
            host: Some("127.0.0.1:8765"),
            cookie: Some(&cookie),
            csrf_query: Some(&session.csrf),
            ..Facts::default()
        };
        assert!(authorize(&auth, PORT, &events).is_ok());
        assert_eq!(authorize(&auth, PORT, &Facts { csrf_query: None, ..events.clone() }), Err(Refusal::Csrf));
        let other_api = Facts { path: "/api/instances", ..events };
        assert_eq!(authorize(&auth, PORT, &other_api), Err(Refusal::Csrf), "only the stream reads the query");
    }
}
