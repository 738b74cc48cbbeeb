package dev.ordergate.domain;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/** A validated order request. {@code orderNo} and {@code paymentTimeoutSeconds} may be null. */
public record NewOrder(String orderNo, String userId, List<Item> items, String couponCode, Long paymentTimeoutSeconds) {

  public record Item(String sku, int qty, long unitPriceCents) {}

  /** The sum of the items, before any coupon. */
  public long grossCents() {
    long sum = 0;
    for (Item i : items) {
      sum = Math.addExact(sum, Math.multiplyExact(i.unitPriceCents(), (long) i.qty()));
    }
    return sum;
  }

  /** Fingerprint of everything but the order number: a repeat with the same body is the same order. */
  public String requestHash() {
    StringBuilder sb = new StringBuilder().append(userId).append('\n')
        .append(couponCode == null ? "" : couponCode).append('\n')
        .append(paymentTimeoutSeconds == null ? "" : paymentTimeoutSeconds).append('\n');
    for (Item i : items) {
      sb.append(i.sku()).append('\t').append(i.qty()).append('\t').append(i.unitPriceCents()).append('\n');
    }
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(sb.toString().getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
