package dev.ordergate.reconcile;

import dev.ordergate.db.ReconcileSql;

/** The invariants the reconciliation checks, each one query returning its violations. */
public enum Invariant {
  STATUS_IS_LAST_TRANSITION(ReconcileSql.STATUS_IS_LAST_TRANSITION, null,
      "an order's status equals the 'to' of its last transition"),
  ONE_EXIT_FROM_PENDING(ReconcileSql.ONE_EXIT_FROM_PENDING, null,
      "an order has at most one transition out of PENDING_PAYMENT"),
  STOCK_IS_LEDGER_TOTAL(ReconcileSql.STOCK_IS_LEDGER_TOTAL, null,
      "per SKU, available equals the inventory ledger's running total"),
  CANCELLED_RETURNED_ONCE(ReconcileSql.CANCELLED_RETURNED_ONCE, null,
      "a cancelled order has exactly one RETURN per item, equal to what it took"),
  OPEN_ORDERS_RETURNED_NOTHING(ReconcileSql.OPEN_ORDERS_RETURNED_NOTHING, null,
      "pending and paid orders have no RETURN"),
  COUPON_FOLLOWS_ORDER(ReconcileSql.COUPON_FOLLOWS_ORDER, null,
      "a coupon is USED iff its order is PAID, LOCKED iff pending, otherwise AVAILABLE"),
  SUCCESS_RECEIPT_ACCOUNTED(ReconcileSql.SUCCESS_RECEIPT_ACCOUNTED, null,
      "every SUCCESS receipt is the applied payment of a PAID order with the same amount, or in an exception order"),
  SUCCESS_NOTIFICATION_ACCOUNTED(ReconcileSql.SUCCESS_NOTIFICATION_ACCOUNTED, "payment_notifications",
      "every txn that ever reported SUCCESS is the applied payment of a PAID order or in an exception order"),
  PAID_HAS_ONE_APPLIED_RECEIPT(ReconcileSql.PAID_HAS_ONE_APPLIED_RECEIPT, null,
      "a PAID order has exactly one applied receipt; a CANCELLED order has none"),
  REFUNDED_HAS_DELIVERED_REQUEST(ReconcileSql.REFUNDED_HAS_DELIVERED_REQUEST, ReconcileSql.REFUND_TABLE,
      "an exception order in REFUNDED has a delivered refund request");

  private final String sql;
  private final String requiresTable;
  private final String description;

  Invariant(String sql, String requiresTable, String description) {
    this.sql = sql;
    this.requiresTable = requiresTable;
    this.description = description;
  }

  public String sql() {
    return sql;
  }

  /** A table the check needs (it is skipped, and says so, where the table does not exist); may be null. */
  public String requiresTable() {
    return requiresTable;
  }

  public String description() {
    return description;
  }
}
