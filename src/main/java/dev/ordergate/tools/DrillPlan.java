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

  enum Kind { PAY, CUSTOMER_CANCEL, OPERATOR_CANCEL }

  /** One thing done to an order, {@code offsetMs} from its expiry (negative = before). */
  record Action(Kind kind, long offsetMs, String txnId, long amountDelta, int copies, Timing timing) {}

  record Item(String sku, int qty, long unitPriceCents) {}

  record OrderPlan(int index, String orderNo, String userId, List<Item> items, String couponCode,
                   long discountCents, List<Action> actions) {

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
    List<String> skus = new ArrayList<>();
    for (int k = 0; k < skuCount; k++) {
      skus.add("DR-" + runId + "-S" + k);
    }
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
        long off = payOffset != null && rng.nextBoolean() ? payOffset : -1000 + rng.nextInt(2001);
        Timing timing = off < -1000 ? Timing.EARLY : off < 0 ? Timing.LAST_SECOND : Timing.AFTER_EXPIRY;
        double s = rng.nextDouble();
        if (s < 0.1) {
          actions.add(new Action(Kind.CUSTOMER_CANCEL, off, null, 0, 1, timing));
          actions.add(new Action(Kind.OPERATOR_CANCEL, off, null, 0, 1, timing));
        } else {
          actions.add(new Action(s < 0.6 ? Kind.CUSTOMER_CANCEL : Kind.OPERATOR_CANCEL, off, null, 0, 1, timing));
        }
      }
      orders.add(new OrderPlan(i, orderNo, user, List.copyOf(items), coupon, discount, List.copyOf(actions)));
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
      long payments = o.actions().stream().filter(a -> a.kind() == Kind.PAY).count();
      if (payments > 1) {
        t.add("twoTransactions");
      }
      boolean cancel = o.actions().stream().anyMatch(a -> a.kind() != Kind.PAY);
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
          case CUSTOMER_CANCEL -> t.add("cancel.customer." + a.timing());
          case OPERATOR_CANCEL -> t.add("cancel.operator." + a.timing());
        }
      }
    }
    return t.toJson();
  }
}
