//! Results whose JSON text exists already. The admin history serializes a call's result to keep
//! it ([`super::CallObserver::finished`] returns that text); the transport that carries the reply
//! writes the same text as the reply's `result` instead of serializing the result a second time,
//! so a large result costs the same with the panel on as with `--no-admin`: the typed result and
//! one text of it.
//!
//! The result is tagged in its `_meta` with a number that names the text; the transport takes the
//! tag off before it writes anything, so the tag never reaches a client. The text is used only if
//! the result still has the shape it had when the text was written (rmcp strips `resultType` for
//! older peers after the handler returns; the server does that itself before the history reads
//! the result), and it is held weakly: one the history has forgotten is not used either, and the
//! result is then serialized as usual.
//!
//! Architecture invariant: a reply is written from the text that [`super::raw_json::to_writer`]
//! wrote for that very result before it was tagged, or from the result itself; never from another
//! call's text, and never with the tag.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use rmcp::model::{CallToolResult, MetaObject, ResultType};
use serde_json::Value;

/// The `_meta` key of a tagged result (the tag lives only inside this process).
const TAG: &str = "io.forgemcp/keptReply";

/// One transport's results with a kept text, by tag.
#[derive(Debug, Default)]
pub struct KeptReplies {
    texts: Mutex<HashMap<u64, Kept>>,
    next: AtomicU64,
}

#[derive(Debug)]
struct Kept {
    text: Weak<Value>,
    shape: Shape,
}

/// What of a result a later step could change without the text knowing.
#[derive(Debug, PartialEq)]
struct Shape {
    result_type: Option<ResultType>,
    content: usize,
    structured: bool,
    is_error: Option<bool>,
}

impl Shape {
    fn of(result: &CallToolResult) -> Shape {
        Shape {
            result_type: result.result_type.clone(),
            content: result.content.len(),
            structured: result.structured_content.is_some(),
            is_error: result.is_error,
        }
    }
}

impl KeptReplies {
    /// Tags `result` so that its reply is written from `text`: the [`super::raw_json::embed_nested`]
    /// text of `result` as it is now. A result that carries `_meta` of its own is left untagged.
    pub fn lend(&self, result: &mut CallToolResult, text: &Arc<Value>) {
        if result.meta.is_some() {
            return;
        }
        let tag = self.next.fetch_add(1, Ordering::Relaxed);
        let mut texts = self.texts.lock();
        // Tags whose reply never went out (rmcp dropped it) end with the history's text.
        texts.retain(|_, kept| kept.text.strong_count() > 0);
        texts.insert(tag, Kept { text: Arc::downgrade(text), shape: Shape::of(result) });
        let mut meta = MetaObject::new();
        meta.0.insert(TAG.to_owned(), tag.into());
        result.meta = Some(meta);
    }

    /// Takes the tag off `result`, with the text it names if that is still kept.
    pub fn take(&self, result: &mut CallToolResult) -> Option<Arc<Value>> {
        let tag = result.meta.as_ref()?.0.get(TAG)?.as_u64()?;
        // `lend` tags only results without `_meta` of their own.
        result.meta = None;
        let kept = self.texts.lock().remove(&tag)?;
        if kept.shape != Shape::of(result) {
            return None;
        }
        kept.text.upgrade()
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;

    use super::*;

    #[test]
    fn a_lent_text_is_taken_once_and_the_tag_never_stays() {
        let kept = KeptReplies::default();
        let mut result = CallToolResult::success(vec![ContentBlock::text("listing")]);
        let text = Arc::new(Value::String("the text".into()));
        kept.lend(&mut result, &text);
        assert!(result.meta.is_some());
        assert_eq!(kept.take(&mut result).as_deref(), Some(&*text));
        assert_eq!(result.meta, None);
        assert_eq!(kept.take(&mut result), None);
    }

    #[test]
    fn a_forgotten_text_leaves_the_result_to_be_serialized() {
        let kept = KeptReplies::default();
        let mut result = CallToolResult::success(vec![ContentBlock::text("listing")]);
        let text = Arc::new(Value::Null);
        kept.lend(&mut result, &text);
        drop(text);
        assert_eq!(kept.take(&mut result), None);
        assert_eq!(result.meta, None);
        assert!(kept.texts.lock().is_empty());
    }

    #[test]
    fn a_result_changed_after_its_text_was_written_is_serialized_itself() {
        let kept = KeptReplies::default();
        let mut result = CallToolResult::success(vec![ContentBlock::text("listing")]);
        let text = Arc::new(Value::Null);
        kept.lend(&mut result, &text);
        result.result_type = None;
        assert_eq!(kept.take(&mut result), None);
        assert_eq!(result.meta, None);
    }

    #[test]
    fn a_result_with_meta_of_its_own_is_not_tagged() {
        let kept = KeptReplies::default();
        let mut meta = MetaObject::new();
        meta.0.insert("ui".into(), "x".into());
        let mut result = CallToolResult::success(vec![ContentBlock::text("listing")]);
        result.meta = Some(meta.clone());
        kept.lend(&mut result, &Arc::new(Value::Null));
        assert_eq!(result.meta, Some(meta));
        assert_eq!(kept.take(&mut result), None);
    }
}
