package dev.ordergate.tools;

import dev.ordergate.config.AppConfig;
import dev.ordergate.config.ChannelConfig;
import dev.ordergate.config.Secrets;
import dev.ordergate.sim.SimConfig;
import dev.ordergate.channel.ordergate.OrdergateSignature;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.Set;

/** {@code ordergate replay generate|run}: the load tester's callback bursts. */
final class ReplayCommand {

  static final String HELP = """
      usage: ordergate replay generate --orders N --file bursts.jsonl --url URL [options]
             ordergate replay run --file bursts.jsonl --url URL [--connections C] [--rate R] [options]
             ordergate replay run --file bursts.jsonl --emit-wrk requests.lua [--secret S]

      generate: creates N pending orders through the API (one SKU whose stock it sets, one item
        each, payment timeout --timeout-seconds, default 86400) and writes one SUCCESS callback per
        order as a JSON line {"offsetMs","channel","body"}, offsets spread over --span-ms (default
        1000); a share of them (--duplicates, default 0.1) is written 2-3 times with the same txnId.
          --admin-token T   (default admin.token / ORDERGATE_ADMIN_TOKEN from the config)
          --format F        ordergate (default) | wechatpay-v3 | alipay | stripe: run sends each callback
                            in that gateway's wire format, signed (and for WeChat Pay encrypted) with
                            the DEVELOPMENT ONLY keys of conf/sandbox before the clock starts
          --api-key K       (default the first of ORDERGATE_API_KEYS, else api.keys from the config)
          --channel NAME    written into each line (default sandbox, or the format's sandbox channel)
          --sim-config FILE the simulated gateways (default conf/sandbox/gateway-sim.json)
          --seed N          (default 1)   --connections C   for creating orders (default 32)
      run: signs each callback at send time with the channel secret and sends it once.
          --connections C   HTTP/1.1 keep-alive connections, no pipelining (default 64)
          (default)         closed loop: C senders, each sends its next callback on an answer
          --rate R          open loop at R callbacks/s in file order (latency from when each was due)
          --use-offsets     open loop at the file's offsets
          --channel NAME    override the file's channel   --secret S   (default: the channel's
                            first secret from the config)
          --request-timeout-ms M  (default 30000)
          --warmup N        send the first N callbacks closed loop first, outside the figures
          --emit-wrk FILE   instead of sending, write a wrk Lua script with the requests pre-signed
                            now (valid for the channel's toleranceSeconds): wrk -s FILE URL
                            (ordergate format only)
      Both: --report FILE writes the JSON report. Exit status: 0 every callback answered 200,
      1 otherwise (errors or other statuses), 2 could not run.
      """ + Args.SECRETS_HELP;

  private final PrintStream out;

  ReplayCommand(PrintStream out) {
    this.out = out;
  }

  int run(String[] argv) throws Exception {
    Args args = Args.parse(argv, Set.of("orders", "file", "url", "admin-token", "api-key", "channel", "secret", "seed",
        "connections", "rate", "span-ms", "duplicates", "timeout-seconds", "request-timeout-ms", "report",
        "emit-wrk", "warmup", "format", "sim-config"), Set.of("use-offsets"));
    if (args.help() || args.positional().isEmpty()) {
      out.print(HELP);
      return args.help() ? Tools.OK : Tools.FAILED;
    }
    String file = args.string("file", null);
    if (file == null) {
      throw new Args.UsageException("--file is required");
    }
    // The load generator shares the machine with what it measures: the epoll transport where there is one.
    Vertx vertx = Vertx.builder().with(new io.vertx.core.VertxOptions().setPreferNativeTransport(true)).build();
    try {
      return switch (args.positional().get(0)) {
        case "generate" -> generate(vertx, args, Path.of(file));
        case "run" -> args.has("emit-wrk") ? emitWrk(vertx, args, Path.of(file)) : replay(vertx, args, Path.of(file));
        default -> throw new Args.UsageException("unknown replay action " + args.positional().get(0));
      };
    } finally {
      vertx.close().await();
    }
  }

  private static String required(Args args, String name) {
    String v = args.string(name, null);
    if (v == null) {
      throw new Args.UsageException("--" + name + " is required");
    }
    return v;
  }

  private int generate(Vertx vertx, Args args, Path file) throws IOException {
    int n = args.intValue("orders", 1000, 1, 10_000_000);
    String url = required(args, "url");
    String format = args.string("format", Burst.ORDERGATE);
    String channel = args.string("channel", null);
    if (!format.equals(Burst.ORDERGATE)) {
      SimConfig.Target sim;
      try {
        sim = SimConfig.load(args.string("sim-config", SimConfig.DEFAULT_PATH)).target(format);
      } catch (IllegalArgumentException e) {
        throw new Args.UsageException("--format must be ordergate, wechatpay-v3, alipay or stripe: " + e.getMessage());
      }
      channel = channel == null ? sim.channel() : channel;
    }
    channel = channel == null ? "sandbox" : channel;
    String token = args.secret("admin-token");
    String apiKey = DrillCommand.apiKey(args);
    if (token == null || apiKey == null) {
      AppConfig config = AppConfig.from(LocalService.configJson(vertx));
      token = token == null ? config.adminToken() : token;
      apiKey = apiKey == null ? config.apiKeys().get(0) : apiKey;
    }
    double dupShare = args.decimal("duplicates", 0.1, 0, 1);
    long span = args.integer("span-ms", 1000, 0, 86_400_000);
    long timeout = args.integer("timeout-seconds", 86_400, 1, AppConfig.MAX_TIMEOUT_SECONDS);
    int connections = args.intValue("connections", 32, 1, 1024);
    Random rng = new Random(args.integer("seed", 1, Long.MIN_VALUE, Long.MAX_VALUE));
    String runId = Long.toString(System.currentTimeMillis(), 36).toUpperCase();
    String sku = "RP-" + runId + "-S";
    long t0 = System.nanoTime();
    List<Burst> bursts = new ArrayList<>();
    try (ServiceClient client = new ServiceClient(vertx, new ServiceClient.Target(url, token, apiKey, channel, null),
        connections, 30_000)) {
      client.setStock(sku, n).await();
      List<Future<JsonObject>> created = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        long price = 100 + rng.nextInt(9900);
        created.add(client.createOrder(new JsonObject().put("orderNo", "RP-" + runId + "-" + i)
            .put("userId", "replay-u" + i).put("paymentTimeoutSeconds", timeout)
            .put("items", new JsonArray().add(new JsonObject().put("sku", sku).put("qty", 1).put("unitPriceCents", price)))));
      }
      Future.all(created).await();
      int duplicated = 0;
      for (int i = 0; i < n; i++) {
        JsonObject order = created.get(i).result();
        JsonObject body = new JsonObject().put("txnId", "RT-" + runId + "-" + i).put("orderNo", order.getString("orderNo"))
            .put("amountCents", order.getLong("amountCents")).put("status", "SUCCESS");
        long offset = span == 0 ? 0 : (long) (rng.nextDouble() * span);
        bursts.add(Burst.of(offset, channel, body, format));
        if (rng.nextDouble() < dupShare) {
          duplicated++;
          int copies = 1 + rng.nextInt(2);
          for (int c = 0; c < copies; c++) {
            bursts.add(Burst.of(offset + rng.nextInt(50), channel, body, format));
          }
        }
      }
      bursts.sort(Comparator.comparingLong(Burst::offsetMs));
      Burst.write(file, bursts);
      double seconds = (System.nanoTime() - t0) / 1e9;
      out.printf("created %d pending orders (sku %s) in %.1f s; wrote %d callbacks (%d orders duplicated) to %s%n",
          n, sku, seconds, bursts.size(), duplicated, file);
      Tools.writeReport(args.string("report", null), new JsonObject().put("orders", n).put("sku", sku)
          .put("callbacks", bursts.size()).put("duplicatedOrders", duplicated).put("file", file.toString())
          .put("seconds", seconds), out);
    }
    return Tools.OK;
  }

  private String secretFor(Vertx vertx, Args args, String channel) {
    String secret = args.secret("secret");
    if (secret != null) {
      return secret;
    }
    ChannelConfig c = AppConfig.from(LocalService.configJson(vertx)).channels().get(channel);
    if (c == null || c.secrets().isEmpty()) {
      throw new Args.UsageException("--secret is required (channel " + channel + " is not an ordergate channel of the local config)");
    }
    return c.secrets().get(0);
  }

  private static String channelOf(Args args, List<Burst> bursts) {
    String channel = args.string("channel", null);
    if (channel != null) {
      return channel;
    }
    if (bursts.isEmpty()) {
      throw new Args.UsageException("the file is empty");
    }
    return bursts.get(0).channel();
  }

  private int replay(Vertx vertx, Args args, Path file) throws IOException {
    List<Burst> bursts = Burst.read(file);
    String url = required(args, "url");
    String channel = channelOf(args, bursts);
    boolean anyOrdergate = bursts.stream().anyMatch(b -> !b.gatewayFormat());
    String secret = anyOrdergate ? secretFor(vertx, args, channel) : null;
    java.util.Map<String, dev.ordergate.sim.Gateway> gateways = new java.util.HashMap<>();
    if (bursts.stream().anyMatch(Burst::gatewayFormat)) {
      SimConfig.load(args.string("sim-config", SimConfig.DEFAULT_PATH)).gateways()
          .forEach((k, t) -> gateways.put(k, t.gateway()));
    }
    Replay.Options options = new Replay.Options(args.intValue("connections", 64, 1, 65_536),
        args.decimal("rate", 0, 0, 10_000_000), args.has("use-offsets"),
        args.integer("request-timeout-ms", 30_000, 100, 3_600_000), args.intValue("warmup", 0, 0, 100_000_000));
    String mode = options.rate() > 0 ? "open loop at " + options.rate() + "/s"
        : options.useOffsets() ? "open loop at the file's offsets" : "closed loop";
    out.printf("replaying %d callbacks from %s to %s: %s, %d connections%s%n", bursts.size(), file, Secrets.redactUrls(url), mode,
        options.connections(), options.warmup() > 0 ? ", the first " + options.warmup() + " as warm-up" : "");
    Replay replay = new Replay(vertx, url, args.string("channel", null), secret, options, gateways);
    Replay.Result result = replay.run(bursts);
    out.print(result.summary());
    Tools.writeReport(args.string("report", null), result.toJson().put("file", file.toString()).put("url", Secrets.redactUrls(url))
        .put("prebuildCpuSeconds", replay.prebuildCpuSeconds())
        .put("mode", mode).put("connections", options.connections()).put("rate", options.rate())
        .put("warmup", options.warmup())
        .put("at", Instant.now().toString()), out);
    return result.ok() ? Tools.OK : Tools.ANOMALY;
  }

  /** A wrk script: every request pre-signed now; each wrk thread walks its own share of them. */
  private int emitWrk(Vertx vertx, Args args, Path file) throws IOException {
    List<Burst> bursts = Burst.read(file);
    if (bursts.stream().anyMatch(Burst::gatewayFormat)) {
      throw new Args.UsageException("--emit-wrk writes the ordergate format only; replay run sends gateway formats");
    }
    String channel = channelOf(args, bursts);
    String secret = secretFor(vertx, args, channel);
    long t = System.currentTimeMillis() / 1000;
    Path lua = Path.of(args.string("emit-wrk", null));
    if (lua.getParent() != null) {
      Files.createDirectories(lua.getParent());
    }
    try (BufferedWriter w = Files.newBufferedWriter(lua, StandardCharsets.UTF_8)) {
      w.write("-- ordergate replay: " + bursts.size() + " callbacks from " + file + ", signed at " + Instant.ofEpochSecond(t)
          + ".\n-- Signatures expire after the channel's toleranceSeconds. Run: wrk -t2 -c64 -d20s -s " + lua
          + " http://host:8080\n");
      w.write("local bodies = {\n");
      for (Burst b : bursts) {
        String body = new String(b.body(), StandardCharsets.UTF_8);
        w.write("  {[==[" + body + "]==], \"" + OrdergateSignature.header(secret, t, channel, b.body()) + "\"},\n");
      }
      w.write("}\n");
      w.write("""
          local path = "/api/callbacks/CHANNEL"
          local threads = {}
          function setup(thread)
            table.insert(threads, thread)
            thread:set("id", #threads - 1)
            for _, t in ipairs(threads) do t:set("step", #threads) end
          end
          function init(args)
            i = id or 0
            step = step or 1
          end
          function request()
            local r = bodies[(i % #bodies) + 1]
            i = i + step
            return wrk.format("POST", path, {["Content-Type"] = "application/json",
              ["X-Ordergate-Signature"] = r[2]}, r[1])
          end
          """.replace("CHANNEL", channel));
    }
    out.printf("wrote %d pre-signed requests for channel %s to %s (valid about the channel's toleranceSeconds"
        + " from now)%n", bursts.size(), channel, lua);
    return Tools.OK;
  }
}
