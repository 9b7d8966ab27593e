//! The in-process transport (the admin panel's session, the integration tests): the stdio
//! transport's line guard and MCP Tasks rewriting ([`check_incoming`], [`outgoing_line`]) on any
//! async byte stream, such as one end of `tokio::io::duplex`.

use std::future::Future;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, ReadHalf, WriteHalf};
use tokio::sync::Mutex;

use super::stdio::{Verdict, check_incoming, outgoing_line};

/// rmcp's transport on one async stream.
pub struct DuplexTransport<IO> {
    input: BufReader<ReadHalf<IO>>,
    output: Arc<Mutex<WriteHalf<IO>>>,
}

/// The server's transport on `io`.
pub fn transport<IO: AsyncRead + AsyncWrite + Send + 'static>(io: IO) -> DuplexTransport<IO> {
    let (input, output) = tokio::io::split(io);
    DuplexTransport { input: BufReader::new(input), output: Arc::new(Mutex::new(output)) }
}

async fn write_line<W: AsyncWrite + Unpin>(output: &Mutex<W>, mut line: Vec<u8>) -> std::io::Result<()> {
    line.push(b'\n');
    let mut output = output.lock().await;
    output.write_all(&line).await?;
    output.flush().await
}

impl<IO: AsyncRead + AsyncWrite + Send + 'static> Transport<RoleServer> for DuplexTransport<IO> {
    type Error = std::io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let output = self.output.clone();
        async move { write_line(&output, outgoing_line(&item)).await }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let mut line = Vec::new();
        loop {
            line.clear();
            if self.input.read_until(b'\n', &mut line).await.ok()? == 0 {
                return None;
            }
            while line.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
                line.pop();
            }
            match check_incoming(&line) {
                Verdict::Forward(message) => return Some(*message),
                Verdict::Ignore => {}
                Verdict::Reply(reply) => write_line(&self.output, reply.to_string().into_bytes()).await.ok()?,
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.output.lock().await.shutdown().await
    }
}
