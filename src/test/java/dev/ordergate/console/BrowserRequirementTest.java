package dev.ordergate.console;

import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A CI run without the browser must fail, never pass by skipping the browser tests. */
class BrowserRequirementTest {

  @Test
  void aMissingBrowserFailsUnderCiAndSkipsOtherwise() {
    assertThrows(AssertionError.class, () -> Browser.requireBrowser(false, "true"));
    assertThrows(TestAbortedException.class, () -> Browser.requireBrowser(false, null));
    assertThrows(TestAbortedException.class, () -> Browser.requireBrowser(false, "false"));
    assertDoesNotThrow(() -> Browser.requireBrowser(true, "true"));
  }
}
