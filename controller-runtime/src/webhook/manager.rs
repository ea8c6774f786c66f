//! The manager's side of the webhook server: registering webhooks and conversions on the server
//! configured with [`ManagerBuilder::webhook_server`](crate::ManagerBuilder::webhook_server),
//! and where it listens.

use std::net::SocketAddr;

use serde::Serialize;

use crate::error::Error;
use crate::kind::Kind;
use crate::manager::Manager;
use crate::webhook::conversion::KindConversion;
use crate::webhook::error::WebhookError;
use crate::webhook::registration::Webhook;
use crate::webhook::server::WebhookServer;

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

    /// The address the webhook server listens on, once [`start`](Manager::start) bound it.
    pub fn webhook_addr(&self) -> Option<SocketAddr> {
        self.webhooks.as_ref().and_then(WebhookServer::local_addr)
    }

    fn server(&self) -> Result<&WebhookServer, WebhookError> {
        self.webhooks.as_ref().ok_or(WebhookError::NotConfigured)
    }
}
