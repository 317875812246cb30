package io.tollgate.redis.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The scripts share their Lua, written once and assembled when loaded: the clock in clock.lua for every script,
 * the bucket's arithmetic in token_bucket_common.lua for both token bucket scripts.
 */
class TokenBucketScriptTest {

    private static final Pattern FUNCTION = Pattern.compile("(?m)^local function (\\w+)");
    private static final String INCLUDE = "-- #include token_bucket_common.lua";
    private static final String CLOCK = "-- #include clock.lua";
    private static final List<String> EVERY_SCRIPT = List.of(
            TokenBucketScript.RESOURCE,
            TokenBucketScript.BATCH_RESOURCE,
            TokenBucketScript.IN_FLIGHT_RESOURCE,
            TokenBucketScript.INSTANCES_RESOURCE,
            TokenBucketScript.SUMMARIES_RESOURCE);

    @Test
    void eachScriptIncludesTheCommonLuaOnceAndDefinesNoneOfItsFunctionsAgain() throws IOException {
        List<String> common = functions(resource("token_bucket_common.lua"));
        assertThat(common)
                .contains("ceil_div", "decayed", "converted", "forgotten", "brought_to_now", "parsed", "ttl_millis");

        for (String script : List.of(TokenBucketScript.RESOURCE, TokenBucketScript.BATCH_RESOURCE)) {
            String own = resource(script);
            assertThat(own.split(Pattern.quote(INCLUDE), -1)).as(script).hasSize(2);
            assertThat(functions(own)).as(script).doesNotContainAnyElementsOf(common);
        }
    }

    @Test
    void everyScriptTakesTheTimeFromTheOneClock() throws IOException {
        List<String> clock = functions(resource("clock.lua"));
        assertThat(clock).containsExactly("now_micros");

        for (String script : EVERY_SCRIPT) {
            String own = resource(script);
            assertThat(own.split(Pattern.quote(CLOCK), -1)).as(script).hasSize(2);
            String code = own.replaceFirst("(?s)^--\\[\\[.*?]]", ""); // without the header, which may name TIME
            assertThat(code).as(script).doesNotContain("'TIME'").doesNotContain("3600000");
            assertThat(functions(own)).as(script).doesNotContainAnyElementsOf(clock);
            assertThat(new TokenBucketScript(script).text()).as(script).doesNotContain("-- #include");
        }
    }

    @Test
    void theAssembledScriptIsTheScriptWithEachIncludedPartInPlaceOfItsLine() throws IOException {
        TokenBucketScript batch = new TokenBucketScript(TokenBucketScript.BATCH_RESOURCE);

        assertThat(batch.text())
                .doesNotContain(INCLUDE)
                .isEqualTo(resource(TokenBucketScript.BATCH_RESOURCE)
                        .replace(CLOCK + "\n", resource("clock.lua"))
                        .replace(INCLUDE + "\n", resource("token_bucket_common.lua")));
        assertThat(batch.digest()).hasSize(40).isNotEqualTo(new TokenBucketScript().digest());
    }

    private static List<String> functions(String lua) {
        Matcher function = FUNCTION.matcher(lua);
        return function.results().map(match -> match.group(1)).toList();
    }

    private static String resource(String name) throws IOException {
        try (InputStream in = TokenBucketScript.class.getResourceAsStream("/io/tollgate/redis/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
