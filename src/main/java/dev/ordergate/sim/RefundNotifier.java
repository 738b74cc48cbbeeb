package dev.ordergate.sim;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sends the simulated gateways' refund notifications through the signed {@link Sender} (the gateway's own
 * retry schedule). Where to: the URL set for the kind ({@code POST /sim/webhooks/KIND}, what a test points
 * at its service), else the refund request's notify_url (WeChat Pay), else the service's callback route of
 * the kind's sandbox channel (Stripe sends to the endpoint configured on the account, not per request).
 */
public final class RefundNotifier {

  private static final Logger log = LoggerFactory.getLogger(RefundNotifier.class);

  private final SimConfig config;
  private final Map<String, String> webhooks = new ConcurrentHashMap<>();
  private volatile Sender sender;
  private volatile String service = "http://127.0.0.1:8080";

  RefundNotifier(SimConfig config) {
    this.config = config;
  }

  /** Notifications go out through {@code sender}; {@code service} is ordergate's base URL. Until then none is sent. */
  public void start(Sender sender, String service) {
    this.sender = sender;
    this.service = service;
  }

  /** Where {@code kind}'s refund notifications go from now on (null: back to the default). */
  public void webhook(String kind, String url) {
    if (url == null) {
      webhooks.remove(kind);
    } else {
      webhooks.put(kind, url);
    }
  }

  void send(String kind, String requestUrl, Delivery d) {
    Sender s = sender;
    SimConfig.Target target = config.target(kind);
    String url = webhooks.getOrDefault(kind, requestUrl != null ? requestUrl
        : service + "/api/callbacks/" + target.channel());
    if (s == null) {
      log.info("{} refund notification not sent (no sender): {}", kind, url);
      return;
    }
    s.deliver(url, d, target.gateway()).onSuccess(r -> {
      if (!r.accepted()) {
        log.warn("{} refund notification to {} not accepted after {} attempt(s)", kind, url, r.attempts().size());
      }
    });
  }
}
