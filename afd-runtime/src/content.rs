//! Content blocks: what a command result or a prompt carries besides JSON data (text, an
//! image, audio, an embedded resource, a link to a resource), independent of the surface.
//!
//! The serialised form is MCP's own (`{"type": "image", "data": ..., "mimeType": ...}`), so
//! the MCP surface sends these as they are, and the command line and the in-process client
//! read the same values.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};

/// One block of content.
///
/// Binary payloads (`data` of images and audio, `blob` of resources) are base64, as MCP
/// carries them; the constructors that take bytes encode them.
///
/// ```
/// use afd_runtime::Content;
///
/// let blocks = vec![
///     Content::text("Here is the chart:"),
///     Content::image(b"\x89PNG\r\n\x1a\n", "image/png"),
///     Content::resource_link("file:///reports/q3.csv", "q3.csv"),
/// ];
/// assert_eq!(serde_json::to_value(&blocks[0]).unwrap()["type"], "text");
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image's bytes, base64.
        data: String,
        /// Its media type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// The audio's bytes, base64.
        data: String,
        /// Its media type, e.g. `audio/wav`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
    /// A resource's contents, embedded.
    Resource {
        /// The contents.
        resource: ResourceContents,
    },
    /// A link to a resource the client may read (or not).
    ResourceLink(ResourceLink),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block from its bytes (encoded here).
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An image block from base64 already encoded.
    pub fn image_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from its bytes (encoded here).
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: STANDARD.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from base64 already encoded.
    pub fn audio_base64(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Audio {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded resource.
    pub fn resource(contents: ResourceContents) -> Self {
        Content::Resource { resource: contents }
    }

    /// A link to the resource at `uri`, called `name`.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Content::ResourceLink(ResourceLink::new(uri, name))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            _ => None,
        }
    }
}

impl From<String> for Content {
    fn from(text: String) -> Self {
        Content::text(text)
    }
}

impl From<&str> for Content {
    fn from(text: &str) -> Self {
        Content::text(text)
    }
}

impl From<ResourceContents> for Content {
    fn from(contents: ResourceContents) -> Self {
        Content::resource(contents)
    }
}

impl From<ResourceLink> for Content {
    fn from(link: ResourceLink) -> Self {
        Content::ResourceLink(link)
    }
}

/// The contents of a resource: text or bytes, under its URI. What `resources/read` returns
/// and what an embedded resource holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
#[non_exhaustive]
pub enum ResourceContents {
    /// Text contents.
    Text {
        /// The resource's URI.
        uri: String,
        /// Its media type, when known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
    },
    /// Binary contents.
    Blob {
        /// The resource's URI.
        uri: String,
        /// Its media type, when known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The bytes, base64.
        blob: String,
    },
}

impl ResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn text(uri: impl Into<String>, text: impl Into<String>) -> Self {
        ResourceContents::Text {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
        }
    }

    /// Binary contents of the resource at `uri`, from its bytes (encoded here).
    pub fn blob(uri: impl Into<String>, bytes: impl AsRef<[u8]>) -> Self {
        ResourceContents::Blob {
            uri: uri.into(),
            mime_type: None,
            blob: STANDARD.encode(bytes),
        }
    }

    /// The same contents with a media type.
    #[must_use]
    pub fn with_mime_type(mut self, mime: impl Into<String>) -> Self {
        match &mut self {
            ResourceContents::Text { mime_type, .. } | ResourceContents::Blob { mime_type, .. } => {
                *mime_type = Some(mime.into());
            }
        }
        self
    }

    /// The resource's URI.
    pub fn uri(&self) -> &str {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

/// A link to a resource: its URI and name, and what a client may show about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ResourceLink {
    /// The resource's URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
}

impl ResourceLink {
    /// A link to `uri`, called `name`.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
        }
    }

    /// The same link with a description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The same link with a media type.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn blocks_serialise_as_mcp_content() {
        assert_eq!(
            serde_json::to_value(Content::image([1u8, 2, 3], "image/png")).unwrap(),
            json!({"type": "image", "data": "AQID", "mimeType": "image/png"})
        );
        assert_eq!(
            serde_json::to_value(Content::audio_base64("AQID", "audio/wav")).unwrap(),
            json!({"type": "audio", "data": "AQID", "mimeType": "audio/wav"})
        );
        assert_eq!(
            serde_json::to_value(Content::resource(
                ResourceContents::text("test://a", "hi").with_mime_type("text/plain")
            ))
            .unwrap(),
            json!({"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "hi"}})
        );
        assert_eq!(
            serde_json::to_value(Content::resource_link("test://b", "b")).unwrap(),
            json!({"type": "resource_link", "uri": "test://b", "name": "b"})
        );
    }

    #[test]
    fn blocks_read_back_from_mcp_content() {
        let blob: Content = serde_json::from_value(
            json!({"type": "resource", "resource": {"uri": "test://c", "blob": "AQID"}}),
        )
        .unwrap();
        assert_eq!(
            blob,
            Content::resource(ResourceContents::blob("test://c", [1u8, 2, 3]))
        );
        let text: Content = serde_json::from_value(json!({"type": "text", "text": "x"})).unwrap();
        assert_eq!(text.as_text(), Some("x"));
    }
}
