//! Two replicas of the shop server behind nginx (round robin, loopback), sharing sessions
//! in Redis (`--sessions redis://...`), usage statistics in PostgreSQL (`--usage-store
//! postgres://...`) and the shop's SQLite file, driven by the official MCP Python client
//! (`tests/interop/replicas.py`), one phase at a time:
//!
//! 1. `bind`: a context entered through one replica binds calls on the other; read-only
//!    refusals hold on both (nginx's access log shows both answered);
//! 2. `usage`: traffic on each replica; both suggest the next command from both;
//! 3. `legacy`: a 2025-11-25 client through the sticky (`ip_hash`) front keeps its HTTP
//!    session; `legacy-unsticky`: through round robin it loses it, which is why the
//!    README asks for sticky routing for that protocol;
//! 4. `survive`: one replica killed, the session goes on through the other, nothing lost;
//! 5. `down` / `recover`: Redis stopped, calls fail closed with a retryable error; Redis
//!    restarted, they succeed again in the same session.
//!
//! Needs `AFD_INTEROP_PYTHON`, `AFD_TEST_POSTGRES_URL`, `nginx` and `redis-server` (each
//! can be named by `AFD_TEST_NGINX`, `AFD_TEST_REDIS_SERVER`) and the shop example built;
//! `.ci/run` provides them. The test starts its own redis-server (it stops it), its own
//! nginx and its own database. By hand:
//!
//! ```sh
//! cargo build --example shop
//! AFD_INTEROP_PYTHON=.venv/bin/python AFD_TEST_POSTGRES_URL=postgres://afd:afd@127.0.0.1/afd \
//!     cargo test -p afd-tests --test replicas
//! ```

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use afd_tests::services::{
    PrivateRedis, Running, free_port, postgres_url, program, temp_dir, wait_for_port,
};

fn shop_binary() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    let binary = target.join("debug/examples/shop");
    assert!(
        binary.exists(),
        "{} is missing: run `cargo build --example shop` first",
        binary.display()
    );
    binary
}

fn replica(binary: &Path, port: u16, db: &Path, redis: &str, postgres: &str) -> Running {
    let child = Command::new(binary)
        .args(["serve", "--http", &format!("127.0.0.1:{port}")])
        .arg("--db")
        .arg(db)
        .args(["--sessions", redis, "--usage-store", postgres])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the shop starts");
    let running = Running(child);
    assert!(
        wait_for_port(port, Duration::from_secs(60)),
        "the shop did not listen on {port}"
    );
    running
}

/// The nginx configuration the README shows: round robin on `port`, and sticky routing by
/// client address (`ip_hash`) on `sticky` for clients of the 2025-11-25 protocol.
fn nginx_config(dir: &Path, port: u16, sticky: u16, replicas: [u16; 2]) -> String {
    let dir = dir.display();
    let [a, b] = replicas;
    format!(
        r#"daemon off;
worker_processes 1;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 256; }}
http {{
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    log_format upstream '$server_port $upstream_addr $status';
    access_log {dir}/access.log upstream;

    # 2026-07-28 clients: any replica answers any request.
    upstream afd {{
        server 127.0.0.1:{a} max_fails=1 fail_timeout=30s;
        server 127.0.0.1:{b} max_fails=1 fail_timeout=30s;
    }}
    # 2025-11-25 clients: the HTTP session lives on one replica; keep each client there.
    upstream afd_sticky {{
        ip_hash;
        server 127.0.0.1:{a};
        server 127.0.0.1:{b};
    }}
    server {{
        listen 127.0.0.1:{port};
        location /mcp {{
            proxy_pass http://afd;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
    server {{
        listen 127.0.0.1:{sticky};
        location /mcp {{
            proxy_pass http://afd_sticky;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $http_host;
            proxy_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
}}
"#
    )
}

/// Runs one phase of the Python driver; panics with its output when a check failed.
fn phase(python: &str, name: &str, state: &Path, urls: &[String]) {
    eprintln!("== {name}");
    let args = [OsStr::new(name), state.as_os_str()]
        .into_iter()
        .chain(urls.iter().map(OsStr::new));
    afd_tests::python::run_checks(python, "replicas.py", args);
}

/// A database of this run alone, dropped at the end.
struct Database {
    admin: String,
    name: String,
    url: String,
}

impl Database {
    fn create(admin: &str) -> Database {
        let name = format!("afd_replicas_{}", std::process::id());
        let url = match admin.rsplit_once('/') {
            Some((server, _)) => format!("{server}/{name}"),
            None => panic!("AFD_TEST_POSTGRES_URL names no database: {admin}"),
        };
        let database = Database {
            admin: admin.to_owned(),
            name,
            url,
        };
        database.run(&format!("DROP DATABASE IF EXISTS {}", database.name));
        database.run(&format!("CREATE DATABASE {}", database.name));
        database
    }

    fn run(&self, statement: &str) {
        let admin = self.admin.clone();
        let statement = statement.to_owned();
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(async move {
                let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
                    .await
                    .expect("PostgreSQL reachable at AFD_TEST_POSTGRES_URL");
                tokio::spawn(connection);
                client.batch_execute(&statement).await.expect(&statement);
            });
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.run(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

#[test]
fn two_replicas_behind_nginx_share_sessions_and_usage() {
    let Some(python) = afd_tests::python::client() else {
        return;
    };
    let Some(postgres) = postgres_url() else {
        return;
    };
    let Some(nginx) = program("AFD_TEST_NGINX", "nginx") else {
        return;
    };
    let Some(mut redis) = PrivateRedis::start("replicas-redis") else {
        return;
    };
    let binary = shop_binary();
    let database = Database::create(&postgres);
    let dir = temp_dir("replicas");
    let db = dir.join("shop.db");
    let ports = [free_port(), free_port()];
    let (front, sticky) = (free_port(), free_port());
    let a = replica(&binary, ports[0], &db, &redis.url(), &database.url);
    let _b = replica(&binary, ports[1], &db, &redis.url(), &database.url);
    let config = dir.join("nginx.conf");
    std::fs::write(&config, nginx_config(&dir, front, sticky, ports)).unwrap();
    let _nginx = Running(
        Command::new(&nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-e")
            .arg(dir.join("error.log"))
            .arg("-c")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("nginx starts"),
    );
    assert!(
        wait_for_port(front, Duration::from_secs(20)),
        "nginx did not listen"
    );
    assert!(
        wait_for_port(sticky, Duration::from_secs(20)),
        "nginx did not listen"
    );

    let state = dir.join("state.json");
    let through_nginx = [format!("http://127.0.0.1:{front}/mcp")];
    let direct = ports.map(|port| format!("http://127.0.0.1:{port}/mcp"));
    phase(&python, "bind", &state, &through_nginx);
    phase(&python, "usage", &state, &direct);
    phase(
        &python,
        "legacy",
        &state,
        &[format!("http://127.0.0.1:{sticky}/mcp")],
    );
    phase(&python, "legacy-unsticky", &state, &through_nginx);
    let log = std::fs::read_to_string(dir.join("access.log")).unwrap();
    for port in ports {
        let answered = log
            .lines()
            .filter(|line| line.starts_with(&format!("{front} ")))
            .any(|line| line.contains(&format!("127.0.0.1:{port} 200")));
        assert!(
            answered,
            "replica {port} answered nothing through nginx:\n{log}"
        );
    }

    drop(a);
    phase(&python, "survive", &state, &through_nginx);
    redis.stop();
    phase(&python, "down", &state, &through_nginx);
    redis.restart();
    phase(&python, "recover", &state, &through_nginx);
    let _ = std::fs::remove_dir_all(&dir);
}
