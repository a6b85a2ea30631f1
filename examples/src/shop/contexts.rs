//! The shop's runtime contexts: what an agent may call while it works on one
//! part of the shop. Product lookups and plan listings name no context, so they are
//! callable everywhere.

afd_runtime::context! {
    /// Browsing the catalog and buying: products, carts, coupons and reviews.
    name = "storefront",
    priority = 20,
    triggers("buy", "browse", "cart", "checkout", "coupon", "review", "product"),
}

afd_runtime::context! {
    /// Getting orders to customers: orders, shipments and stock.
    name = "fulfilment",
    priority = 15,
    triggers("ship", "shipment", "deliver", "stock", "warehouse", "fulfil", "order"),
}

afd_runtime::context! {
    /// Undoing orders: cancellations, refunds and voided shipments and payments. Nested in
    /// fulfilment, so its commands are callable here too.
    name = "returns",
    parent = "fulfilment",
    priority = 12,
    triggers("return", "refund", "cancel", "void"),
}

afd_runtime::context! {
    /// Money: payments, invoices and subscriptions.
    name = "billing",
    priority = 10,
    triggers("invoice", "bill", "pay", "payment", "charge", "subscription", "plan"),
}

afd_runtime::context! {
    /// Running the shop: configuration, user accounts and reports.
    name = "back-office",
    priority = 5,
    triggers("admin", "settings", "configure", "account", "user"),
}

afd_runtime::context! {
    /// Auditing the shop without changing it: reports and the read-only views of orders,
    /// payments, invoices, stock and users. Always read-only.
    name = "audit",
    priority = 8,
    triggers("audit", "inspect", "report", "analytics", "compliance"),
    read_only,
}
