//! Resources an app declares with `#[resource]`: fixed URIs (`test://static-text`) and URI
//! templates (`test://template/{id}/data`), what reading one runs, completions for a
//! template's variables, and [`Resources`], the set of them a server serves beside the
//! catalog's own `afd://` resources. Also what the attribute expands to (the conversions of
//! a function's parameters and return value) and [`ResourceUpdates`], the subscriptions.
//!
//! ```
//! use afd_runtime::prelude::*;
//! use afd_runtime::resource::Resources;
//!
//! /// The greeting of the day.
//! #[resource(uri = "demo://greeting", mime_type = "text/plain")]
//! fn greeting() -> String {
//!     "Hello".to_owned()
//! }
//!
//! /// One user's profile.
//! #[resource(uri_template = "demo://users/{id}", mime_type = "application/json")]
//! fn user(id: u32) -> String {
//!     format!("{{\"id\": {id}}}")
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let resources = Resources::global();
//! let read = resources.read("demo://users/7", CommandContext::new()).await.unwrap();
//! assert_eq!(serde_json::to_value(&read[0]).unwrap()["text"], "{\"id\": 7}");
//! let missing = resources.read("demo://users/x", CommandContext::new()).await.unwrap_err();
//! assert_eq!(missing.code, codes::VALIDATION_ERROR);
//! # });
//! ```

mod template;
mod updates;

use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use futures_util::FutureExt as _;

pub use template::{TemplateError, UriTemplate};
pub use updates::{ResourceUpdates, SubscriberId};

use crate::command::SourceLocation;
use crate::command_context::CommandContext;
use crate::completion::{self, CompleteFn, Completion, CompletionArgs};
use crate::content::ResourceContents;
use crate::declared::{DeclarationError, at};
use crate::error::{CommandError, codes};

/// What reading a resource returns.
pub type ResourceFuture =
    Pin<Box<dyn Future<Output = Result<Vec<ResourceContents>, CommandError>> + Send>>;

/// The type-erased read of a declared resource.
pub type ReadFn = fn(ResourceRequest) -> ResourceFuture;

/// One read: the URI asked for, the template's variables it matched, and the context.
#[derive(Debug)]
pub struct ResourceRequest {
    uri: String,
    variables: Vec<(String, String)>,
    context: CommandContext,
}

impl ResourceRequest {
    /// A read of `uri` with the variables a template matched (none for a fixed URI).
    pub fn new(uri: String, variables: Vec<(String, String)>, context: CommandContext) -> Self {
        ResourceRequest {
            uri,
            variables,
            context,
        }
    }

    /// The URI read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The value of a template variable.
    pub fn variable(&self, name: &str) -> Option<&str> {
        self.variables
            .iter()
            .find(|(variable, _)| variable == name)
            .map(|(_, value)| value.as_str())
    }

    /// The context the read runs in.
    pub fn context(&self) -> &CommandContext {
        &self.context
    }

    /// The context, taken out of the request.
    pub fn into_context(self) -> CommandContext {
        self.context
    }
}

/// A declared resource or resource template. Built by `#[resource]`; const-constructible.
#[derive(Debug, Clone, Copy)]
pub struct ResourceDef {
    uri: &'static str,
    templated: bool,
    name: &'static str,
    title: Option<&'static str>,
    description: &'static str,
    mime_type: Option<&'static str>,
    read: ReadFn,
    completions: &'static [(&'static str, CompleteFn)],
    location: SourceLocation,
}

impl ResourceDef {
    /// A resource at a fixed URI.
    pub const fn new(
        uri: &'static str,
        name: &'static str,
        description: &'static str,
        read: ReadFn,
        location: SourceLocation,
    ) -> Self {
        ResourceDef {
            uri,
            templated: false,
            name,
            title: None,
            description,
            mime_type: None,
            read,
            completions: &[],
            location,
        }
    }

    /// Resources at the URIs a template matches.
    pub const fn template(
        uri_template: &'static str,
        name: &'static str,
        description: &'static str,
        read: ReadFn,
        location: SourceLocation,
    ) -> Self {
        let mut def = ResourceDef::new(uri_template, name, description, read, location);
        def.templated = true;
        def
    }

    /// With a human-readable title.
    #[must_use]
    pub const fn with_title(mut self, title: &'static str) -> Self {
        self.title = Some(title);
        self
    }

    /// With a media type.
    #[must_use]
    pub const fn with_mime_type(mut self, mime_type: &'static str) -> Self {
        self.mime_type = Some(mime_type);
        self
    }

    /// With completion functions for template variables, by variable name.
    #[must_use]
    pub const fn with_completions(
        mut self,
        completions: &'static [(&'static str, CompleteFn)],
    ) -> Self {
        self.completions = completions;
        self
    }

    /// The URI, or the URI template.
    pub fn uri(&self) -> &'static str {
        self.uri
    }

    /// Whether [`uri`](Self::uri) is a template.
    pub fn is_template(&self) -> bool {
        self.templated
    }

    /// The name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The title, if declared.
    pub fn title(&self) -> Option<&'static str> {
        self.title
    }

    /// The description (the doc comment, or `description = "..."`).
    pub fn description(&self) -> &'static str {
        self.description
    }

    /// The media type, if declared.
    pub fn mime_type(&self) -> Option<&'static str> {
        self.mime_type
    }

    /// Where it is declared.
    pub fn location(&self) -> &SourceLocation {
        &self.location
    }

    /// The variables that have a completion function.
    pub fn completed_variables(&self) -> impl Iterator<Item = &'static str> {
        self.completions.iter().map(|(name, _)| *name)
    }
}

/// One resource registration, submitted to `inventory` by `#[resource]`.
#[doc(hidden)]
#[derive(Debug)]
pub struct ResourceRegistration {
    def: &'static ResourceDef,
}

impl ResourceRegistration {
    /// Wraps a definition for `inventory::submit!`.
    pub const fn new(def: &'static ResourceDef) -> Self {
        ResourceRegistration { def }
    }
}

inventory::collect!(ResourceRegistration);

/// The declared resources a server serves, with their subscriptions. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Resources {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Fixed URIs, sorted by URI.
    fixed: Vec<&'static ResourceDef>,
    /// Templates, sorted by template.
    templates: Vec<(&'static ResourceDef, UriTemplate)>,
    updates: ResourceUpdates,
}

impl Resources {
    /// Every `#[resource]` linked into the binary, built once.
    ///
    /// # Panics
    ///
    /// When two declarations claim one URI or template (both locations in the message).
    pub fn global() -> &'static Resources {
        match Resources::try_global() {
            Ok(resources) => resources,
            Err(error) => panic!("{error}"),
        }
    }

    /// Every `#[resource]` linked into the binary, or what is wrong with them.
    ///
    /// # Errors
    ///
    /// Two declarations claim one URI or template.
    pub fn try_global() -> Result<&'static Resources, DeclarationError> {
        static GLOBAL: OnceLock<Result<Resources, DeclarationError>> = OnceLock::new();
        GLOBAL
            .get_or_init(|| {
                Resources::from_defs(
                    inventory::iter::<ResourceRegistration>
                        .into_iter()
                        .map(|registration| registration.def),
                )
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// No resources.
    pub fn empty() -> Resources {
        Resources::from_defs([]).expect("no declarations, no conflicts")
    }

    /// The given declarations (explicit registration: `my_resource::RESOURCE`).
    ///
    /// # Errors
    ///
    /// Two declarations claim one URI or template, or a template does not parse.
    pub fn from_defs(
        defs: impl IntoIterator<Item = &'static ResourceDef>,
    ) -> Result<Resources, DeclarationError> {
        let mut problems = Vec::new();
        let mut by_uri: BTreeMap<&str, &'static ResourceDef> = BTreeMap::new();
        let mut fixed = Vec::new();
        let mut templates = Vec::new();
        for def in defs {
            if let Some(first) = by_uri.insert(def.uri, def) {
                problems.push(format!(
                    "two resources are declared at `{}`: at {} and at {}",
                    def.uri,
                    at(&first.location),
                    at(&def.location)
                ));
                continue;
            }
            if def.templated {
                match UriTemplate::parse(def.uri) {
                    Ok(template) => templates.push((def, template)),
                    Err(error) => problems.push(format!("{error} (at {})", at(&def.location))),
                }
            } else {
                fixed.push(def);
            }
        }
        DeclarationError::check(problems)?;
        fixed.sort_by_key(|def| def.uri);
        templates.sort_by_key(|(def, _)| def.uri);
        Ok(Resources {
            inner: Arc::new(Inner {
                fixed,
                templates,
                updates: ResourceUpdates::default(),
            }),
        })
    }

    /// Whether nothing is declared.
    pub fn is_empty(&self) -> bool {
        self.inner.fixed.is_empty() && self.inner.templates.is_empty()
    }

    /// The resources at fixed URIs, sorted by URI.
    pub fn resources(&self) -> impl Iterator<Item = &'static ResourceDef> + '_ {
        self.inner.fixed.iter().copied()
    }

    /// The resource templates, sorted by template.
    pub fn templates(&self) -> impl Iterator<Item = &'static ResourceDef> + '_ {
        self.inner.templates.iter().map(|(def, _)| *def)
    }

    /// The declaration that serves `uri` (a fixed URI first, then the templates in order),
    /// with the template's variables.
    pub fn find(&self, uri: &str) -> Option<(&'static ResourceDef, Vec<(String, String)>)> {
        if let Some(def) = self.inner.fixed.iter().find(|def| def.uri == uri) {
            return Some((def, Vec::new()));
        }
        self.inner
            .templates
            .iter()
            .find_map(|(def, template)| template.matches(uri).map(|values| (*def, values)))
    }

    /// Reads the resource at `uri`.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` when nothing declared serves `uri`; what the resource's function
    /// returned; `VALIDATION_ERROR` for a template variable its parameter cannot hold;
    /// `INTERNAL_ERROR` when the function panicked.
    pub async fn read(
        &self,
        uri: &str,
        context: CommandContext,
    ) -> Result<Vec<ResourceContents>, CommandError> {
        let Some((def, variables)) = self.find(uri) else {
            return Err(self.not_found(uri));
        };
        let request = ResourceRequest::new(uri.to_owned(), variables, context);
        match AssertUnwindSafe((def.read)(request)).catch_unwind().await {
            Ok(read) => read,
            Err(_) => {
                tracing::error!(%uri, "a resource's function panicked");
                Err(CommandError::internal(format!(
                    "reading '{uri}' failed inside the server"
                )))
            }
        }
    }

    /// The `NOT_FOUND` for a URI nothing serves, naming what is there.
    pub fn not_found(&self, uri: &str) -> CommandError {
        let known: Vec<&str> = self
            .resources()
            .chain(self.templates())
            .map(ResourceDef::uri)
            .collect();
        let suggestion = if known.is_empty() {
            "List the resources with resources/list.".to_owned()
        } else {
            format!(
                "Read one of {}, or list them with resources/list.",
                known.join(", ")
            )
        };
        CommandError::new(codes::NOT_FOUND, format!("no resource at '{uri}'"))
            .with_suggestion(suggestion)
    }

    /// Completes `variable` of the template `template` for what the user typed, with no
    /// other variable chosen yet.
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` when no template is declared as `template`, or it has no such variable.
    pub fn complete(
        &self,
        template: &str,
        variable: &str,
        typed: &str,
    ) -> Result<Completion, CommandError> {
        self.complete_with(template, variable, typed, &CompletionArgs::new())
    }

    /// Completes `variable` of the template `template` for what the user typed, given the
    /// variables already chosen (`args`).
    ///
    /// # Errors
    ///
    /// `NOT_FOUND` when no template is declared as `template`, or it has no such variable.
    pub fn complete_with(
        &self,
        template: &str,
        variable: &str,
        typed: &str,
        args: &CompletionArgs,
    ) -> Result<Completion, CommandError> {
        let Some((def, parsed)) = self
            .inner
            .templates
            .iter()
            .find(|(def, _)| def.uri == template)
        else {
            return Err(CommandError::new(
                codes::NOT_FOUND,
                format!("no resource template '{template}'"),
            )
            .with_suggestion("List the templates with resources/templates/list."));
        };
        if !parsed.variables().any(|name| name == variable) {
            let variables: Vec<&str> = parsed.variables().collect();
            return Err(CommandError::new(
                codes::NOT_FOUND,
                format!("the template '{template}' has no variable '{variable}'"),
            )
            .with_suggestion(format!("Its variables: {}.", variables.join(", "))));
        }
        Ok(completion::complete(def.completions, variable, typed, args))
    }

    /// The subscriptions to these resources.
    pub fn updates(&self) -> &ResourceUpdates {
        &self.inner.updates
    }

    /// Tells every client subscribed to `uri` that it changed; how many were told.
    pub async fn updated(&self, uri: &str) -> usize {
        self.inner.updates.updated(uri).await
    }
}

/// A value a resource's function returns: text, bytes, or contents as they are.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned by a resource",
    label = "a resource returns text, bytes or contents",
    note = "return `String`, `&'static str`, `Vec<u8>`, `ResourceContents`, `Vec<ResourceContents>`, or a `Result` of one of them with an error that converts into `CommandError`"
)]
pub trait IntoResourceContents {
    /// The contents read at `uri`; `mime_type` is the declared one.
    ///
    /// # Errors
    ///
    /// The function's own error.
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&'static str>,
    ) -> Result<Vec<ResourceContents>, CommandError>;
}

impl IntoResourceContents for String {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&'static str>,
    ) -> Result<Vec<ResourceContents>, CommandError> {
        Ok(vec![
            ResourceContents::text(uri, self).with_mime_type(mime_type.unwrap_or("text/plain")),
        ])
    }
}

impl IntoResourceContents for &'static str {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&'static str>,
    ) -> Result<Vec<ResourceContents>, CommandError> {
        self.to_owned().into_contents(uri, mime_type)
    }
}

impl IntoResourceContents for Vec<u8> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&'static str>,
    ) -> Result<Vec<ResourceContents>, CommandError> {
        Ok(vec![ResourceContents::blob(uri, self).with_mime_type(
            mime_type.unwrap_or("application/octet-stream"),
        )])
    }
}

impl IntoResourceContents for ResourceContents {
    fn into_contents(
        self,
        _uri: &str,
        _mime_type: Option<&'static str>,
    ) -> Result<Vec<ResourceContents>, CommandError> {
        Ok(vec![self])
    }
}

impl IntoResourceContents for Vec<ResourceContents> {
    fn into_contents(
        self,
        _uri: &str,
        _mime_type: Option<&'static str>,
    ) -> Result<Vec<ResourceContents>, CommandError> {
        Ok(self)
    }
}

impl<T: IntoResourceContents, E: Into<CommandError>> IntoResourceContents for Result<T, E> {
    fn into_contents(
        self,
        uri: &str,
        mime_type: Option<&'static str>,
    ) -> Result<Vec<ResourceContents>, CommandError> {
        self.map_err(Into::into)?.into_contents(uri, mime_type)
    }
}

/// A type a template variable's text can be parsed into: any `FromStr`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot hold a URI template variable",
    label = "a template variable's parameter must implement `FromStr`",
    note = "take `String`, a number, or another type that implements `FromStr`"
)]
pub trait TemplateVariable: Sized {
    /// Parses the variable's text.
    ///
    /// # Errors
    ///
    /// The text is not a value of the type.
    fn parse_variable(text: &str) -> Result<Self, String>;
}

#[diagnostic::do_not_recommend]
impl<T: FromStr> TemplateVariable for T
where
    T::Err: std::fmt::Display,
{
    fn parse_variable(text: &str) -> Result<Self, String> {
        text.parse().map_err(|error: T::Err| error.to_string())
    }
}

/// The value of the template variable `name` of a read, parsed into its parameter's type
/// (what `#[resource]` expands to).
#[doc(hidden)]
pub fn template_variable<T: TemplateVariable>(
    request: &ResourceRequest,
    name: &str,
) -> Result<T, CommandError> {
    let text = request.variable(name).unwrap_or_default();
    T::parse_variable(text).map_err(|error| {
        CommandError::new(
            codes::VALIDATION_ERROR,
            format!(
                "'{text}' is not a valid {name} in '{}': {error}",
                request.uri()
            ),
        )
        .with_suggestion(format!("Use a valid {name} in the URI."))
    })
}

/// The contents of what a resource's function returned (what `#[resource]` expands to).
#[doc(hidden)]
pub fn resource_contents<T: IntoResourceContents>(
    output: T,
    uri: &str,
    mime_type: Option<&'static str>,
) -> Result<Vec<ResourceContents>, CommandError> {
    output.into_contents(uri, mime_type)
}
