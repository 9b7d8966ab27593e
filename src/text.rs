//! Small text helpers shared by more than one module.

/// An error and its sources as one lowercase line (`a: b: c`); a source whose text is already part
/// of the line is not repeated.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_joined_once() {
        #[derive(Debug, thiserror::Error)]
        #[error("failed to read `project/a`")]
        struct Outer(#[source] std::io::Error);
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        assert_eq!(error_chain(&Outer(io)), "failed to read `project/a`: no such file");
    }
}
