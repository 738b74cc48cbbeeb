package dev.ordergate.http;

import dev.ordergate.support.AppTest;
import dev.ordergate.support.TestApp;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.util.Objects;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 14, defect 5 (and issue 15's form-body finding): no route takes uploads, so a multipart request
 * is refused before any of it is stored, and leaves no file anywhere; a form body on a JSON route is a
 * 415, not a 500, whatever the size of its fields.
 */
class UploadsTest extends AppTest {

  private static final String BOUNDARY = "----ordergate-test-boundary";

  private static Buffer multipart() {
    return Buffer.buffer("--" + BOUNDARY + "\r\n"
        + "Content-Disposition: form-data; name=\"file\"; filename=\"fill.bin\"\r\n"
        + "Content-Type: application/octet-stream\r\n\r\n"
        + "x".repeat(20_000) + "\r\n--" + BOUNDARY + "--\r\n");
  }

  private static int files(File dir) {
    return dir.isDirectory() ? Objects.requireNonNull(dir.list()).length : 0;
  }

  private static HttpResponse<Buffer> send(HttpMethod method, String path, String contentType, Buffer body,
                                           String auth) {
    var req = app.http.request(method, path).putHeader("Content-Type", contentType);
    if (auth != null) {
      req.putHeader("Authorization", "Bearer " + auth);
    }
    return req.sendBuffer(body).await();
  }

  @Test
  void multipartRequestsAreRefusedAndLeaveNoFile() {
    File uploads = new File("file-uploads");
    int before = files(uploads);
    String type = "multipart/form-data; boundary=" + BOUNDARY;
    for (int i = 0; i < 20; i++) {
      assertEquals(415, send(HttpMethod.POST, "/api/callbacks/" + TestApp.CHANNEL, type, multipart(), null).statusCode());
    }
    assertEquals(415, send(HttpMethod.POST, "/api/orders", type, multipart(), TestApp.API_KEY).statusCode());
    assertEquals(415, send(HttpMethod.POST, "/admin/coupons", type, multipart(), TestApp.ADMIN_TOKEN).statusCode());
    assertEquals(before, files(uploads), "no uploaded file was kept");
    assertEquals(0, app.count("SELECT count(*) FROM orders") + app.count("SELECT count(*) FROM coupons"));
  }

  @Test
  void aFormBodyOnAJsonRouteIsA415NotA500() {
    Buffer form = Buffer.buffer("orderNo=O1&userId=" + "u".repeat(2_000));
    HttpResponse<Buffer> resp = send(HttpMethod.POST, "/api/orders", "application/x-www-form-urlencoded", form,
        TestApp.API_KEY);
    assertEquals(415, resp.statusCode(), resp.bodyAsString());
    assertEquals("UNSUPPORTED_MEDIA_TYPE", resp.bodyAsJsonObject().getString("error"));
    resp = send(HttpMethod.PUT, "/admin/inventory/A", "application/x-www-form-urlencoded", form, TestApp.ADMIN_TOKEN);
    assertEquals(415, resp.statusCode(), resp.bodyAsString());
  }
}
