//! Where a person's tokens are kept between runs: [`FileStore`], one file per server in
//! the user's configuration directory, readable by its owner only.

use std::path::{Path, PathBuf};

use rmcp::transport::auth::{AuthError, CredentialStore, StoredCredentials};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file's contents: the server it is for, and rmcp's stored credentials.
#[derive(Serialize, Deserialize)]
struct Stored {
    server: String,
    credentials: StoredCredentials,
}

/// The tokens of one server in a file of their own (`<dir>/<hash of the URL>.json`).
///
/// The directory is created with mode 0700 and the file with 0600, written whole to a new
/// file of an unguessable name and then renamed into place, so a reader never sees half a
/// file. A file that others can read is refused rather than used (its tokens may have
/// leaked), and so is a directory others can reach, for writing.
#[derive(Debug, Clone)]
pub struct FileStore {
    server: String,
    path: PathBuf,
}

impl FileStore {
    /// The store for the server at `server_url`, in `dir`.
    pub fn new(dir: impl Into<PathBuf>, server_url: &str) -> Self {
        let digest = Sha256::digest(server_url.as_bytes());
        let name: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        Self {
            server: server_url.to_owned(),
            path: dir.into().join(format!("{name}.json")),
        }
    }

    /// The default directory: `AFD_CREDENTIALS_DIR`, else `$XDG_CONFIG_HOME/afd/credentials`,
    /// else `$HOME/.config/afd/credentials`.
    pub fn default_dir() -> Option<PathBuf> {
        if let Some(dir) = std::env::var_os("AFD_CREDENTIALS_DIR") {
            return Some(PathBuf::from(dir));
        }
        let config = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .filter(|dir| dir.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
        Some(config.join("afd").join("credentials"))
    }

    /// The file the tokens are kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a sign-in is kept for the server.
    pub fn exists(&self) -> bool {
        self.path.is_file()
    }

    fn read(&self) -> Result<Option<StoredCredentials>, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(format!("cannot read {}: {error}", self.path.display())),
        };
        owner_only(&self.path)?;
        let stored: Stored = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a credentials file: {e}", self.path.display()))?;
        // Two URLs whose hashes agree in 128 bits do not happen; a file moved by hand might.
        Ok((stored.server == self.server).then_some(stored.credentials))
    }

    fn write(&self, credentials: StoredCredentials) -> Result<(), String> {
        let dir = self.path.parent().unwrap_or(Path::new("."));
        create_private_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        owner_only(dir)?;
        let text = serde_json::to_vec(&Stored {
            server: self.server.clone(),
            credentials,
        })
        .map_err(|e| e.to_string())?;
        // An unguessable name, created anew: never an existing file or a link planted there.
        let nonce = crate::pkce::new_state().map_err(|e| e.to_string())?;
        let temporary = self.path.with_extension(format!("tmp-{nonce}"));
        let written =
            write_private(&temporary, &text).and_then(|()| std::fs::rename(&temporary, &self.path));
        if let Err(error) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(format!("cannot write {}: {error}", self.path.display()));
        }
        Ok(())
    }
}

#[cfg(unix)]
fn owner_only(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let mode = std::fs::metadata(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .permissions()
        .mode();
    if mode & 0o077 != 0 {
        return Err(format!(
            "{} can be reached by other users (mode {:o}); it was not used: make it private (chmod go-rwx) or remove it and sign in again",
            path.display(),
            mode & 0o777
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn owner_only(_path: &Path) -> Result<(), String> {
    Ok(())
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(AuthError::CredentialStoreError)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(credentials)
            .map_err(AuthError::CredentialStoreError)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        match std::fs::remove_file(&self.path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                Err(AuthError::CredentialStoreError(format!(
                    "cannot remove {}: {error}",
                    self.path.display()
                )))
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials() -> StoredCredentials {
        StoredCredentials::new("client".into(), None, vec!["read".into()], Some(1))
    }

    #[tokio::test]
    async fn tokens_are_kept_per_server_and_readable_by_the_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("credentials");
        let a = FileStore::new(&home, "https://a.example/mcp");
        let b = FileStore::new(&home, "https://b.example/mcp");
        assert!(a.load().await.unwrap().is_none());
        a.save(credentials()).await.unwrap();
        assert_eq!(a.load().await.unwrap().unwrap().client_id, "client");
        assert!(b.load().await.unwrap().is_none(), "another server's file");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(a.path()), 0o600);
            assert_eq!(mode(&home), 0o700);
            std::fs::set_permissions(a.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
            let refused = a.load().await.unwrap_err().to_string();
            assert!(refused.contains("other users"), "{refused}");
            std::fs::set_permissions(a.path(), std::fs::Permissions::from_mode(0o600)).unwrap();
            std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
            let refused = b.save(credentials()).await.unwrap_err().to_string();
            assert!(refused.contains("other users"), "{refused}");
            std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
        }
        a.clear().await.unwrap();
        assert!(!a.exists());
        a.clear().await.unwrap();
    }
}
