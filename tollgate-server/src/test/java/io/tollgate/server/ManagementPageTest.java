package io.tollgate.server;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.fixtures.DocumentationExamples;
import io.tollgate.testing.RedisExtension;
import io.tollgate.testing.RequiredBinary;
import io.tollgate.top.KeyDisplay;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The management page in a real browser: headless Chromium (Debian's {@code chromium} and {@code
 * chromium-driver}) driven by Selenium against a server on Redis under a small load with one flooding key. The
 * page asks for the token and refuses a wrong one, charts non-zero rates, lists the flooding key among the top
 * refused, and its reset button resets it. The screenshot it takes is docs/images/management-page.png (written
 * there with {@code -Dtollgate.update-screenshots=true}; always to target/screenshots/).
 */
@Timeout(180)
class ManagementPageTest {

    @RegisterExtension
    static final RedisExtension redis = new RedisExtension();

    private static final String TOKEN = "s3cret-page-token";
    private static final String FLOODER = "partner-script-7f3a";
    private static final String UPDATE_SCREENSHOTS = "tollgate.update-screenshots";

    private RunningServer server;
    private final AtomicBoolean loading = new AtomicBoolean(true);
    private Thread load;

    @BeforeEach
    void startServerUnderLoad() throws Exception {
        redis.server().command("FLUSHALL");
        server = RunningServer.start("""
                redis:
                  uri: %s
                policies:
                  per-client:
                    limits:
                      - capacity: 50
                        refill: 20/s
                  per-partner:
                    limits:
                      - capacity: 10
                        refill: 1/m
                top-keys:
                  enabled: true
                server:
                  management-port: 0
                  management-token: %s
                """.formatted(redis.server().uri(), TOKEN));
        load = new Thread(() -> {
            List<String> clients = List.of("alice", "bob", "carol");
            int i = 0;
            while (loading.get()) {
                check("per-client", clients.get(i % clients.size()));
                if (i % 2 == 0) {
                    check("per-partner", FLOODER);
                }
                if (i % 25 == 0) {
                    check("per-partner", "partner-" + (i % 4));
                }
                i++;
                sleep(20);
            }
        });
        load.start();
    }

    @AfterEach
    void stop() throws Exception {
        loading.set(false);
        load.join();
        server.close();
    }

    @Test
    void chartsTheRatesListsTheFlooderAndResetsItBehindTheToken() throws Exception {
        Path chromium = RequiredBinary.find("chromium", "chromium");
        Path chromedriver = RequiredBinary.find("chromedriver", "chromium-driver");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(chromedriver.toFile())
                .usingAnyFreePort()
                .build();
        ChromeOptions options = new ChromeOptions()
                .setBinary(chromium.toFile())
                .addArguments("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1500");
        WebDriver browser = new ChromeDriver(service, options);
        try {
            WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(30));
            browser.get(server.server().managementUri().resolve("/").toString());

            wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("token-input")))
                    .sendKeys("not-the-token");
            browser.findElement(By.id("token-submit")).click();
            wait.until(ExpectedConditions.textToBe(By.id("token-error"), "The management port refused this token."));
            assertThat(browser.findElement(By.id("app")).isDisplayed()).isFalse();

            browser.findElement(By.id("token-input")).sendKeys(TOKEN);
            browser.findElement(By.id("token-submit")).click();
            wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("app")));

            wait.until(page -> rate(page, "per-client", "allowed") > 0 && rate(page, "per-partner", "refused") > 0);
            // the decision API keeps its keys under api:, and the top keys name the bucket's key
            String shown = KeyDisplay.MASKED.show(CheckApi.KEY_PREFIX + FLOODER);
            WebElement row = wait.until(page -> topRow(page, shown));
            assertThat(browser.findElement(By.id("store-state")).getText()).isEqualTo("answers");
            assertThat(browser.findElement(By.id("store-nodes")).getText()).contains("closed");
            assertThat(browser.findElement(By.id("store-latency")).getText()).startsWith("p50 ");
            assertThat(browser.getPageSource()).doesNotContain(FLOODER);
            if (Boolean.getBoolean(UPDATE_SCREENSHOTS)) {
                Thread.sleep(60_000); // a minute of points on the charts for the documentation's screenshot
            }
            screenshot(browser);

            row.findElement(By.className("inspect")).click();
            WebElement bucket = wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("top-bucket")));
            assertThat(bucket.getText()).contains("\"key\": \"" + shown + "\"", "\"stored\": true");

            loading.set(false);
            load.join();
            assertThat(check("per-partner", FLOODER))
                    .as("refused before the reset")
                    .isEqualTo(429);
            wait.until(page -> topRow(page, shown))
                    .findElement(By.className("reset"))
                    .click();
            wait.until(ExpectedConditions.textToBePresentInElementLocated(
                    By.id("top-status"), "Reset " + shown + ": its next request finds full buckets."));

            assertThat(check("per-partner", FLOODER))
                    .as("admitted after the reset")
                    .isEqualTo(200);
            assertThat(browser.getPageSource()).doesNotContain(FLOODER);
        } finally {
            browser.quit();
            service.stop();
        }
    }

    @Test
    void theRatesAndTheStoreNeedTheTokenThePageDoesNotAndThePublicPortHasNone() {
        HttpResponse<String> page = server.management("GET", "/");
        HttpResponse<String> script = server.management("GET", "/page.js");

        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Type")).hasValue("text/html; charset=utf-8");
        assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow())
                .contains("default-src 'none'", "connect-src 'self'", "frame-ancestors 'none'");
        assertThat(page.body()).contains("<title>Tollgate</title>", "/page.js");
        assertThat(script.statusCode()).isEqualTo(200);
        assertThat(script.headers().firstValue("Content-Type")).hasValue("text/javascript; charset=utf-8");
        assertThat(server.management("GET", "/admin/rates").statusCode()).isEqualTo(401);
        assertThat(server.management("GET", "/admin/store").statusCode()).isEqualTo(401);
        assertThat(server.management("GET", "/admin/rates", "Authorization", "Bearer " + TOKEN)
                        .statusCode())
                .isEqualTo(200);
        assertThat(server.get("/").statusCode()).as("the public port").isEqualTo(404);
        assertThat(server.get("/page.js").statusCode()).as("the public port").isEqualTo(404);
    }

    private static double rate(WebDriver page, String policy, String measure) {
        List<WebElement> now = page.findElements(By.cssSelector("figure[data-policy='" + policy + "'] .now"));
        return now.isEmpty() ? 0 : Double.parseDouble(now.get(0).getDomAttribute("data-" + measure));
    }

    private static WebElement topRow(WebDriver page, String shown) {
        for (WebElement row : page.findElements(By.cssSelector("#top-table tbody tr"))) {
            if (row.findElement(By.className("key")).getText().equals(shown)) {
                return row;
            }
        }
        return null;
    }

    private static void screenshot(WebDriver browser) throws Exception {
        byte[] png = ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES);
        Path target = Files.createDirectories(Path.of("target", "screenshots"));
        Files.write(target.resolve("management-page.png"), png);
        if (Boolean.getBoolean(UPDATE_SCREENSHOTS)) {
            Path images = Files.createDirectories(DocumentationExamples.PROJECT.resolve("docs/images"));
            Files.write(images.resolve("management-page.png"), png);
        }
    }

    private int check(String policy, String key) {
        return server.post("/v1/check", "{\"policy\": \"" + policy + "\", \"key\": \"" + key + "\"}")
                .statusCode();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
