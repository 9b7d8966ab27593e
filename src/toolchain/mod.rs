//! Toolchains: the built-in tool table and, later, discovery of the System, Visual Studio and user
//! toolsets once per server lifetime.
//!
//! Architecture invariant: this module starts processes only through `process`; the tool table in
//! `spec` is pure data.

pub mod spec;
