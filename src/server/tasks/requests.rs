//! The 2025-11-25 task methods as [`ForgeServer`] answers them: what reaches the custom-request
//! handler after the transports' renaming ([`super::wire`]).

use rmcp::model::{CallToolRequestParams, CustomRequest, CustomResult, ErrorCode};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use super::augmented::notify_status;
use super::{runs_long, wire};
use crate::server::{Delivery, ForgeServer};

impl ForgeServer {
    /// A request rmcp has no typed variant for: the task methods, else method-not-found.
    pub(in crate::server) async fn custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let params = request.params.unwrap_or(Value::Null);
        let tasks = &self.shared.augmented;
        let answer = match request.method.as_str() {
            wire::TASK_CALL => self.call_as_task(params, context)?,
            wire::TASK_GET => tasks.get(self.origin, task_id(&params)?)?,
            wire::TASK_RESULT => tasks.result(self.origin, task_id(&params)?, &context.ct).await?,
            wire::TASK_CANCEL => {
                let task = tasks.cancel(self.origin, task_id(&params)?)?;
                notify_status(&context.peer, task.clone()).await;
                task
            }
            wire::TASK_LIST => {
                let cursor = match params.get("cursor") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(cursor)) => Some(cursor.as_str()),
                    Some(_) => return Err(ErrorData::invalid_params("`cursor` must be a string", None)),
                };
                tasks.list(self.origin, cursor)?
            }
            method => {
                return Err(ErrorData::new(
                    ErrorCode::METHOD_NOT_FOUND,
                    format!("method not found: {method}"),
                    Some(json!({ "method": method })),
                ));
            }
        };
        Ok(CustomResult::new(answer))
    }

    /// A task-augmented `tools/call`: the `CreateTaskResult`, with the call running on.
    fn call_as_task(&self, mut params: Value, context: RequestContext<RoleServer>) -> Result<Value, ErrorData> {
        let task = params.as_object_mut().and_then(|p| p.remove("task")).unwrap_or(Value::Null);
        let ttl = match task.get("ttl") {
            _ if !task.is_object() => return Err(ErrorData::invalid_params("`task` must be an object", None)),
            None | Some(Value::Null) => None,
            Some(ttl) => Some(ttl.as_u64().ok_or_else(|| {
                ErrorData::invalid_params(
                    "`task.ttl` must be a whole number of milliseconds",
                    Some(json!({ "ttl": ttl })),
                )
            })?),
        };
        let request: CallToolRequestParams = serde_json::from_value(params)
            .map_err(|e| ErrorData::invalid_params(format!("invalid tools/call params: {e}"), None))?;
        let name = request.name.to_string();
        if self.shared.registry.get(&name).is_none() {
            return Err(ErrorData::invalid_params(format!("unknown tool `{name}`"), Some(json!({ "name": name }))));
        }
        if !runs_long(&name) {
            // MCP 2025-11-25: a tool without task support answers a task-augmented call with -32601.
            return Err(ErrorData::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "`{name}` does not run as a task (its `execution.taskSupport` is forbidden); call it without `task`"
                ),
                Some(json!({ "name": name })),
            ));
        }
        let server = self.clone();
        let peer = context.peer.clone();
        let task = self.shared.augmented.create(self.origin, ttl, peer, move |stop, status| {
            let mut context = context;
            context.ct = stop;
            Box::pin(async move { server.run_call(name, request, context, vec![status], Delivery::Task).await })
        });
        Ok(json!({ "task": task }))
    }
}

fn task_id(params: &Value) -> Result<&str, ErrorData> {
    params
        .get("taskId")
        .and_then(Value::as_str)
        .ok_or_else(|| ErrorData::invalid_params("`taskId` (a string) is required", None))
}
