package dev.ordergate.tools;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * The drill's schedule, drawn from one seeded {@link Random}: the same seed, order count and
 * timeout give the same orders, items, coupons and actions at the same offsets from each order's
 * expiry. (What the service answers still depends on real timing: that is the point.)
 */
final class DrillPlan {

  enum Timing { EARLY, LAST_SECOND, AFTER_EXPIRY }

  /**
   * {@code OPEN_PAYMENT}, {@code GATEWAY_PAY}: the gateway drill ({@code --gateway-sim}): the customer opens
   * the payment through the service, then pays at the simulated gateway, which notifies the service.
   */
  enum Kind { PAY, CUSTOMER_CANCEL, OPERATOR_CANCEL, OPEN_PAYMENT, GATEWAY_PAY }

  /**
   * One thing done to an order, {@code offsetMs} from its expiry (negative = before). For a
   * {@code GATEWAY_PAY}: {@code copies} notifications of it (duplicates), sent {@code notifyDelayMs} after the
   * payment, or none at all when {@code dropped}.
   */
  record Action(Kind kind, long offsetMs, String txnId, long amountDelta, int copies, Timing timing,
                long notifyDelayMs, boolean dropped) {
    Action(Kind kind, long offsetMs, String txnId, long amountDelta, int copies, Timing timing) {
      this(kind, offsetMs, txnId, amountDelta, copies, timing, 0, false);
    }
  }

  record Item(String sku, int qty, long unitPriceCents) {}

  /** {@code channel}: the gateway drill's payment channel for this order (null in the classic drill). */
  record OrderPlan(int index, String orderNo, String userId, List<Item> items, String couponCode,
                   long discountCents, List<Action> actions, String channel) {

    OrderPlan(int index, String orderNo, String userId, List<Item> items, String couponCode,
              long discountCents, List<Action> actions) {
      this(index, orderNo, userId, items, couponCode, discountCents, actions, null);
    }

    JsonObject request(long timeoutSeconds) {
      JsonArray list = new JsonArray();
      items.forEach(i -> list.add(new JsonObject().put("sku", i.sku()).put("qty", i.qty())
          .put("unitPriceCents", i.unitPriceCents())));
      JsonObject o = new JsonObject().put("orderNo", orderNo).put("userId", userId).put("items", list)
          .put("paymentTimeoutSeconds", timeoutSeconds);
      if (couponCode != null) {
        o.put("couponCode", couponCode);
      }
      return o;
    }

    /** Two or more actions within a second of each other, or one racing the sweep after expiry. */
    boolean contested() {
      for (Action a : actions) {
        if (a.offsetMs() >= 0 || a.copies() > 1) {
          return true;
        }
        for (Action b : actions) {
          if (a != b && Math.abs(a.offsetMs() - b.offsetMs()) <= 1000) {
            return true;
          }
        }
      }
      return false;
    }
  }

  static final double PAY_SHARE = 0.8;
  static final double CANCEL_SHARE = 0.4;

  final List<OrderPlan> orders;
  final List<String> skus;
  final String runId;

  private DrillPlan(List<OrderPlan> orders, List<String> skus, String runId) {
    this.orders = orders;
    this.skus = skus;
    this.runId = runId;
  }

  static DrillPlan generate(String runId, int count, long seed, int timeoutSeconds, int skuCount) {
    Random rng = new Random(seed);
    long t = timeoutSeconds * 1000L;
    List<String> skus = skus(runId, skuCount);
    List<OrderPlan> orders = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      String orderNo = "DR-" + runId + "-" + i;
      String user = "drill-u" + i;
      List<Item> items = new ArrayList<>();
      int first = rng.nextInt(skuCount);
      int lines = skuCount > 1 ? 1 + rng.nextInt(2) : 1;
      for (int l = 0; l < lines; l++) {
        items.add(new Item(skus.get((first + l) % skuCount), 1 + rng.nextInt(3), 100 + rng.nextInt(4900)));
      }
      String coupon = null;
      long discount = 0;
      if (rng.nextDouble() < 0.3) {
        coupon = "DR-" + runId + "-C" + i;
        discount = 50 + rng.nextInt(450);
      }
      List<Action> actions = new ArrayList<>();
      Long payOffset = null;
      if (rng.nextDouble() < PAY_SHARE) {
        double u = rng.nextDouble();
        Timing timing;
        long off;
        if (u < 0.25) {
          timing = Timing.EARLY;
          off = -t + 200 + rng.nextInt((int) Math.max(1, t - 1200));
        } else if (u < 0.6) {
          timing = Timing.LAST_SECOND;
          off = -rng.nextInt(1000);
        } else {
          timing = Timing.AFTER_EXPIRY;
          off = rng.nextInt(1500);
        }
        double c = rng.nextDouble();
        int copies = c < 0.7 ? 1 : c < 0.9 ? 2 : 3;
        long delta = rng.nextDouble() < 0.08 ? (rng.nextBoolean() ? -1 : 100) : 0;
        actions.add(new Action(Kind.PAY, off, "DT-" + runId + "-" + i + "-a", delta, copies, timing));
        if (rng.nextDouble() < 0.08) {
          actions.add(new Action(Kind.PAY, off, "DT-" + runId + "-" + i + "-b", 0, 1, timing));
        }
        payOffset = off;
      }
      if (rng.nextDouble() < CANCEL_SHARE) {
        cancels(rng, actions, payOffset != null && rng.nextBoolean() ? payOffset : -1000 + rng.nextInt(2001));
      }
      orders.add(new OrderPlan(i, orderNo, user, List.copyOf(items), coupon, discount, List.copyOf(actions)));
    }
    return new DrillPlan(List.copyOf(orders), List.copyOf(skus), runId);
  }

  private static List<String> skus(String runId, int skuCount) {
    List<String> skus = new ArrayList<>();
    for (int k = 0; k < skuCount; k++) {
      skus.add("DR-" + runId + "-S" + k);
    }
    return skus;
  }

  /** A customer (60%) or operator cancel at {@code off}, or both at once (10%). */
  private static void cancels(Random rng, List<Action> actions, long off) {
    Timing timing = off < -1000 ? Timing.EARLY : off < 0 ? Timing.LAST_SECOND : Timing.AFTER_EXPIRY;
    double s = rng.nextDouble();
    if (s < 0.1) {
      actions.add(new Action(Kind.CUSTOMER_CANCEL, off, null, 0, 1, timing));
      actions.add(new Action(Kind.OPERATOR_CANCEL, off, null, 0, 1, timing));
    } else {
      actions.add(new Action(s < 0.6 ? Kind.CUSTOMER_CANCEL : Kind.OPERATOR_CANCEL, off, null, 0, 1, timing));
    }
  }

  /** The gateway drill's shares, per order. */
  static final double GATEWAY_PAY_SHARE = 0.75;
  static final double GATEWAY_CANCEL_SHARE = 0.35;
  static final double NOTIFICATION_DROP_SHARE = 0.12;

  /**
   * The gateway drill's schedule ({@code --gateway-sim}), scaled to a window of {@code timeoutSeconds} with
   * the proportions of a 30-minute one: each order is paid through one of {@code channels} (round robin),
   * the customer opens the payment 5% into the window; 75% pay at the gateway: early (10%..80% of the
   * window, 30%), at "29:58" (40%: 2/1800 of the window before expiry, its notification landing at "30:20",
   * 22/1800 after the payment) or after expiry ("30:01".."31:00", 30%: refused by a gateway whose deadline
   * holds, taken by one without); 12% of notifications are dropped, 25% duplicated (one or two more copies),
   * the others delayed up to 10/1800 of the window. 35% of orders get a customer (60%) or operator cancel
   * (10% both), half at the payment's instant, the rest between the middle of the window and just after expiry.
   */
  static DrillPlan generateGateway(String runId, int count, long seed, int timeoutSeconds, int skuCount,
                                   List<String> channels) {
    Random rng = new Random(seed);
    double t = timeoutSeconds * 1000.0;
    double minute = t / 30;
    double second = t / 1800;
    List<String> skus = skus(runId, skuCount);
    List<OrderPlan> orders = new ArrayList<>(count);
    for (int i = 0; i < count; i++) {
      String orderNo = "DR-" + runId + "-" + i;
      List<Item> items = new ArrayList<>();
      items.add(new Item(skus.get(rng.nextInt(skuCount)), 1 + rng.nextInt(3), 100 + rng.nextInt(4900)));
      List<Action> actions = new ArrayList<>();
      actions.add(new Action(Kind.OPEN_PAYMENT, Math.round(-t * 0.95), null, 0, 1, Timing.EARLY));
      Long payOffset = null;
      if (rng.nextDouble() < GATEWAY_PAY_SHARE) {
        double u = rng.nextDouble();
        Timing timing;
        long off;
        long delay;
        if (u < 0.3) {
          timing = Timing.EARLY;
          off = Math.round(-t * (0.2 + 0.7 * rng.nextDouble()));
          delay = Math.round(rng.nextDouble() * 10 * second);
        } else if (u < 0.7) {
          timing = Timing.LAST_SECOND;
          off = Math.round(-2 * second);
          delay = Math.round(22 * second);
        } else {
          timing = Timing.AFTER_EXPIRY;
          off = Math.round(second + rng.nextDouble() * (minute - second));
          delay = Math.round(rng.nextDouble() * 10 * second);
        }
        double c = rng.nextDouble();
        int copies = c < 0.75 ? 1 : c < 0.95 ? 2 : 3;
        boolean dropped = rng.nextDouble() < NOTIFICATION_DROP_SHARE;
        actions.add(new Action(Kind.GATEWAY_PAY, off, null, 0, copies, timing, delay, dropped));
        payOffset = off;
      }
      if (rng.nextDouble() < GATEWAY_CANCEL_SHARE) {
        cancels(rng, actions, payOffset != null && rng.nextBoolean() ? payOffset
            : Math.round(-t * 0.5 + rng.nextDouble() * (t * 0.5 + 2 * second)));
      }
      orders.add(new OrderPlan(i, orderNo, "drill-u" + i, List.copyOf(items), null, 0, List.copyOf(actions),
          channels.get(i % channels.size())));
    }
    return new DrillPlan(List.copyOf(orders), List.copyOf(skus), runId);
  }

  /** Stock that covers every order with room to spare: no order fails for stock. */
  int stockPerSku() {
    return orders.size() * 3 + 100;
  }

  /** What the schedule holds, by kind: the same for the same seed. */
  JsonObject shape() {
    Tally t = new Tally();
    for (OrderPlan o : orders) {
      t.add("orders");
      if (o.couponCode() != null) {
        t.add("withCoupon");
      }
      if (o.actions().isEmpty()) {
        t.add("leftToExpire");
      }
      if (o.contested()) {
        t.add("contested");
      }
      long payments = o.actions().stream().filter(a -> a.kind() == Kind.PAY || a.kind() == Kind.GATEWAY_PAY).count();
      if (payments > 1) {
        t.add("twoTransactions");
      }
      boolean cancel = o.actions().stream().anyMatch(a -> a.kind() == Kind.CUSTOMER_CANCEL || a.kind() == Kind.OPERATOR_CANCEL);
      if (o.channel() != null) {
        t.add("channel." + o.channel());
      }
      if (payments > 0 && cancel) {
        t.add("payAndCancel");
      }
      for (Action a : o.actions()) {
        switch (a.kind()) {
          case PAY -> {
            t.add("pay." + a.timing());
            if (a.copies() > 1) {
              t.add("pay.deliveredx" + a.copies());
            }
            if (a.amountDelta() != 0) {
              t.add("pay.wrongAmount");
            }
          }
          case GATEWAY_PAY -> {
            t.add("gatewayPay." + a.timing());
            if (a.dropped()) {
              t.add("notification.dropped");
            } else if (a.copies() > 1) {
              t.add("notification.x" + a.copies());
            }
          }
          case OPEN_PAYMENT -> t.add("openPayment");
          case CUSTOMER_CANCEL -> t.add("cancel.customer." + a.timing());
          case OPERATOR_CANCEL -> t.add("cancel.operator." + a.timing());
        }
      }
    }
    return t.toJson();
  }
}
