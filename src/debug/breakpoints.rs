//! Breakpoints of a session: what the caller set (`path:line` resolved to a managed file, or a
//! function name) and how the adapter bound them. DAP replaces a source file's whole list (and the
//! whole function list) on each request, so every change resends the affected list.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use super::Error;
use super::model::Breakpoint;
use super::session::{REQUEST_TIMEOUT, Session};
use crate::dap::protocol as dap;
use crate::workspace::path::QualifiedPath;

/// A breakpoint the caller set: its display form and where it applies.
#[derive(Debug, Clone)]
pub enum Target {
    Line { path: QualifiedPath, abs: PathBuf, line: u32 },
    Function(String),
}

impl Target {
    pub fn spec(&self) -> String {
        match self {
            Target::Line { path, line, .. } => format!("{path}:{line}"),
            Target::Function(name) => name.clone(),
        }
    }
}

/// The breakpoints of a session as the adapter last bound them.
#[derive(Default)]
pub struct Breakpoints {
    lines: BTreeMap<PathBuf, (QualifiedPath, BTreeSet<u32>)>,
    functions: BTreeSet<String>,
    pub(super) bound: BTreeMap<String, Breakpoint>,
}

impl Session {
    /// Adds and removes breakpoints, sending each changed source (and the function list) again.
    pub async fn change_breakpoints(
        &self,
        state: &mut Breakpoints,
        add: &[Target],
        remove: &[Target],
    ) -> Result<(), Error> {
        let mut sources = BTreeSet::new();
        let mut functions_changed = false;
        for (target, adding) in add.iter().map(|t| (t, true)).chain(remove.iter().map(|t| (t, false))) {
            match target {
                Target::Line { path, abs, line } => {
                    let entry = state.lines.entry(abs.clone()).or_insert_with(|| (path.clone(), BTreeSet::new()));
                    if adding {
                        entry.1.insert(*line)
                    } else {
                        entry.1.remove(line)
                    };
                    sources.insert(abs.clone());
                }
                Target::Function(name) => {
                    if adding {
                        state.functions.insert(name.clone())
                    } else {
                        state.functions.remove(name)
                    };
                    functions_changed = true;
                }
            }
            if !adding {
                state.bound.remove(&target.spec());
            }
        }
        for abs in sources {
            let (path, lines) = state.lines.get(&abs).cloned().expect("just inserted");
            let args = dap::SetBreakpointsArguments {
                source: dap::Source { path: abs.to_string_lossy().into_owned() },
                breakpoints: lines.iter().map(|&line| dap::SourceBreakpoint { line }).collect(),
            };
            let body = self.client.request::<dap::SetBreakpoints>(&args, REQUEST_TIMEOUT).await?;
            for (line, bound) in lines.iter().zip(body.breakpoints) {
                let spec = format!("{path}:{line}");
                state.bound.insert(spec.clone(), self.bound(spec, &bound));
            }
            if lines.is_empty() {
                state.lines.remove(&abs);
            }
        }
        if functions_changed {
            let args = dap::SetFunctionBreakpointsArguments {
                breakpoints: state
                    .functions
                    .iter()
                    .map(|name| dap::FunctionBreakpoint { name: name.clone() })
                    .collect(),
            };
            let body = self.client.request::<dap::SetFunctionBreakpoints>(&args, REQUEST_TIMEOUT).await?;
            for (name, bound) in state.functions.iter().zip(body.breakpoints) {
                state.bound.insert(name.clone(), self.bound(name.clone(), &bound));
            }
        }
        Ok(())
    }

    pub fn list_breakpoints(state: &Breakpoints) -> Vec<Breakpoint> {
        state.bound.values().cloned().collect()
    }

    fn bound(&self, spec: String, bound: &dap::Breakpoint) -> Breakpoint {
        Breakpoint {
            spec,
            bound: bound.verified,
            path: bound.source.as_ref().and_then(|s| s.path.as_deref()).and_then(|p| self.qualify(p)),
            line: bound.line,
            message: bound.message.clone().filter(|m| !m.is_empty()),
        }
    }
}
