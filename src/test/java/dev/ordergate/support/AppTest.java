package dev.ordergate.support;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * For a test class that needs the service with the default test config: one {@link TestApp} (a
 * fresh database) for the whole class, started before its first test and closed after its last.
 * Test classes run one after another (Surefire's default), which the shared field relies on; a
 * class that needs its own config starts its own {@code TestApp}.
 */
public abstract class AppTest {

  protected static TestApp app;

  @BeforeAll
  static void startApp() {
    app = TestApp.start();
  }

  @AfterAll
  static void stopApp() {
    app.close();
    app = null;
  }
}
