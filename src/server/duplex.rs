//! The in-process transport (the admin panel's session, the integration tests): the stdio
//! transport's line guard and MCP Tasks rewriting ([`check_incoming`], [`outgoing`]) on any
//! async byte stream, such as one end of `tokio::io::duplex`.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};
use tokio::sync::Mutex;

use super::raw_json::Wire;
use super::stdio::{Outgoing, Verdict, check_incoming, outgoing};

/// rmcp's transport on one async stream.
pub struct DuplexTransport<IO> {
    input: BufReader<ReadHalf<IO>>,
    /// The line being read. rmcp drops an unfinished `receive` whenever another event of its loop
    /// comes first (a reply to send, say); `read_until` keeps what it read in this buffer, so a
    /// partly read message survives that and the next `receive` goes on with it.
    line: Vec<u8>,
    output: Arc<Mutex<WriteHalf<IO>>>,
    wire: Wire,
}

/// The server's transport on `io`.
pub fn transport<IO: AsyncRead + AsyncWrite + Send + 'static>(io: IO) -> DuplexTransport<IO> {
    let (input, output) = tokio::io::split(io);
    DuplexTransport {
        input: BufReader::new(input),
        line: Vec::new(),
        output: Arc::new(Mutex::new(output)),
        wire: Wire::default(),
    }
}

async fn write<W: AsyncWrite + Unpin>(output: &Mutex<W>, out: Outgoing) -> std::io::Result<()> {
    let mut output = output.lock().await;
    for part in out.parts() {
        output.write_all(part).await?;
    }
    output.flush().await
}

impl<IO: AsyncRead + AsyncWrite + Send + 'static> Transport<RoleServer> for DuplexTransport<IO> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        mut item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        let out = outgoing(&mut item, &self.wire);
        drop(item);
        async move { write(&output, out).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if self.input.read_until(b'\n', &mut self.line).await.ok()? == 0 && self.line.is_empty() {
                return None;
            }
            let mut line = std::mem::take(&mut self.line);
            while line.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
                line.pop();
            }
            match check_incoming(&line, &self.wire) {
                Verdict::Forward(message) => return Some(*message),
                Verdict::Ignore => {}
                // Written by its own task: a `receive` dropped mid-write must not leave half a line.
                Verdict::Reply(reply) => {
                    let output = self.output.clone();
                    tokio::spawn(async move { write(&output, Outgoing::line(reply.to_string().into_bytes())).await });
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.shutdown().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rmcp drops `receive` whenever another event comes first; a message split across reads must
    /// still arrive whole.
    #[tokio::test]
    async fn a_receive_dropped_mid_message_loses_nothing() {
        let (server_io, mut client_io) = tokio::io::duplex(64);
        let mut transport = transport(server_io);
        let request = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
        let (head, tail) = request.split_at(20);
        client_io.write_all(head.as_bytes()).await.unwrap();
        let early = tokio::time::timeout(std::time::Duration::from_millis(50), transport.receive()).await;
        assert!(early.is_err(), "no whole line yet");
        client_io.write_all(format!("{tail}\n").as_bytes()).await.unwrap();
        let message = tokio::time::timeout(std::time::Duration::from_secs(5), transport.receive())
            .await
            .expect("the request is not lost with the dropped receive")
            .expect("the whole request");
        assert_eq!(serde_json::to_value(&message).unwrap()["id"], 7);
    }
}
