package dev.ordergate.console;

import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.Dimension;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.function.Function;
import java.util.stream.Stream;

/**
 * Headless Debian Chromium through the system's chromedriver, both by explicit path so Selenium
 * Manager never runs (nothing is downloaded). Without them the tests skip locally, but under
 * {@code CI=true} they fail: a CI run must never pass by not testing the browser.
 */
public final class Browser implements AutoCloseable {

  public static final String CHROMEDRIVER = "/usr/bin/chromedriver";
  public static final String CHROMIUM = "/usr/bin/chromium";
  public static final Path SCREENSHOTS = Path.of("target", "console-screenshots");

  public final WebDriver driver;
  private final ChromeDriverService service;
  private final Path profile;
  /** Where the browser saves downloads (inside the throw-away profile). */
  public final Path downloads;
  private final String base;
  private int failures;

  private Browser(String base) throws IOException {
    this.base = base;
    this.profile = Files.createTempDirectory("og-chromium-profile");
    this.downloads = Files.createDirectories(profile.resolve("downloads"));
    this.service = new ChromeDriverService.Builder()
        .usingDriverExecutable(new File(CHROMEDRIVER)).usingAnyFreePort().build();
    ChromeOptions options = new ChromeOptions();
    options.setBinary(CHROMIUM);
    options.setExperimentalOption("prefs", java.util.Map.of(
        "download.default_directory", downloads.toString(), "download.prompt_for_download", false));
    options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", "--window-size=1360,900", "--user-data-dir=" + profile);
    this.driver = new ChromeDriver(service, options);
    driver.manage().window().setSize(new Dimension(1360, 900));
    Files.createDirectories(SCREENSHOTS);
  }

  /** Starts the browser for the service at {@code base}, or skips (locally) / fails (CI) without one. */
  public static Browser start(String base) throws IOException {
    requireBrowser(Files.isExecutable(Path.of(CHROMEDRIVER)) && Files.isExecutable(Path.of(CHROMIUM)),
        System.getenv("CI"));
    return new Browser(base);
  }

  /** Without a browser: fails when {@code ci} is "true", else skips the test (aborts it). */
  static void requireBrowser(boolean present, String ci) {
    if (present) {
      return;
    }
    if ("true".equals(ci)) {
      throw new AssertionError("CI=true but " + CHROMIUM + " or " + CHROMEDRIVER
          + " is missing: install the Debian packages chromium and chromium-driver (.ci/run does)");
    }
    Assumptions.abort("no " + CHROMIUM + " / " + CHROMEDRIVER + ": browser tests skipped (they fail under CI=true)");
  }

  /** Loads the console afresh (a blank page first: the same URL with another hash would not reload it). */
  public void open(String hashPath) {
    driver.get("about:blank");
    driver.get(base + "/console/" + hashPath);
  }

  public WebElement await(By by) {
    return until(ExpectedConditions.visibilityOfElementLocated(by));
  }

  /** Waits up to 15 s; on a timeout the page (screenshot and DOM) is saved as failure-N for the report. */
  public <T> T until(Function<WebDriver, T> condition) {
    try {
      return new WebDriverWait(driver, Duration.ofSeconds(15)).until(condition);
    } catch (org.openqa.selenium.TimeoutException e) {
      String name = "failure-" + (++failures);
      screenshot(name);
      try {
        Files.writeString(SCREENSHOTS.resolve(name + ".html"), driver.getCurrentUrl() + "\n" + driver.getPageSource());
      } catch (IOException io) {
        e.addSuppressed(io);
      }
      throw e;
    }
  }

  public void awaitText(By by, String text) {
    until(ExpectedConditions.textToBePresentInElementLocated(by, text));
  }

  public static By test(String id) {
    return By.cssSelector("[data-testid='" + id + "']");
  }

  public Object script(String js, Object... args) {
    return ((JavascriptExecutor) driver).executeScript(js, args);
  }

  public void screenshot(String name) {
    try {
      Files.write(SCREENSHOTS.resolve(name + ".png"), ((TakesScreenshot) driver).getScreenshotAs(OutputType.BYTES));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void close() throws IOException {
    try {
      driver.quit();
    } finally {
      service.stop();
      try (Stream<Path> walk = Files.walk(profile)) {
        walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }
}
