//! TLS for the shared stores: what a connection is asked to check (libpq's `sslmode`
//! levels, the roots it trusts), and with the features `redis-tls` / `postgres-tls` the
//! rustls side: the provider, the roots read from a PEM file or the system, and the client
//! configuration for each level.

#[cfg(feature = "postgres-tls")]
use std::sync::Arc;

#[cfg(feature = "postgres-tls")]
use rustls::client::WebPkiServerVerifier;
#[cfg(feature = "postgres-tls")]
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
#[cfg(feature = "postgres-tls")]
use rustls::crypto::{CryptoProvider, verify_tls12_signature, verify_tls13_signature};
#[cfg(any(feature = "redis-tls", feature = "postgres-tls"))]
use rustls::pki_types::CertificateDer;
#[cfg(any(feature = "redis-tls", feature = "postgres-tls"))]
use rustls::pki_types::pem::PemObject;
#[cfg(feature = "postgres-tls")]
use rustls::pki_types::{ServerName, UnixTime};
#[cfg(feature = "postgres-tls")]
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};

/// The provider every connection of this crate uses (ring), whatever the process default.
#[cfg(feature = "postgres-tls")]
fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Makes ring the process's default provider if none is installed: the Redis client builds
/// its configurations with the process default. An application that installed another
/// keeps it.
#[cfg(feature = "redis-tls")]
pub(crate) fn install_default_provider() {
    // Err means a provider is installed already, which is what is needed.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// The certificates in the PEM file at `path` (at least one), as PEM text again.
#[cfg(feature = "redis-tls")]
pub(crate) fn read_ca_file(path: &str) -> Result<Vec<u8>, String> {
    let pem =
        std::fs::read(path).map_err(|error| format!("cannot read the CA file {path}: {error}"))?;
    certificates(&pem, path)?;
    Ok(pem)
}

#[cfg(any(feature = "redis-tls", feature = "postgres-tls"))]
fn certificates(pem: &[u8], path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certificates = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| format!("the CA file {path} is not PEM: {error}"))?;
    if certificates.is_empty() {
        return Err(format!("the CA file {path} holds no certificate"));
    }
    Ok(certificates)
}

/// Where the certificates that may sign a server's come from.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Roots {
    /// The system's store (`/etc/ssl/certs` and the like).
    System,
    /// The certificates in a PEM file.
    File(String),
}

#[cfg(feature = "postgres-tls")]
impl Roots {
    fn load(&self) -> Result<RootCertStore, String> {
        let mut store = RootCertStore::empty();
        match self {
            Roots::System => {
                let found = rustls_native_certs::load_native_certs();
                let (added, _) = store.add_parsable_certificates(found.certs);
                if added == 0 {
                    return Err(format!(
                        "the system has no CA certificates to verify the server with ({} errors reading them); name a CA file",
                        found.errors.len()
                    ));
                }
            }
            Roots::File(path) => {
                let pem = std::fs::read(path)
                    .map_err(|error| format!("cannot read the CA file {path}: {error}"))?;
                for certificate in certificates(&pem, path)? {
                    store
                        .add(certificate)
                        .map_err(|error| format!("the CA file {path}: {error}"))?;
                }
            }
        }
        Ok(store)
    }
}

/// How much of the server's certificate a connection checks: libpq's `sslmode` levels.
#[cfg(feature = "postgres")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verify {
    /// Encrypted, certificate not checked (libpq's `require` without a root file).
    Nothing,
    /// Signed by one of the roots; the name in it is not compared (`verify-ca`).
    Chain(Roots),
    /// Signed by one of the roots and naming the host connected to (`verify-full`).
    Full(Roots),
}

/// A client configuration that checks what `verify` says.
#[cfg(feature = "postgres-tls")]
pub(crate) fn client_config(verify: &Verify) -> Result<ClientConfig, String> {
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|error| error.to_string())?;
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::Full(roots) => {
            return Ok(builder
                .with_root_certificates(roots.load()?)
                .with_no_client_auth());
        }
        Verify::Chain(roots) => Arc::new(ChainOnly(
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots.load()?), provider)
                .build()
                .map_err(|error| error.to_string())?,
        )),
        Verify::Nothing => Arc::new(Unchecked(provider)),
    };
    Ok(builder
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth())
}

/// `verify-ca`: the chain is checked, the name is not.
#[cfg(feature = "postgres-tls")]
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

#[cfg(feature = "postgres-tls")]
impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// libpq's `require`: any certificate; the handshake's signatures are still checked, so the
/// connection is encrypted to whoever holds the certificate's key.
#[cfg(feature = "postgres-tls")]
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

#[cfg(feature = "postgres-tls")]
impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
