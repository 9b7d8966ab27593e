//! The `Content-Length: N\r\n\r\n` framing followed by N bytes of JSON that the LSP base protocol
//! and the Debug Adapter Protocol share byte for byte (`lsp/` and `dap/` both use this module).
//!
//! [`parse_frame`] is a pure function on a byte slice (tested on slices, partial input and bad
//! headers); [`FrameReader`] feeds it from any `AsyncRead`, keeping what it read past one frame for
//! the next.
//!
//! Architecture invariant: this module knows neither protocol; it depends on nothing in the crate.
//! Architecture invariant: a malformed header is a hard error (the stream cannot be resynchronised);
//! header and body sizes are bounded so a broken peer cannot make us buffer without limit.

use tokio::io::{AsyncRead, AsyncReadExt};

/// Longest header block accepted (all header lines together).
pub const MAX_HEADER_BYTES: usize = 8 * 1024;
/// Largest message body accepted.
pub const MAX_BODY_BYTES: usize = 512 * 1024 * 1024;

/// Why a byte stream is not a sequence of Content-Length frames.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FramingError {
    #[error("the message header has no `Content-Length` field")]
    MissingContentLength,
    #[error("`Content-Length` is given twice")]
    RepeatedContentLength,
    #[error("`Content-Length` is not a number: `{0}`")]
    InvalidContentLength(String),
    #[error("the header line `{0}` is not a `Name: value` field")]
    MalformedHeaderLine(String),
    #[error("the message header is not ASCII text")]
    NonAsciiHeader,
    #[error("the message header is longer than {MAX_HEADER_BYTES} bytes")]
    HeaderTooLong,
    #[error("the message body of {0} bytes is larger than the limit of {MAX_BODY_BYTES} bytes")]
    BodyTooLarge(usize),
    #[error("the stream ended inside a message")]
    TruncatedMessage,
}

/// One complete frame found at the start of a buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Where the body lies in the buffer.
    pub body: std::ops::Range<usize>,
    /// Bytes the frame occupies, header included.
    pub consumed: usize,
}

/// Looks for one complete frame at the start of `buf`. `Ok(None)`: more bytes are needed.
pub fn parse_frame(buf: &[u8]) -> Result<Option<Frame>, FramingError> {
    let Some(header_end) = find_header_end(buf) else {
        if buf.len() > MAX_HEADER_BYTES {
            return Err(FramingError::HeaderTooLong);
        }
        return Ok(None);
    };
    if header_end > MAX_HEADER_BYTES {
        return Err(FramingError::HeaderTooLong);
    }
    let header = std::str::from_utf8(&buf[..header_end]).map_err(|_| FramingError::NonAsciiHeader)?;
    if !header.is_ascii() {
        return Err(FramingError::NonAsciiHeader);
    }
    let mut length = None;
    for line in header.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(FramingError::MalformedHeaderLine(line.to_owned()));
        };
        // Other fields (`Content-Type`) carry nothing we use: the body is always UTF-8 JSON.
        if name.trim().eq_ignore_ascii_case("content-length") {
            if length.is_some() {
                return Err(FramingError::RepeatedContentLength);
            }
            let value = value.trim();
            let parsed: usize = value.parse().map_err(|_| FramingError::InvalidContentLength(value.to_owned()))?;
            length = Some(parsed);
        }
    }
    let length = length.ok_or(FramingError::MissingContentLength)?;
    if length > MAX_BODY_BYTES {
        return Err(FramingError::BodyTooLarge(length));
    }
    let body_start = header_end + 4;
    let body_end = body_start + length;
    if buf.len() < body_end {
        return Ok(None);
    }
    Ok(Some(Frame { body: body_start..body_end, consumed: body_end }))
}

/// Position of the `\r\n\r\n` that ends the header block.
fn find_header_end(buf: &[u8]) -> Option<usize> {
    memchr::memmem::find(buf, b"\r\n\r\n")
}

/// Frames one message body.
pub fn encode(body: &[u8]) -> Vec<u8> {
    let mut res = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    res.extend_from_slice(body);
    res
}

/// Reads frames from a stream.
pub struct FrameReader<R> {
    reader: R,
    buf: Vec<u8>,
}

/// Why no next frame could be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error(transparent)]
    Framing(#[from] FramingError),
    #[error("reading the stream failed: {0}")]
    Io(#[from] std::io::Error),
}

impl<R: AsyncRead + Unpin> FrameReader<R> {
    pub fn new(reader: R) -> FrameReader<R> {
        FrameReader { reader, buf: Vec::with_capacity(64 * 1024) }
    }

    /// The next message body; `Ok(None)` when the stream ended cleanly between messages.
    pub async fn next(&mut self) -> Result<Option<Vec<u8>>, ReadError> {
        loop {
            if let Some(frame) = parse_frame(&self.buf)? {
                let body = self.buf[frame.body].to_vec();
                self.buf.drain(..frame.consumed);
                return Ok(Some(body));
            }
            let mut chunk = [0u8; 64 * 1024];
            let n = self.reader.read(&mut chunk).await?;
            if n == 0 {
                if self.buf.iter().all(u8::is_ascii_whitespace) {
                    return Ok(None);
                }
                return Err(FramingError::TruncatedMessage.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body_of(buf: &[u8]) -> Option<&[u8]> {
        parse_frame(buf).unwrap().map(|frame| &buf[frame.body])
    }

    #[test]
    fn a_complete_frame_is_found() {
        let buf = b"Content-Length: 2\r\n\r\n{}";
        assert_eq!(body_of(buf), Some(&b"{}"[..]));
        assert_eq!(parse_frame(buf).unwrap().unwrap().consumed, buf.len());
    }

    #[test]
    fn encode_and_parse_agree() {
        let framed = encode("{\"a\":\"é\"}".as_bytes());
        assert!(framed.starts_with(b"Content-Length: 10\r\n\r\n"));
        assert_eq!(body_of(&framed), Some("{\"a\":\"é\"}".as_bytes()));
    }

    #[test]
    fn partial_input_needs_more_bytes() {
        let framed = encode(b"{\"jsonrpc\":\"2.0\"}");
        for cut in 0..framed.len() {
            assert_eq!(parse_frame(&framed[..cut]).unwrap(), None, "cut at {cut}");
        }
        assert!(parse_frame(&framed).unwrap().is_some());
    }

    #[test]
    fn bytes_after_a_frame_are_left_for_the_next() {
        let mut buf = encode(b"[1]");
        buf.extend_from_slice(b"Content-Len");
        let frame = parse_frame(&buf).unwrap().unwrap();
        assert_eq!(&buf[frame.body.clone()], b"[1]");
        assert_eq!(&buf[frame.consumed..], b"Content-Len");
    }

    #[test]
    fn header_names_are_case_insensitive_and_other_fields_are_ignored() {
        let buf = b"content-type: application/vscode-jsonrpc; charset=utf-8\r\nCONTENT-LENGTH:3\r\n\r\n[1]";
        assert_eq!(body_of(buf), Some(&b"[1]"[..]));
    }

    #[test]
    fn bad_headers_are_errors() {
        let cases: [(&[u8], FramingError); 6] = [
            (b"Content-Type: x\r\n\r\n{}", FramingError::MissingContentLength),
            (b"Content-Length: two\r\n\r\n{}", FramingError::InvalidContentLength("two".into())),
            (b"Content-Length: -1\r\n\r\n", FramingError::InvalidContentLength("-1".into())),
            (b"Content-Length 2\r\n\r\n{}", FramingError::MalformedHeaderLine("Content-Length 2".into())),
            (b"Content-Length: 1\r\nContent-Length: 1\r\n\r\n{", FramingError::RepeatedContentLength),
            ("Content-Léngth: 1\r\n\r\n{".as_bytes(), FramingError::NonAsciiHeader),
        ];
        for (buf, expected) in cases {
            assert_eq!(parse_frame(buf), Err(expected), "{:?}", String::from_utf8_lossy(buf));
        }
    }

    #[test]
    fn oversized_headers_and_bodies_are_refused() {
        let long = vec![b'x'; MAX_HEADER_BYTES + 1];
        assert_eq!(parse_frame(&long), Err(FramingError::HeaderTooLong));
        let huge = format!("Content-Length: {}\r\n\r\n", MAX_BODY_BYTES + 1);
        assert_eq!(parse_frame(huge.as_bytes()), Err(FramingError::BodyTooLarge(MAX_BODY_BYTES + 1)));
    }

    #[tokio::test]
    async fn the_reader_joins_partial_reads() {
        let mut bytes = encode(b"{\"id\":1}");
        bytes.extend(encode(b"{\"id\":2}"));
        // One byte per read: every frame boundary and header byte arrives separately.
        let reader = tokio_test_reader(bytes);
        let mut frames = FrameReader::new(reader);
        assert_eq!(frames.next().await.unwrap().unwrap(), b"{\"id\":1}");
        assert_eq!(frames.next().await.unwrap().unwrap(), b"{\"id\":2}");
        assert!(frames.next().await.unwrap().is_none());
    }

    #[tokio::test]
    async fn the_reader_reports_a_truncated_message() {
        let bytes = b"Content-Length: 10\r\n\r\n{\"a\"".to_vec();
        let mut frames = FrameReader::new(tokio_test_reader(bytes));
        assert!(matches!(frames.next().await, Err(ReadError::Framing(FramingError::TruncatedMessage))));
    }

    /// A reader that hands out one byte per read.
    fn tokio_test_reader(bytes: Vec<u8>) -> impl AsyncRead + Unpin {
        struct OneByte(std::collections::VecDeque<u8>);
        impl AsyncRead for OneByte {
            fn poll_read(
                mut self: std::pin::Pin<&mut Self>,
                _cx: &mut std::task::Context<'_>,
                buf: &mut tokio::io::ReadBuf<'_>,
            ) -> std::task::Poll<std::io::Result<()>> {
                if let Some(byte) = self.0.pop_front() {
                    buf.put_slice(&[byte]);
                }
                std::task::Poll::Ready(Ok(()))
            }
        }
        OneByte(bytes.into())
    }
}
