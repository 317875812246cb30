package io.tollgate.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.tollgate.spring.testapp.TestApplication;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.ActiveProfiles;

/**
 * Every form of a path that a client may send for {@code /api/hello}, sent as raw bytes to a Boot application on
 * Tomcat whose rule limits {@code /api/**} to 3 per client: each form is counted under the rule, whatever Tomcat and
 * Spring MVC then answer, or refused.
 */
@SpringBootTest(
        classes = TestApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "tollgate.redis.use-application-redis=false",
            "tollgate.rules[0].path=/api/**",
            "tollgate.rules[0].policy=per-ip",
            "tollgate.rules[0].key=header:X-Client"
        })
@ActiveProfiles("ratelimited")
@DirtiesContext
class PathFormsApplicationTest {

    @LocalServerPort
    int port;

    // What the application answers before the fourth request is refused: Spring MVC serves some forms as
    // /api/hello (200) and finds no handler for others (404), and Tomcat refuses some itself (400)
    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "/api/hello         | 200 200 200 429",
                "//api/hello        | 404 404 404 429",
                "/api//hello        | 404 404 404 429",
                "/API/hello         | 404 404 404 429",
                "/api/./hello       | 404 404 404 429",
                "/x/../api/hello    | 404 404 404 429",
                "/x/..;/api/hello   | 404 404 404 429",
                "/%61pi/hello       | 200 200 200 429",
                "/api/hello;x=1     | 200 200 200 429",
                "/api\\\\hello      | 400 400 400 400",
                "/api%5Chello       | 400 400 400 400",
                "/api%2Fhello       | 400 400 400 400",
            })
    void everyFormOfAPathCountsUnderTheRuleOfItsNormalFormOrIsRefused(String path, String statuses) throws IOException {
        String client = "client-" + Integer.toHexString(path.hashCode());

        List<Integer> answered = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            answered.add(status("GET " + path + " HTTP/1.1\r\nHost: localhost\r\nX-Client: " + client));
        }

        assertThat(answered)
                .containsExactlyElementsOf(
                        Arrays.stream(statuses.split(" ")).map(Integer::valueOf).toList());
    }

    private int status(String head) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write((head + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            String answer = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
            return Integer.parseInt(answer.substring(9, 12));
        }
    }
}
