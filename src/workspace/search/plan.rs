//! The validated, compiled form of a search's options that every worker shares.

use grep_regex::{RegexMatcher, RegexMatcherBuilder};

use super::filter::Exclusions;
use super::{SearchError, SearchOptions, WHOLE_FILE_LIMIT};

/// The validated, compiled form of [`SearchOptions`], shared read-only by all workers.
pub(super) struct Plan {
    pub(super) matcher: RegexMatcher,
    /// Lowercased extensions without their leading dot; `None` means every file.
    pub(super) extensions: Option<Vec<String>>,
    /// Whether a matched line ending in CR LF must be re-checked without its CR (see
    /// [`LineSink`](super::sink::LineSink)).
    pub(super) recheck_crlf_lines: bool,
    /// Larger files are streamed rather than read whole; lowered by tests to exercise streaming.
    pub(super) whole_file_limit: u64,
    /// Larger files the index holds as unchanged text are streamed (without a check: the index
    /// checked them) rather than read whole.
    pub(super) read_whole_up_to: u64,
    pub(super) exclusions: Exclusions,
}

impl Plan {
    pub(super) fn new(options: &SearchOptions) -> Result<Plan, SearchError> {
        if options.query.is_empty() {
            return Err(SearchError::EmptyQuery);
        }
        if options.max_matches == 0 {
            return Err(SearchError::ZeroMaxMatches);
        }
        if !options.regex && options.query.contains(['\n', '\r']) {
            return Err(SearchError::LineBreakInQuery);
        }
        // `multi_line` makes `^`/`$` line anchors, since the searcher runs the matcher over whole
        // buffers; `crlf` keeps CR out of every match and lets `$` match before CR LF.
        let matcher = RegexMatcherBuilder::new()
            .case_insensitive(!options.case_sensitive)
            .fixed_strings(!options.regex)
            .multi_line(true)
            .crlf(true)
            .build(&options.query)
            .map_err(|err| {
                let message = err.to_string();
                match options.regex {
                    true => SearchError::InvalidRegex { message },
                    false => SearchError::UncompilableQuery { message },
                }
            })?;
        let extensions = options
            .extensions
            .as_ref()
            .map(|exts| exts.iter().map(|ext| ext.strip_prefix('.').unwrap_or(ext).to_lowercase()).collect());
        // A literal is never empty and never contains CR, so only a pattern can match a CR LF line
        // solely at the position between CR and LF (for example `\B`).
        let exclusions = Exclusions::new(&options.exclude, &options.excluded_dirs)?;
        Ok(Plan {
            matcher,
            extensions,
            recheck_crlf_lines: options.regex,
            whole_file_limit: WHOLE_FILE_LIMIT,
            read_whole_up_to: WHOLE_FILE_LIMIT,
            exclusions,
        })
    }

    pub(super) fn selects_file(&self, file_name: &str) -> bool {
        let Some(extensions) = &self.extensions else { return true };
        if extensions.is_empty() {
            return false;
        }
        let name = file_name.to_lowercase();
        extensions.iter().any(|ext| match ext.is_empty() {
            true => !has_extension(&name),
            false => {
                name.len() > ext.len() + 1
                    && name.ends_with(ext.as_str())
                    && name.as_bytes()[name.len() - ext.len() - 1] == b'.'
            }
        })
    }
}

/// Whether a file name has an extension: a dot after the first character and before the last.
fn has_extension(name: &str) -> bool {
    name.rfind('.').is_some_and(|dot| dot > 0 && dot + 1 < name.len())
}
