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

    /// A sharded manager's assignment webhook
    /// ([`ManagerBuilder::sharding`](crate::manager::ManagerBuilder::sharding)): a mutating
    /// webhook on `/sharding/<ring>` that labels each new object of the kinds its controllers
    /// shard with its shard as the object is created, so the shard starts on it at once (the
    /// sharder labels what it misses: it fails open). A manager with a webhook server serves it
    /// from `start`; call this after building the controllers to put it in the webhook
    /// configuration (e.g. [`WebhookServer::mutating_webhook_configuration`] lists it once
    /// the manager started, or pass it to
    /// [`mutating_webhook_configuration`](crate::webhook::mutating_webhook_configuration)).
    /// `None` unless sharded.
    pub fn sharding_webhook(&self) -> Option<Webhook> {
        self.sharded().map(|sharded| sharded.webhook())
    }

    /// Serves the assignment webhook when sharded and serving webhooks (unless the operator
    /// registered it already).
    pub(crate) fn serve_sharding_webhook(&self) -> Result<(), Error> {
        let (Some(server), Some(webhook)) = (self.webhooks.as_ref(), self.sharding_webhook())
        else {
            return Ok(());
        };
        match server.register(webhook) {
            Ok(()) | Err(WebhookError::DuplicatePath(_)) => Ok(()),
            Err(error) => Err(error.into()),
        }
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
