//! The services the shared-store tests need (Redis, PostgreSQL, nginx): where to find them,
//! a private redis-server each test can stop, and free loopback ports. Without a service a
//! test says so and returns on a developer machine, and fails under `CI` (whose `.ci/run`
//! starts them).

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Says why a test cannot run: a failure under `CI`, a note elsewhere. Returns `None` so a
/// test can write `let Some(url) = ... else { return }`.
pub fn missing<T>(why: &str) -> Option<T> {
    assert!(
        std::env::var_os("CI").is_none(),
        "{why}: this test needs it under CI (.ci/run starts it)"
    );
    eprintln!("{why}: the test did not run");
    None
}

/// The shared Redis of the test run (`AFD_TEST_REDIS_URL`).
pub fn redis_url() -> Option<String> {
    match std::env::var("AFD_TEST_REDIS_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => missing("AFD_TEST_REDIS_URL is not set"),
    }
}

/// The shared PostgreSQL of the test run (`AFD_TEST_POSTGRES_URL`).
pub fn postgres_url() -> Option<String> {
    match std::env::var("AFD_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => missing("AFD_TEST_POSTGRES_URL is not set"),
    }
}

/// The certificates of the TLS tests (`AFD_TEST_TLS_DIR`, made by `.ci/run`): a CA, a
/// server certificate it signed for the name `localhost` only, its key, and another CA.
pub struct TlsFiles {
    /// The CA that signed the server's certificate (PEM).
    pub ca: PathBuf,
    /// A CA that signed nothing the tests serve (PEM).
    pub other_ca: PathBuf,
    /// The server's certificate (PEM), for `localhost`.
    pub server_cert: PathBuf,
    /// The server's private key (PEM).
    pub server_key: PathBuf,
}

/// The TLS tests' certificates, if `AFD_TEST_TLS_DIR` names a directory holding them.
pub fn tls_files() -> Option<TlsFiles> {
    let Some(dir) = std::env::var_os("AFD_TEST_TLS_DIR").map(PathBuf::from) else {
        return missing("AFD_TEST_TLS_DIR is not set");
    };
    let files = TlsFiles {
        ca: dir.join("ca.pem"),
        other_ca: dir.join("other-ca.pem"),
        server_cert: dir.join("server.pem"),
        server_key: dir.join("server.key"),
    };
    for file in [
        &files.ca,
        &files.other_ca,
        &files.server_cert,
        &files.server_key,
    ] {
        if !file.exists() {
            return missing(&format!("{} is missing", file.display()));
        }
    }
    Some(files)
}

/// A program on `PATH` (or named by the environment variable `var`), if it runs.
pub fn program(var: &str, name: &str) -> Option<PathBuf> {
    let path = std::env::var_os(var).map_or_else(|| PathBuf::from(name), PathBuf::from);
    let runs = Command::new(&path)
        .arg("-v")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if runs {
        Some(path)
    } else {
        missing(&format!("{name} is not installed (or {var} does not run)"))
    }
}

/// A loopback port nobody listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free loopback port")
}

/// A fresh directory under the system's temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("afd-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// Waits until something accepts connections on `port`, for at most `limit`.
pub fn wait_for_port(port: u16, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    false
}

/// A child process the test started, killed when dropped.
pub struct Running(pub Child);

impl Running {
    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Waits for the exit, at most `limit`; `None` if it still runs.
    pub fn exit_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let start = Instant::now();
        while start.elapsed() < limit {
            if let Some(status) = self.0.try_wait().expect("the child can be waited for") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A redis-server of this test alone, on its own port, its data in an append-only file
/// (fsynced on every write) so that a restart finds every session again.
pub struct PrivateRedis {
    binary: PathBuf,
    dir: PathBuf,
    port: u16,
    tls: Option<(PathBuf, PathBuf)>,
    child: Option<Child>,
}

impl PrivateRedis {
    /// Starts one; `None` (after [`missing`]) without redis-server.
    pub fn start(name: &str) -> Option<Self> {
        let binary = program("AFD_TEST_REDIS_SERVER", "redis-server")?;
        let mut redis = PrivateRedis {
            binary,
            dir: temp_dir(name),
            port: free_port(),
            tls: None,
            child: None,
        };
        redis.restart();
        Some(redis)
    }

    /// Starts one that speaks TLS only, serving `tls`'s server certificate.
    pub fn start_tls(name: &str, tls: &TlsFiles) -> Option<Self> {
        let binary = program("AFD_TEST_REDIS_SERVER", "redis-server")?;
        let mut redis = PrivateRedis {
            binary,
            dir: temp_dir(name),
            port: free_port(),
            tls: Some((tls.server_cert.clone(), tls.server_key.clone())),
            child: None,
        };
        redis.restart();
        Some(redis)
    }

    /// Its URL (`rediss://localhost:PORT` when it speaks TLS).
    pub fn url(&self) -> String {
        match self.tls {
            Some(_) => format!("rediss://localhost:{}", self.port),
            None => format!("redis://127.0.0.1:{}", self.port),
        }
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Starts it again (after [`stop`](PrivateRedis::stop)) on the same port and data.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "redis-server is already running");
        let mut command = Command::new(&self.binary);
        match &self.tls {
            Some((cert, key)) => command
                .args(["--port", "0", "--tls-port", &self.port.to_string()])
                .args(["--tls-cert-file", &path(cert), "--tls-key-file", &path(key)])
                .args(["--tls-auth-clients", "no"]),
            None => command.args(["--port", &self.port.to_string()]),
        };
        let child = command
            .args(["--bind", "127.0.0.1"])
            .args(["--dir", &path(&self.dir), "--save", ""])
            .args(["--appendonly", "yes", "--appendfsync", "always"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        assert!(
            wait_for_port(self.port, Duration::from_secs(20)),
            "redis-server did not listen on port {}",
            self.port
        );
    }

    /// Stops it at once (SIGKILL: what every write fsynced survives).
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for PrivateRedis {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn path(dir: &Path) -> String {
    dir.to_string_lossy().into_owned()
}
