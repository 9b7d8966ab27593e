//! A client that writes request lines and reads reply lines as bytes, as an ideal client on the
//! binary's stdio would: only a reply's id is read, so neither a client library's parsing (rmcp's
//! untagged enums buffer a message and try each variant) nor a value of the reply is counted in
//! what is measured. `mcpbench.py` times its calls the same way, to the arrival of the reply line.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, ReadHalf, WriteHalf};

pub struct RawClient {
    input: BufReader<ReadHalf<DuplexStream>>,
    output: WriteHalf<DuplexStream>,
    next_id: u64,
}

impl RawClient {
    /// Initializes a session on `io`, the client's end of a server's in-process transport.
    pub async fn connect(io: DuplexStream) -> Result<RawClient, String> {
        let (input, output) = tokio::io::split(io);
        let mut res = RawClient { input: BufReader::new(input), output, next_id: 0 };
        let hello = json!({ "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": { "name": "bench", "version": "1" } });
        res.request("initialize", hello).await?;
        res.write(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })).await?;
        Ok(res)
    }

    async fn write(&mut self, message: Value) -> Result<(), String> {
        let line = format!("{message}\n");
        self.output.write_all(line.as_bytes()).await.map_err(|e| e.to_string())
    }

    /// The reply line to one request (notifications before it are skipped).
    pub async fn request(&mut self, method: &str, params: Value) -> Result<Vec<u8>, String> {
        self.next_id += 1;
        let id = self.next_id;
        self.write(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params })).await?;
        loop {
            let mut line = Vec::new();
            if self.input.read_until(b'\n', &mut line).await.map_err(|e| e.to_string())? == 0 {
                return Err(format!("the server closed the pipe before answering {method}"));
            }
            // Only the id is read: the rest is skipped without building a value of the reply.
            #[derive(serde::Deserialize)]
            struct Id {
                id: Option<u64>,
            }
            if serde_json::from_slice::<Id>(&line).is_ok_and(|reply| reply.id == Some(id)) {
                return Ok(line);
            }
        }
    }
}
