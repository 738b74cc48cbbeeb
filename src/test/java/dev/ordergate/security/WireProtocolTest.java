package dev.ordergate.security;

import dev.ordergate.support.AppTest;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the listener accepts on the wire, tested with a raw socket (an HTTP client library would
 * refuse to send these): a request framed two ways (Content-Length and Transfer-Encoding) is
 * refused and the connection closed, so nothing after it can be smuggled in as a second request;
 * cleartext HTTP/2 (the prior-knowledge preface) is not spoken.
 */
class WireProtocolTest extends AppTest {

  /** Sends {@code raw} and reads until the server closes or 3 s pass. */
  private static String exchange(String raw) throws IOException {
    try (Socket s = new Socket("127.0.0.1", app.verticle.port())) {
      s.setSoTimeout(3000);
      s.getOutputStream().write(raw.getBytes(StandardCharsets.ISO_8859_1));
      s.getOutputStream().flush();
      ByteArrayOutputStream got = new ByteArrayOutputStream();
      InputStream in = s.getInputStream();
      byte[] buf = new byte[4096];
      try {
        for (int n; (n = in.read(buf)) > 0; ) {
          got.write(buf, 0, n);
        }
      } catch (SocketTimeoutException stillOpen) {
        got.write("\n<<still open>>".getBytes(StandardCharsets.ISO_8859_1));
      }
      return got.toString(StandardCharsets.ISO_8859_1);
    }
  }

  private static int statusOf(String answer) {
    assertTrue(answer.startsWith("HTTP/1.1 "), answer);
    return Integer.parseInt(answer.substring(9, 12));
  }

  @Test
  void contentLengthWithTransferEncodingIsRefusedAndTheConnectionClosed() throws IOException {
    // A front proxy that honours Content-Length would forward the second request as this one's
    // body; a back end that honours chunked would run it. Neither may happen here.
    String smuggled = "GET /admin/reconcile HTTP/1.1\r\nHost: x\r\n\r\n";
    String body = "0\r\n\r\n" + smuggled;
    String answer = exchange("POST /api/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Content-Length: " + body.length() + "\r\nTransfer-Encoding: chunked\r\n\r\n" + body);
    assertEquals(400, statusOf(answer), answer);
    assertFalse(answer.contains("<<still open>>"), "the connection must be closed: " + answer);
    assertEquals(1, answer.split("HTTP/1.1 ", -1).length - 1, "exactly one answer: " + answer);
  }

  @Test
  void bothHeadersOrderedTheOtherWayAreRefusedToo() throws IOException {
    String answer = exchange("POST /api/orders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        + "Content-Length: 5\r\n\r\n0\r\n\r\n");
    assertEquals(400, statusOf(answer), answer);
    assertFalse(answer.contains("<<still open>>"), answer);
  }

  @Test
  void aPlainRequestOnTheSameListenerIsAnswered() throws IOException {
    String answer = exchange("GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    assertEquals(200, statusOf(answer), answer);
  }

  @Test
  void cleartextHttp2PriorKnowledgeIsNotSpoken() throws IOException {
    // An HTTP/2 server answers the preface with a SETTINGS frame (type 0x04 at byte 3).
    String answer = exchange("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + "\u0000\u0000\u0000\u0004\u0000\u0000\u0000\u0000\u0000");
    boolean settingsFrame = answer.length() >= 9 && answer.charAt(3) == 4 && !answer.startsWith("HTTP/");
    assertFalse(settingsFrame, "the server spoke HTTP/2 in cleartext");
  }

  @Test
  void cleartextHttp2UpgradeIsNotTaken() throws IOException {
    String answer = exchange("GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings, close\r\n"
        + "Upgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n");
    assertFalse(answer.startsWith("HTTP/1.1 101"), "the server switched to h2c: " + answer);
    assertEquals(200, statusOf(answer), answer);
  }
}
