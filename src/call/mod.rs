//! The context one tool invocation hands to services: progress, cancellation, and a way to ask
//! the user a yes/no question.
//!
//! Architecture invariant: nothing here knows MCP. `server/` builds a `Call` from an rmcp request
//! (or the admin panel's in-process session) and services only see this type.

pub mod progress;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

pub use progress::{Progress, ProgressSink, ProgressUpdate};
pub use tokio_util::sync::CancellationToken;

/// A question for the user, answered with yes or no.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    /// A stable key for the question within one call (used by request/retry protocols).
    pub key: String,
    /// The sentence shown to the user.
    pub message: String,
    /// Describes the `allow` checkbox.
    pub allow_label: String,
}

/// Why a question did not produce an answer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AskError {
    /// The client must be asked in a new round trip; the call will be retried with the answer.
    #[error("the client must answer the question `{}` and retry the call", .0.key)]
    InputRequired(Question),
    #[error("the question could not be delivered: {0}")]
    Failed(String),
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Something that can put a yes/no question to the user (an MCP client, the admin panel).
pub trait Asker: Send + Sync {
    /// `Ok(true)` only for an explicit "yes"; declines, cancels and missing capabilities are `Ok(false)`.
    fn ask<'a>(
        &'a self,
        question: &'a Question,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Result<bool, AskError>>;
}

/// Who made a call: the tool and its origin, as the workspace journal records them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Author {
    /// The tool name (`workspace_edit_file`, `quality_tidy`, …).
    pub tool: String,
    /// `client` (the MCP client) or `panel` (the admin panel).
    pub origin: &'static str,
    /// The MCP client's name and version, when it gave them.
    pub client: Option<String>,
}

/// The context of one invocation.
#[derive(Clone)]
pub struct Call {
    pub progress: Progress,
    pub cancel: CancellationToken,
    asker: Option<Arc<dyn Asker>>,
    ask_timeout: Duration,
    author: Option<Arc<Author>>,
}

impl Call {
    pub fn new(progress: Progress, cancel: CancellationToken, asker: Option<Arc<dyn Asker>>) -> Call {
        Call { progress, cancel, asker, ask_timeout: Duration::from_secs(300), author: None }
    }

    /// The same call, made by `author`.
    pub fn with_author(mut self, author: Author) -> Call {
        self.author = Some(Arc::new(author));
        self
    }

    /// Who made the call; `None` for internal work.
    pub fn author(&self) -> Option<&Author> {
        self.author.as_deref()
    }

    /// The same call without progress or questions (for sub-steps whose progress would
    /// interleave with the call's own); cancellation and author are kept.
    pub fn quiet(&self) -> Call {
        Call { author: self.author.clone(), ..Call::new(Progress::disabled(), self.cancel.clone(), None) }
    }

    /// A context without progress, asker or cancellation, for internal work and tests.
    pub fn detached() -> Call {
        Call::new(Progress::disabled(), CancellationToken::new(), None)
    }

    pub fn with_ask_timeout(mut self, timeout: Duration) -> Call {
        self.ask_timeout = timeout;
        self
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Asks a yes/no question. No asker, a decline, a cancel, a timeout or a cancelled call all
    /// mean "no"; only a request for a new round trip is an error.
    pub async fn confirm(&self, question: &Question) -> Result<bool, AskError> {
        let Some(asker) = &self.asker else { return Ok(false) };
        tokio::select! {
            answer = asker.ask(question, &self.cancel) => answer,
            () = tokio::time::sleep(self.ask_timeout) => Ok(false),
            () = self.cancel.cancelled() => Ok(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Result<bool, AskError>);
    impl Asker for Fixed {
        fn ask<'a>(&'a self, _q: &'a Question, _c: &'a CancellationToken) -> BoxFuture<'a, Result<bool, AskError>> {
            Box::pin(async move { self.0.clone() })
        }
    }
    struct Never;
    impl Asker for Never {
        fn ask<'a>(&'a self, _q: &'a Question, _c: &'a CancellationToken) -> BoxFuture<'a, Result<bool, AskError>> {
            Box::pin(std::future::pending())
        }
    }

    fn question() -> Question {
        Question { key: "k".into(), message: "Allow?".into(), allow_label: "allow".into() }
    }

    #[tokio::test]
    async fn no_asker_means_no() {
        assert_eq!(Call::detached().confirm(&question()).await, Ok(false));
    }

    #[tokio::test]
    async fn answers_pass_through() {
        let call = Call::new(Progress::disabled(), CancellationToken::new(), Some(Arc::new(Fixed(Ok(true)))));
        assert_eq!(call.confirm(&question()).await, Ok(true));
    }

    #[tokio::test]
    async fn timeout_means_no() {
        let call = Call::new(Progress::disabled(), CancellationToken::new(), Some(Arc::new(Never)))
            .with_ask_timeout(Duration::from_millis(20));
        assert_eq!(call.confirm(&question()).await, Ok(false));
    }

    #[tokio::test]
    async fn cancellation_means_no() {
        let cancel = CancellationToken::new();
        let call = Call::new(Progress::disabled(), cancel.clone(), Some(Arc::new(Never)));
        cancel.cancel();
        assert_eq!(call.confirm(&question()).await, Ok(false));
    }
}
