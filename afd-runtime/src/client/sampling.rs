//! Sampling: a request for the client's model to complete a conversation, and its answer.

use serde::{Deserialize, Serialize};

use crate::content::Content;

/// Who said a message of a sampling conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user (the server, asking).
    User,
    /// The model.
    Assistant,
}

/// One message of a sampling conversation: text, an image or audio.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who said it.
    pub role: Role,
    /// What was said.
    pub content: Content,
}

impl SamplingMessage {
    /// A message of the user.
    pub fn user(content: impl Into<Content>) -> Self {
        SamplingMessage {
            role: Role::User,
            content: content.into(),
        }
    }

    /// A message of the model.
    pub fn assistant(content: impl Into<Content>) -> Self {
        SamplingMessage {
            role: Role::Assistant,
            content: content.into(),
        }
    }
}

/// What to ask the client's model: the conversation so far and how to answer. Serialises
/// as MCP's `sampling/createMessage` parameters.
///
/// ```
/// use afd_runtime::client::SamplingRequest;
///
/// let request = SamplingRequest::new("Summarise: the order shipped late.", 200)
///     .with_system_prompt("Answer in one sentence.");
/// assert_eq!(request.max_tokens, 200);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The conversation, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// The most tokens the answer may have.
    pub max_tokens: u32,
    /// The sampling temperature, when it matters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Sequences that end the answer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop_sequences: Vec<String>,
}

impl SamplingRequest {
    /// One user message of text, answered in at most `max_tokens` tokens.
    pub fn new(prompt: impl Into<String>, max_tokens: u32) -> Self {
        SamplingRequest {
            messages: vec![SamplingMessage::user(Content::text(prompt))],
            system_prompt: None,
            max_tokens,
            temperature: None,
            stop_sequences: Vec::new(),
        }
    }

    /// The same request with a system prompt.
    #[must_use]
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The same request with one more message.
    #[must_use]
    pub fn with_message(mut self, message: SamplingMessage) -> Self {
        self.messages.push(message);
        self
    }

    /// The same request with a temperature.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f64) -> Self {
        self.temperature = Some(temperature);
        self
    }
}

/// The client model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct SamplingResponse {
    /// Who answered (the model).
    pub role: Role,
    /// The answer.
    pub content: Content,
    /// Which model answered, as the client names it.
    pub model: String,
    /// Why the answer ended (`endTurn`, `stopSequence`, `maxTokens`, ...), when said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
}

impl SamplingResponse {
    /// An answer of `model`.
    pub fn new(content: impl Into<Content>, model: impl Into<String>) -> Self {
        SamplingResponse {
            role: Role::Assistant,
            content: content.into(),
            model: model.into(),
            stop_reason: None,
        }
    }

    /// The answer's text, when it is text.
    pub fn text(&self) -> Option<&str> {
        self.content.as_text()
    }
}
