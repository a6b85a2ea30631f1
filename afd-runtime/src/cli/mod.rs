//! The command line: every command the CLI surface exposes as a subcommand, generated at
//! run time from the catalog (clap's builder API), with `commands`, `describe`, `batch`,
//! `pipe`, `contexts`, `serve` (the MCP server, with the `mcp` feature) and `completions`.
//! Every call goes through [`Dispatcher::call`] on [`Surface::Cli`], as MCP's calls do.
//!
//! ```no_run
//! use afd_runtime::{CommandContext, Registry};
//!
//! #[tokio::main]
//! async fn main() {
//!     let code = afd_runtime::cli::run(Registry::global(), CommandContext::new()).await;
//!     std::process::exit(code);
//! }
//! ```
//!
//! An app with arguments of its own (a database path) adds them with [`Cli::arg`], reads
//! them from [`Parsed::matches`], and builds its context from them before running:
//!
//! ```no_run
//! use afd_runtime::cli::Cli;
//! use afd_runtime::{CommandContext, Registry};
//!
//! # async fn demo() {
//! let parsed = Cli::new(Registry::global())
//!     .name("shop")
//!     .arg(clap::Arg::new("db").long("db").global(true).default_value(":memory:"))
//!     .parse();
//! let db: &String = parsed.matches().get_one("db").unwrap();
//! let ctx = CommandContext::new().with_state(db.clone());
//! std::process::exit(parsed.run(ctx).await);
//! # }
//! ```
//!
//! How it is laid out: `app` builds the clap command tree, `run` carries out what was
//! parsed, `render` prints results for reading, `progress` shows a handler's progress,
//! `serve` runs the MCP server, and [`flags`] turns an input schema into flags (public, so
//! a client of any MCP server can reuse it).

mod app;
mod declared;
pub mod flags;
mod log;
mod logging;
mod output;
mod progress;
mod render;
mod run;
#[cfg(feature = "mcp")]
mod serve;

use std::ffi::OsString;
use std::fmt;
use std::sync::Arc;

use clap::{Arg, ArgMatches, Command};

use crate::command_context::CommandContext;
use crate::dispatch::{Dispatcher, DispatcherBuilder, DispatcherError, Surface};
use crate::error::{CommandError, codes};
use crate::registry::Registry;

pub use declared::prompt_arguments;
pub use log::StderrLog;
pub use progress::TerminalProgress;
pub use render::{print_error, render_content, render_data};

/// The exit code of a success.
pub const EXIT_SUCCESS: i32 = 0;
/// The exit code of a failed command (its error is printed on stderr).
pub const EXIT_FAILURE: i32 = 1;
/// The exit code of a usage error (clap's).
pub const EXIT_USAGE: i32 = 2;
/// The exit code when Ctrl-C cancelled the running command.
pub const EXIT_INTERRUPTED: i32 = 130;

type DispatchFn = Arc<dyn Fn(DispatcherBuilder) -> DispatcherBuilder + Send + Sync>;
#[cfg(feature = "mcp")]
type ServerFn =
    Arc<dyn Fn(crate::mcp::McpServerBuilder) -> crate::mcp::McpServerBuilder + Send + Sync>;

/// Builds an app's command line. [`run`] is the one-line form.
#[derive(Clone)]
pub struct Cli {
    registry: &'static Registry,
    name: String,
    version: Option<String>,
    about: Option<String>,
    args: Vec<Arg>,
    subcommands: Vec<Command>,
    dispatch: Option<DispatchFn>,
    #[cfg(feature = "mcp")]
    server: Option<ServerFn>,
    serve_by_default: bool,
}

impl fmt::Debug for Cli {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cli")
            .field("name", &self.name)
            .field("version", &self.version)
            .field("serve_by_default", &self.serve_by_default)
            .finish_non_exhaustive()
    }
}

impl Cli {
    /// A command line over `registry` (usually [`Registry::global`]), named after the
    /// running binary.
    pub fn new(registry: &'static Registry) -> Self {
        let name = std::env::args_os()
            .next()
            .map(std::path::PathBuf::from)
            .and_then(|path| {
                path.file_stem()
                    .map(|stem| stem.to_string_lossy().into_owned())
            })
            .unwrap_or_else(|| "app".to_owned());
        Cli {
            registry,
            name,
            version: None,
            about: None,
            args: Vec::new(),
            subcommands: Vec::new(),
            dispatch: None,
            #[cfg(feature = "mcp")]
            server: None,
            serve_by_default: true,
        }
    }

    /// The app's name: the program name in help and completions, and the MCP server's name.
    #[must_use]
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The app's version (`--version`, and the MCP server's version).
    #[must_use]
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The one-line description at the top of `--help`.
    #[must_use]
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// Adds a top-level argument of the app's own (a database path, a config file); read
    /// it from [`Parsed::matches`]. A `global(true)` argument is accepted after any
    /// subcommand too; a command's input property with the same flag name is then given
    /// through `--input-json` only.
    #[must_use]
    pub fn arg(mut self, arg: Arg) -> Self {
        self.args.push(arg);
        self
    }

    /// Adds a subcommand of the app's own; [`Parsed::matches`] tells whether it was chosen,
    /// and the app carries it out instead of calling [`Parsed::run`].
    #[must_use]
    pub fn subcommand(mut self, command: Command) -> Self {
        self.subcommands.push(command);
        self
    }

    /// Configures the dispatcher (which commands, middleware, limits, usage statistics):
    /// applied to the command line's dispatcher and to the MCP server's. The command line
    /// always serves [`Surface::Cli`] and keeps only what that surface allows.
    #[must_use]
    pub fn dispatch(
        mut self,
        configure: impl Fn(DispatcherBuilder) -> DispatcherBuilder + Send + Sync + 'static,
    ) -> Self {
        self.dispatch = Some(Arc::new(configure));
        self
    }

    /// Configures the MCP server `serve` runs (instructions, eager commands, page size);
    /// name, version, strategy, context and the dispatcher are set from the command line.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn server(
        mut self,
        configure: impl Fn(crate::mcp::McpServerBuilder) -> crate::mcp::McpServerBuilder
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.server = Some(Arc::new(configure));
        self
    }

    /// Whether the binary run with no subcommand serves MCP over stdio, taking `serve`'s
    /// flags at the top level (default: yes, so an MCP client configuration that starts the
    /// binary keeps working). An app that does something else with no subcommand turns it
    /// off and checks [`Parsed::matches`] itself.
    #[must_use]
    pub fn serve_by_default(mut self, on: bool) -> Self {
        self.serve_by_default = on;
        self
    }

    /// The dispatcher calls go through: [`Surface::Cli`], configured by
    /// [`dispatch`](Self::dispatch), keeping only what the CLI surface allows.
    ///
    /// # Errors
    ///
    /// The configuration names a command the registry does not have.
    pub fn dispatcher(&self) -> Result<Dispatcher, DispatcherError> {
        let builder = Dispatcher::builder(self.registry).surface(Surface::Cli);
        let builder = match &self.dispatch {
            Some(configure) => configure(builder),
            None => builder,
        };
        builder.surface(Surface::Cli).enforce_surface().build()
    }

    /// The clap command tree over `dispatcher`'s commands (for completions, or to inspect).
    pub fn command(&self, dispatcher: &Dispatcher) -> Command {
        app::build(self, dispatcher)
    }

    /// Parses the process's arguments. Prints help, the version or a usage error and exits
    /// (0, 0, 2) as clap does; a configuration naming an unknown command is printed and
    /// exits with 1.
    pub fn parse(self) -> Parsed {
        self.parse_from(std::env::args_os())
    }

    /// [`parse`](Self::parse) from the given arguments (the first is the program name).
    pub fn parse_from<I, T>(self, args: I) -> Parsed
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        match self.try_parse_from(args) {
            Ok(parsed) => parsed,
            Err(ParseError::Usage(error)) => error.exit(),
            Err(ParseError::NotExposed(error)) => {
                print_error(&error);
                std::process::exit(EXIT_USAGE)
            }
            Err(ParseError::Dispatcher(error)) => {
                eprintln!("error: {error}");
                std::process::exit(EXIT_FAILURE)
            }
        }
    }

    /// Parses the given arguments (the first is the program name).
    ///
    /// # Errors
    ///
    /// A usage error (or a request for help or the version, which clap reports as an
    /// error to print), or a configuration naming an unknown command.
    pub fn try_parse_from<I, T>(self, args: I) -> Result<Parsed, ParseError>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let dispatcher = self.dispatcher().map_err(ParseError::Dispatcher)?;
        let matches = self
            .command(&dispatcher)
            .try_get_matches_from(args)
            .map_err(|error| self.usage_error(&dispatcher, error))?;
        Ok(Parsed {
            cli: self,
            dispatcher,
            matches,
        })
    }
}

impl Cli {
    /// A subcommand clap did not know that names a registered command kept off the
    /// command line gets an error saying so, not clap's "unrecognized subcommand".
    /// A command the operator's scope bound (`AFD_SCOPES`) leaves out is unknown here.
    fn usage_error(&self, dispatcher: &Dispatcher, error: clap::Error) -> ParseError {
        use clap::error::{ContextKind, ContextValue, ErrorKind};

        if error.kind() != ErrorKind::InvalidSubcommand {
            return ParseError::Usage(error);
        }
        let Some(ContextValue::String(name)) = error.get(ContextKind::InvalidSubcommand) else {
            return ParseError::Usage(error);
        };
        let Some(resolved) = dispatcher.lookup(name) else {
            return ParseError::Usage(error);
        };
        let app = &self.name;
        ParseError::NotExposed(
            CommandError::new(
                codes::COMMAND_NOT_EXPOSED,
                format!(
                    "'{}' is not available on the command line",
                    resolved.entry.name()
                ),
            )
            .with_suggestion(format!(
                "`{app} commands` lists the commands you can run here; this one is served \
                 to other surfaces (such as MCP clients)"
            ))
            .with_retryable(false),
        )
    }
}

/// Why the arguments could not be parsed.
#[derive(Debug)]
#[non_exhaustive]
pub enum ParseError {
    /// A usage error, or help or the version to print (clap's).
    Usage(clap::Error),
    /// The subcommand names a registered command that is not exposed on the command line.
    NotExposed(CommandError),
    /// The dispatcher configuration names an unknown command.
    Dispatcher(DispatcherError),
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Usage(error) => error.fmt(f),
            ParseError::NotExposed(error) => error.fmt(f),
            ParseError::Dispatcher(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for ParseError {}

/// Parsed arguments, ready to run.
#[derive(Debug)]
pub struct Parsed {
    cli: Cli,
    dispatcher: Dispatcher,
    matches: ArgMatches,
}

impl Parsed {
    /// Everything parsed, for the app's own arguments and subcommands.
    pub fn matches(&self) -> &ArgMatches {
        &self.matches
    }

    /// The dispatcher calls go through.
    pub fn dispatcher(&self) -> &Dispatcher {
        &self.dispatcher
    }

    /// Carries out what was parsed with `ctx` as every call's base context, and returns
    /// the exit code: 0 on success, 1 when the command failed, 2 for a usage error, 130
    /// when Ctrl-C cancelled it.
    pub async fn run(self, ctx: CommandContext) -> i32 {
        run::run(&self.cli, &self.dispatcher, &self.matches, ctx).await
    }
}

/// Runs the command line of `registry`'s commands with `ctx` as every call's base
/// context, and returns the exit code for `std::process::exit`.
pub async fn run(registry: &'static Registry, ctx: CommandContext) -> i32 {
    Cli::new(registry).parse().run(ctx).await
}
