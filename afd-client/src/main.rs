//! `afd`: a command line for any MCP server, started as a child process (`--server`) or
//! reached over streamable HTTP (`--url`). `tools` lists its tools, `call <tool> --field
//! value` calls one with flags from the tool's input schema (`afd_runtime::cli::flags`, as
//! an afd app's own command line builds them), `batch FILE` runs afd-batch. On an afd
//! server, `discover` and `detail` use its meta-tools, and `call` reaches a command that
//! the lazy strategy does not list through afd-detail (for the schema) and afd-call.
//! `resources`, `read`, `prompts` and `prompt` reach the server's resources and prompts.
//! `shell` reads the same subcommands line by line, with history and Tab completion of
//! tool and command names. A server behind OAuth is reached after `login` (a sign-in kept
//! per server, `logout` forgets it), or with a bearer token in `--token` or `AFD_TOKEN`; a
//! call refused for want of a scope signs in once more for it. A server's questions
//! (elicitation, roots) are answered on the terminal, on either protocol revision.

mod auth;
mod declared;
mod shell;
mod terminal;

use std::process::exit;

use afd_runtime::cli::flags::{Flags, read_input};
use afd_runtime::cli::{EXIT_FAILURE, EXIT_SUCCESS, EXIT_USAGE, render_data};
use afd_runtime::codes;
use clap::{Arg, ArgAction, ArgMatches, Command};
use rmcp::model::{CallToolRequestParams, CallToolResult, JsonObject, ProtocolVersion, Tool};
use rmcp::service::{ClientLifecycleMode, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientServiceExt as _, RoleClient};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, terminal::Terminal>;

fn command() -> Command {
    Command::new("afd")
        .about("A command line for any MCP server: list, search and call its tools")
        .arg(
            Arg::new("server")
                .long("server")
                .value_name("COMMAND LINE")
                .help("Start this MCP server over stdio (split into words as a shell does)")
                .conflicts_with("url")
                .required_unless_present("url"),
        )
        .arg(
            Arg::new("url")
                .long("url")
                .value_name("URL")
                .help("Connect to this streamable HTTP MCP endpoint (https:// checked against the system's roots, or the CA file in SSL_CERT_FILE)"),
        )
        .arg(
            Arg::new("token")
                .long("token")
                .value_name("TOKEN")
                .requires("url")
                .help("Send this bearer token to the --url server (default: AFD_TOKEN; prefer the variable, which other users of the machine cannot read in the process list)"),
        )
        .arg(json_flag())
        .subcommand_required(true)
        .subcommands(subcommands())
        .subcommand(
            Command::new("shell")
                .about("An interactive shell on the server (history, Tab completes tool names)"),
        )
        .subcommand(
            Command::new("login")
                .about("Sign in to the --url server (OAuth in the browser); the sign-in is kept for later runs")
                .arg(
                    Arg::new("scope")
                        .long("scope")
                        .action(ArgAction::Append)
                        .help("A scope to ask for (repeat; default: what the server asks for)"),
                )
                .arg(
                    Arg::new("client-id")
                        .long("client-id")
                        .help("A client id registered at the authorization server beforehand (default: AFD_CLIENT_ID; its secret, if any, in AFD_CLIENT_SECRET, which later runs need too); default: registered on the fly")
                )
                .arg(
                    Arg::new("no-browser")
                        .long("no-browser")
                        .action(ArgAction::SetTrue)
                        .help("Only print the URL to open"),
                ),
        )
        .subcommand(Command::new("logout").about("Forget the sign-in kept for the --url server"))
}

fn json_flag() -> Arg {
    Arg::new("json")
        .long("json")
        .global(true)
        .action(ArgAction::SetTrue)
        .help("Print results as JSON")
}

/// What can be done once connected: on the command line and in the shell alike.
fn subcommands() -> Vec<Command> {
    let tools = [
        Command::new("tools").about("List the server's tools"),
        Command::new("discover")
            .about("Search an afd server's commands (afd-discover)")
            .arg(
                Arg::new("search")
                    .long("search")
                    .value_name("QUERY")
                    .action(ArgAction::Append)
                    .help("Search words (repeat for up to 3 phrasings of one request)"),
            )
            .arg(Arg::new("category").long("category").value_name("CATEGORY")),
        Command::new("detail")
            .about("An afd server's command definition (afd-detail)")
            .arg(Arg::new("command").required(true)),
        Command::new("call")
            .about("Call a tool (or an afd command): `call <tool> --field value ...`")
            .arg(Arg::new("tool").required(true))
            .arg(
                Arg::new("args")
                    .num_args(0..)
                    .trailing_var_arg(true)
                    .allow_hyphen_values(true),
            ),
        Command::new("batch")
            .about("Run afd-batch with the request in a JSON file ('-': stdin)")
            .arg(Arg::new("file").required(true)),
    ];
    tools.into_iter().chain(declared::subcommands()).collect()
}

#[tokio::main]
async fn main() {
    let matches = command().get_matches();
    exit(run(&matches).await);
}

/// `error` and the errors under it, `: `-separated: a refused certificate or a refused
/// connection is often only in a cause. rmcp keeps the transport's error, and the HTTP
/// client's under it, without naming them as sources, so those steps are taken by hand.
fn with_causes(error: &(dyn std::error::Error + 'static)) -> String {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut text = error.to_string();
    let mut cause = next_cause(error);
    while let Some(error) = cause {
        let more = error.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = next_cause(error);
    }
    return text;

    fn next_cause<'a>(
        error: &'a (dyn std::error::Error + 'static),
    ) -> Option<&'a (dyn std::error::Error + 'static)> {
        if let Some(ClientInitializeError::TransportError { error, .. }) = error.downcast_ref() {
            return Some(error);
        }
        error.source().or_else(|| {
            match error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                Some(StreamableHttpError::Client(inner)) => Some(inner),
                _ => None,
            }
        })
    }
}

/// The `WWW-Authenticate` challenge of a server that refused the connection for want of
/// authorization (401), or of a scope (403), found among `error`'s causes.
fn refused_authorization<'a>(error: &'a (dyn std::error::Error + 'static)) -> Option<&'a str> {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let mut cause = Some(error);
    while let Some(error) = cause {
        if let Some(http) = error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            match http {
                StreamableHttpError::AuthRequired(required) => {
                    return Some(&required.www_authenticate_header);
                }
                StreamableHttpError::InsufficientScope(scope) => {
                    return Some(&scope.www_authenticate_header);
                }
                _ => {}
            }
        }
        cause = match error.downcast_ref::<ClientInitializeError>() {
            Some(ClientInitializeError::TransportError { error, .. }) => Some(error),
            _ => error.source(),
        };
    }
    None
}

/// What to tell a user whose connection was refused for authorization: what the server
/// asked for, and how to give it a token. The token itself is never shown.
fn authorization_message(url: &str, sent_token: bool, challenge: &str) -> String {
    let challenge = match challenge.trim() {
        "" => String::new(),
        challenge => format!(" (it answered `WWW-Authenticate: {challenge}`)"),
    };
    let token_env = auth::TOKEN_ENV;
    if sent_token {
        format!(
            "{url} refused the credential{challenge}: it has expired, was issued for another server, or lacks a scope; sign in again with `afd --url {url} login`, or pass a new token with --token or {token_env}"
        )
    } else {
        format!(
            "{url} asks for authorization{challenge}: sign in with `afd --url {url} login`, or pass a bearer token with --token or {token_env}"
        )
    }
}

/// The handshake: the stateless 2026-07-28 wire when the server speaks it (`server/discover`
/// answered), else the `initialize` of the revision it speaks.
fn lifecycle() -> ClientLifecycleMode {
    let mut preferred = vec![ProtocolVersion::V_2026_07_28];
    for version in ProtocolVersion::KNOWN_VERSIONS.iter().rev() {
        if !preferred.contains(version) {
            preferred.push(version.clone());
        }
    }
    ClientLifecycleMode::Auto {
        preferred_versions: preferred,
        legacy_version: None,
    }
}

/// A client of the `--url` server with `credential`.
async fn connect_url(url: &str, credential: auth::Credential) -> Result<Client, ConnectError> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let sent = !matches!(credential, auth::Credential::None);
    let connected = match credential {
        auth::Credential::Session(session) => {
            let http = (*session).client(reqwest::Client::new());
            let transport = StreamableHttpClientTransport::with_client(http, config);
            terminal::Terminal::default()
                .serve_with_lifecycle(transport, lifecycle())
                .await
        }
        auth::Credential::Token(token) => {
            let transport = StreamableHttpClientTransport::from_config(config.auth_header(token));
            terminal::Terminal::default()
                .serve_with_lifecycle(transport, lifecycle())
                .await
        }
        auth::Credential::None => {
            let transport = StreamableHttpClientTransport::from_config(config);
            terminal::Terminal::default()
                .serve_with_lifecycle(transport, lifecycle())
                .await
        }
    };
    connected.map_err(|e| match refused_authorization(&e) {
        Some(challenge) => ConnectError {
            message: authorization_message(url, sent, challenge),
            challenge: Some(challenge.to_owned()),
        },
        None => ConnectError {
            message: format!("cannot connect to {url}: {}", with_causes(&e)),
            challenge: None,
        },
    })
}

/// Why a connection failed, and the server's challenge when it asked for authorization.
struct ConnectError {
    message: String,
    challenge: Option<String>,
}

async fn connect(matches: &ArgMatches) -> Result<Client, String> {
    if let Some(url) = matches.get_one::<String>("url") {
        let credential = auth::credential(matches, url).await?;
        return connect_url(url, credential).await.map_err(|e| e.message);
    }
    let line = matches
        .get_one::<String>("server")
        .cloned()
        .unwrap_or_default();
    let words = shlex::split(&line).ok_or("--server has an unclosed quote")?;
    let (program, args) = words.split_first().ok_or("--server needs a command line")?;
    let mut process = tokio::process::Command::new(program);
    process.args(args);
    let (transport, _) = TokioChildProcess::builder(process)
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start '{program}': {e}"))?;
    terminal::Terminal::default()
        .serve_with_lifecycle(transport, lifecycle())
        .await
        .map_err(|e| format!("the MCP handshake with '{line}' failed: {e}"))
}

async fn run(matches: &ArgMatches) -> i32 {
    let url = matches.get_one::<String>("url");
    match (matches.subcommand(), url) {
        (Some(("login", login)), Some(url)) => {
            // The server's challenge to a client without credentials starts discovery.
            let challenge = match connect_url(url, auth::Credential::None).await {
                Ok(client) => {
                    let _ = client.cancel().await;
                    None
                }
                Err(error) => error.challenge,
            };
            return auth::login(url, challenge, login).await;
        }
        (Some(("logout", _)), Some(url)) => return auth::logout(url).await,
        (Some(("login" | "logout", _)), None) => {
            eprintln!("error: login and logout are for a --url server");
            return EXIT_USAGE;
        }
        _ => {}
    }
    let client = match connect(matches).await {
        Ok(client) => client,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_FAILURE;
        }
    };
    let (client, code) = match matches.subcommand() {
        Some(("shell", _)) => {
            let code = shell::run(&client, matches.get_flag("json")).await;
            (client, code)
        }
        _ => {
            let code = run_subcommand(&client, matches).await;
            match url {
                Some(url) if code != EXIT_SUCCESS => step_up(client, url, matches, code).await,
                _ => (client, code),
            }
        }
    };
    let _ = client.cancel().await;
    code
}

/// After a subcommand the server refused for want of a scope (a 403 `insufficient_scope`,
/// or `INSUFFICIENT_SCOPE` from inside afd-call) while a kept sign-in was used: one more
/// sign-in for the scopes held and those asked for, and the subcommand once more. A
/// second refusal is the answer.
async fn step_up(client: Client, url: &str, matches: &ArgMatches, code: i32) -> (Client, i32) {
    let Some(refusal) = client.service().take_refusal() else {
        return (client, code);
    };
    let mut scopes = match auth::credential(matches, url).await {
        Ok(auth::Credential::Session(session)) => session.scopes().await,
        // A token from elsewhere, or no sign-in: nothing to step up.
        _ => return (client, code),
    };
    let asked = refusal.scopes.join(" ");
    for scope in refusal.scopes {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    eprintln!("{url} asks for the scope \"{asked}\": signing in again for it.");
    let session = match auth::sign_in(url, refusal.challenge.as_deref(), scopes, None).await {
        Ok(session) => session,
        Err(error) => {
            eprintln!("error: {error}");
            return (client, code);
        }
    };
    let _ = client.cancel().await;
    let client = match connect_url(url, auth::Credential::Session(Box::new(session))).await {
        Ok(client) => client,
        Err(error) => {
            eprintln!("error: {}", error.message);
            std::process::exit(EXIT_FAILURE);
        }
    };
    let code = run_subcommand(&client, matches).await;
    if client.service().take_refusal().is_some() {
        eprintln!(
            "error: {url} still refuses after signing in for the scope \"{asked}\": the authorization server did not grant it; ask its administrator"
        );
    }
    (client, code)
}

/// Runs the subcommand `matches` holds (one of [`subcommands`]) on the connected server.
async fn run_subcommand(client: &Client, matches: &ArgMatches) -> i32 {
    // `--json` after a tool's flags belongs to afd, not to the tool.
    let json = matches.get_flag("json")
        || matches
            .subcommand_matches("call")
            .and_then(|call| call.get_many::<String>("args"))
            .is_some_and(|mut args| args.any(|arg| arg == "--json"));
    match matches.subcommand() {
        Some(("tools", _)) => tools(client, json).await,
        Some(("discover", sub)) => {
            let mut input = json!({});
            let phrasings: Vec<&String> = sub
                .get_many::<String>("search")
                .map(Iterator::collect)
                .unwrap_or_default();
            match phrasings.as_slice() {
                [] => {}
                [query] => input["search"] = json!(query),
                many => input["search"] = json!(many),
            }
            if let Some(category) = sub.get_one::<String>("category") {
                input["category"] = json!(category);
            }
            call_tool(client, "afd-discover", input, json).await
        }
        Some(("detail", sub)) => {
            let name = sub
                .get_one::<String>("command")
                .cloned()
                .unwrap_or_default();
            call_tool(client, "afd-detail", json!({"command": name}), json).await
        }
        Some(("call", sub)) => call(client, sub, json).await,
        Some((name, sub)) if let Some(code) = declared::run(client, name, sub, json).await => code,
        Some(("batch", sub)) => {
            let path = sub.get_one::<String>("file").cloned().unwrap_or_default();
            let input = read_input(std::path::Path::new(&path))
                .map_err(|e| e.message)
                .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
            match input {
                Ok(input) => call_tool(client, "afd-batch", input, json).await,
                Err(error) => {
                    eprintln!("error: {error}");
                    EXIT_FAILURE
                }
            }
        }
        _ => EXIT_USAGE,
    }
}

async fn list(client: &Client) -> Result<Vec<Tool>, String> {
    client
        .peer()
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list failed: {e}"))
}

async fn tools(client: &Client, json: bool) -> i32 {
    let tools = match list(client).await {
        Ok(tools) => tools,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_FAILURE;
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&tools).unwrap_or_default()
        );
        return EXIT_SUCCESS;
    }
    let rows: Vec<Value> = tools
        .iter()
        .map(|tool| {
            let description = tool.description.as_deref().unwrap_or_default();
            json!({"name": tool.name, "description": afd_runtime::summary(description)})
        })
        .collect();
    print!("{}", render_data(&Value::Array(rows)));
    EXIT_SUCCESS
}

/// `call <tool> ...`: a listed tool with its schema, or else an afd command through
/// afd-detail and afd-call.
async fn call(client: &Client, matches: &ArgMatches, json: bool) -> i32 {
    let name = matches
        .get_one::<String>("tool")
        .cloned()
        .unwrap_or_default();
    let args: Vec<String> = matches
        .get_many::<String>("args")
        .map(|a| a.filter(|arg| *arg != "--json").cloned().collect())
        .unwrap_or_default();
    let tools = match list(client).await {
        Ok(tools) => tools,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_FAILURE;
        }
    };
    let listed = tools.iter().find(|tool| tool.name == name);
    let via_call = listed.is_none() && tools.iter().any(|tool| tool.name == "afd-call");
    let schema = match listed {
        Some(tool) => Value::Object(tool.input_schema.as_ref().clone()),
        None if via_call => match command_schema(client, &name).await {
            Some(schema) => schema,
            None => json!({"type": "object"}),
        },
        None => {
            eprintln!("error: the server has no tool named '{name}'; `tools` lists them");
            return EXIT_FAILURE;
        }
    };
    let flags = Flags::from_schema(&schema, &["json"]);
    let parsed = flags
        .apply(Command::new(name.clone()).no_binary_name(false))
        .try_get_matches_from(std::iter::once(name.clone()).chain(args));
    let parsed = match parsed {
        Ok(parsed) => parsed,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                EXIT_USAGE
            } else {
                EXIT_SUCCESS
            };
        }
    };
    let input = match flags.input(&parsed) {
        Ok(input) => input,
        Err(error) => {
            afd_runtime::cli::print_error(&error);
            return EXIT_FAILURE;
        }
    };
    if via_call {
        call_tool(
            client,
            "afd-call",
            json!({"command": name, "input": input}),
            json,
        )
        .await
    } else {
        call_tool(client, &name, input, json).await
    }
}

/// An afd command's input schema, from afd-detail.
async fn command_schema(client: &Client, name: &str) -> Option<Value> {
    let result = request(client, "afd-detail", json!({"command": name}))
        .await
        .ok()?;
    let data = result.structured_content?;
    let detail = data.get("data")?;
    // One command asked for: an array of one definition.
    let detail = detail.get(0).unwrap_or(detail);
    detail.get("inputSchema").cloned()
}

async fn request(client: &Client, tool: &str, input: Value) -> Result<CallToolResult, String> {
    let arguments: JsonObject = match input {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    };
    // The client's own call runs a 2026 server's input rounds through the terminal.
    client
        .call_tool(CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments))
        .await
        .map_err(|e| {
            if let Some(challenge) = e.auth_challenge()
                && let Some(parsed) = afd_oauth::Challenge::parse(challenge)
                && parsed.is_insufficient_scope()
            {
                client.service().refused(terminal::Refusal {
                    challenge: Some(challenge.to_owned()),
                    scopes: parsed.scopes(),
                });
            }
            format!("tools/call {tool} failed: {e}")
        })
}

/// Calls `tool` and prints its result; the exit code says whether it succeeded.
async fn call_tool(client: &Client, tool: &str, input: Value, json: bool) -> i32 {
    let result = match request(client, tool, input).await {
        Ok(result) => result,
        Err(error) => {
            eprintln!("error: {error}");
            return EXIT_FAILURE;
        }
    };
    let failed = result.is_error == Some(true);
    let text: String = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect::<Vec<_>>()
        .join("\n");
    let structured = result
        .structured_content
        .clone()
        .or_else(|| serde_json::from_str(&text).ok());
    if let Some(error) = structured
        .as_ref()
        .and_then(|value| value.get("error"))
        .filter(|error| error["code"] == codes::INSUFFICIENT_SCOPE)
    {
        let scopes = error["details"]["requiredScopes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|scope| scope.as_str().map(str::to_owned))
            .collect();
        client.service().refused(terminal::Refusal {
            challenge: None,
            scopes,
        });
    }
    match (json, structured) {
        (true, Some(value)) => println!(
            "{}",
            serde_json::to_string_pretty(&value).unwrap_or_default()
        ),
        (false, Some(value)) if value.get("success").is_some() => {
            // An afd CommandResult: its data, or its error.
            match value.get("error").filter(|e| !e.is_null()) {
                Some(error) => {
                    eprintln!(
                        "error[{}]: {}",
                        error["code"].as_str().unwrap_or_default(),
                        error["message"].as_str().unwrap_or_default()
                    );
                    if let Some(suggestion) = error["suggestion"].as_str() {
                        eprintln!("  suggestion: {suggestion}");
                    }
                }
                None => print!("{}", render_data(value.get("data").unwrap_or(&value))),
            }
        }
        (false, Some(value)) => print!("{}", render_data(&value)),
        (_, None) if failed => eprintln!("{text}"),
        (_, None) => println!("{text}"),
    }
    let success = !failed
        && result
            .structured_content
            .as_ref()
            .and_then(|value| value.get("success"))
            .and_then(Value::as_bool)
            .unwrap_or(true);
    if success { EXIT_SUCCESS } else { EXIT_FAILURE }
}
