//! How `afd` authorizes itself to a `--url` server: a token given on the command line or
//! in `AFD_TOKEN`, or a person's sign-in (`afd --url URL login`) kept per server in the
//! user's configuration directory and refreshed there; `logout` forgets it. A sign-in
//! opens the browser (the `BROWSER` command, else the desktop's opener; the URL is always
//! printed too) and takes the redirect on a loopback port.

use std::time::Duration;

use afd_oauth::{FileStore, Loopback, OAuthError, Secret, Session, SignIn};
use clap::ArgMatches;

/// The environment variable holding the bearer token for `--url` (when `--token` is not
/// given).
pub(crate) const TOKEN_ENV: &str = "AFD_TOKEN";

/// The id of a client registered beforehand at the authorization server (when `login`
/// has no `--client-id`; a step-up's sign-in uses it too).
const CLIENT_ID_ENV: &str = "AFD_CLIENT_ID";

/// That client's secret, when it is a confidential one (refreshes need it: the kept
/// sign-in never holds it).
const CLIENT_SECRET_ENV: &str = "AFD_CLIENT_SECRET";

fn env(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .filter(|value| !value.trim().is_empty())
}

fn client_secret() -> Option<Secret> {
    env(CLIENT_SECRET_ENV).map(Secret::new)
}

/// How long a sign-in waits for the browser.
const SIGN_IN_WAIT: Duration = Duration::from_secs(300);

/// What `afd` sends to a `--url` server.
pub(crate) enum Credential {
    None,
    /// `--token` or `AFD_TOKEN`.
    Token(String),
    /// A kept sign-in (boxed: rmcp's manager is large).
    Session(Box<Session>),
}

/// The store of `url`'s sign-in.
fn store(url: &str) -> Result<FileStore, String> {
    let dir = FileStore::default_dir()
        .ok_or("no directory for credentials: set HOME, XDG_CONFIG_HOME or AFD_CREDENTIALS_DIR")?;
    Ok(FileStore::new(dir, url))
}

/// The credential for `url`: the token given, else the sign-in kept for it, else none.
pub(crate) async fn credential(matches: &ArgMatches, url: &str) -> Result<Credential, String> {
    let token = matches
        .get_one::<String>("token")
        .cloned()
        .or_else(|| std::env::var(TOKEN_ENV).ok())
        .filter(|token| !token.trim().is_empty());
    if let Some(token) = token {
        return Ok(Credential::Token(token.trim().to_owned()));
    }
    let Ok(store) = store(url) else {
        return Ok(Credential::None);
    };
    if !store.exists() {
        return Ok(Credential::None);
    }
    match Session::resume_with_secret(url, store, client_secret()).await {
        Ok(Some(session)) => Ok(Credential::Session(Box::new(session))),
        Ok(None) => Ok(Credential::None),
        Err(error @ (OAuthError::SignInRequired(_) | OAuthError::Store(_))) => Err(format!(
            "the sign-in kept for {url} cannot be used: {error}; `afd --url {url} logout` forgets it, `login` makes a new one"
        )),
        Err(error) => Err(format!(
            "the sign-in kept for {url} cannot be used now: {error}"
        )),
    }
}

/// Signs in to `url`: `challenge` is the server's `WWW-Authenticate` (discovery starts from
/// it, and its scopes are asked for), `scopes` the scopes to ask for besides.
pub(crate) async fn sign_in(
    url: &str,
    challenge: Option<&str>,
    scopes: Vec<String>,
    login: Option<&ArgMatches>,
) -> Result<Session, String> {
    let loopback = Loopback::bind(0).await.map_err(|e| e.to_string())?;
    let mut sign_in = SignIn::new(url, loopback.redirect_uri()).scopes(scopes);
    if let Some(challenge) = challenge {
        sign_in = sign_in.challenge(challenge);
    }
    let client_id = login
        .and_then(|login| login.get_one::<String>("client-id").cloned())
        .or_else(|| env(CLIENT_ID_ENV));
    if let Some(id) = client_id {
        sign_in = sign_in.preregistered(id, client_secret());
    }
    let pending = sign_in
        .start(store(url)?)
        .await
        .map_err(|e| format!("cannot sign in to {url}: {e}"))?;
    eprintln!("To sign in to {url}, open:\n\n  {}\n", pending.url());
    let browse = login.is_none_or(|login| !login.get_flag("no-browser"));
    if browse && let Err(why) = open_browser(pending.url()) {
        eprintln!("(no browser opened: {why})");
    }
    eprintln!("Waiting for the browser to come back...");
    let redirect = loopback
        .redirect(SIGN_IN_WAIT)
        .await
        .map_err(|e| format!("cannot sign in to {url}: {e}"))?;
    pending
        .finish(&redirect)
        .await
        .map_err(|e| format!("cannot sign in to {url}: {e}"))
}

/// Opens `url` with the `BROWSER` command, else the desktop's opener.
fn open_browser(url: &str) -> Result<(), String> {
    let command = std::env::var("BROWSER")
        .ok()
        .filter(|b| !b.trim().is_empty());
    let (program, mut args) = match &command {
        Some(line) => {
            let words = shlex::split(line).ok_or("BROWSER has an unclosed quote")?;
            let (program, args) = words.split_first().ok_or("BROWSER is empty")?;
            (program.clone(), args.to_vec())
        }
        None if cfg!(target_os = "macos") => ("open".to_owned(), Vec::new()),
        None if cfg!(windows) => ("explorer".to_owned(), Vec::new()),
        None => ("xdg-open".to_owned(), Vec::new()),
    };
    args.push(url.to_owned());
    std::process::Command::new(&program)
        .args(&args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(drop)
        .map_err(|e| format!("cannot run {program}: {e}"))
}

/// `afd --url URL login`: a sign-in kept for the server, from its challenge.
pub(crate) async fn login(url: &str, challenge: Option<String>, login: &ArgMatches) -> i32 {
    let scopes: Vec<String> = login
        .get_many::<String>("scope")
        .map(|scopes| scopes.cloned().collect())
        .unwrap_or_default();
    match sign_in(url, challenge.as_deref(), scopes, Some(login)).await {
        Ok(session) => {
            let scopes = session.scopes().await;
            match scopes.is_empty() {
                true => eprintln!("Signed in to {url}."),
                false => eprintln!("Signed in to {url} (scopes: {}).", scopes.join(" ")),
            }
            afd_runtime::cli::EXIT_SUCCESS
        }
        Err(error) => {
            eprintln!("error: {error}");
            afd_runtime::cli::EXIT_FAILURE
        }
    }
}

/// `afd --url URL logout`: the kept sign-in forgotten.
pub(crate) async fn logout(url: &str) -> i32 {
    use rmcp::transport::auth::CredentialStore as _;
    let store = match store(url) {
        Ok(store) => store,
        Err(error) => {
            eprintln!("error: {error}");
            return afd_runtime::cli::EXIT_FAILURE;
        }
    };
    let kept = store.exists();
    match store.clear().await {
        Ok(()) if kept => eprintln!("Signed out of {url}."),
        Ok(()) => eprintln!("No sign-in was kept for {url}."),
        Err(error) => {
            eprintln!("error: {error}");
            return afd_runtime::cli::EXIT_FAILURE;
        }
    }
    afd_runtime::cli::EXIT_SUCCESS
}
