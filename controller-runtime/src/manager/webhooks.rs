//! The manager's webhook server (feature `webhook`): registering webhooks and conversions on
//! the server configured with [`ManagerBuilder::webhook_server`](super::ManagerBuilder::webhook_server),
//! and where it listens. The manager starts it with its probe servers, before the caches sync.

use serde::Serialize;

use crate::kind::Kind;
use crate::manager::error::Error;
use crate::manager::running::Manager;
use crate::webhook::{Error as WebhookError, KindConversion, Webhook, WebhookServer};

impl Manager {
    /// The webhook server, if the manager was built with one.
    pub fn webhook_server(&self) -> Option<&WebhookServer> {
        self.webhooks.as_ref()
    }

    /// Serves `webhook` on the manager's webhook server (before or after `start`). Fails if the
    /// manager has no webhook server, or the path is invalid or taken.
    pub fn add_webhook(&self, webhook: Webhook) -> Result<(), Error> {
        Ok(self.server()?.register(webhook)?)
    }

    /// Converts the versions of one kind on the manager's webhook server (`/convert`).
    pub fn add_conversion<H: Kind + Serialize>(
        &self,
        conversion: KindConversion<H>,
    ) -> Result<(), Error> {
        Ok(self.server()?.register_conversion(conversion)?)
    }

    fn server(&self) -> Result<&WebhookServer, WebhookError> {
        self.webhooks.as_ref().ok_or(WebhookError::NotConfigured)
    }
}
