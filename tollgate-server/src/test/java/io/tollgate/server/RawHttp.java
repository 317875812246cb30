package io.tollgate.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Sends a request as raw bytes, for requests that a client library will not send (hop-by-hop headers,
 * malformed paths, oversized headers), and reads the answer's head and body.
 */
final class RawHttp {

    /** An answer: the status, the header lines as received, and the body. */
    record Answer(int status, List<String> headers, String body) {

        /** Returns every value of a header, names ignoring case. */
        List<String> header(String name) {
            List<String> values = new ArrayList<>();
            for (String line : headers) {
                int colon = line.indexOf(':');
                if (line.substring(0, colon).equalsIgnoreCase(name)) {
                    values.add(line.substring(colon + 1).strip());
                }
            }
            return values;
        }
    }

    private RawHttp() {}

    /** Sends {@code head} (request line and header lines, without the blank line) and reads the answer. */
    static Answer send(int port, String head) throws IOException {
        return send(port, head, new byte[0]);
    }

    /**
     * Sends {@code head} and then {@code body}, all of it, before reading anything, as some clients do
     * (Python's urllib), and reads the answer.
     */
    static Answer send(int port, String head, byte[] body) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            byte[] headBytes = (head + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
            byte[] request = new byte[headBytes.length + body.length];
            System.arraycopy(headBytes, 0, request, 0, headBytes.length);
            System.arraycopy(body, 0, request, headBytes.length, body.length);
            out.write(request);
            out.flush();
            InputStream in = socket.getInputStream();
            ByteArrayOutputStream all = new ByteArrayOutputStream();
            in.transferTo(all);
            String answer = all.toString(StandardCharsets.ISO_8859_1);
            int end = answer.indexOf("\r\n\r\n");
            String[] lines = answer.substring(0, end).split("\r\n");
            if (!lines[0].toUpperCase(Locale.ROOT).startsWith("HTTP/1.1 ")) {
                throw new IllegalStateException("not an HTTP answer: " + answer);
            }
            List<String> headers = List.of(lines).subList(1, lines.length);
            return new Answer(Integer.parseInt(lines[0].substring(9, 12)), headers, answer.substring(end + 4));
        }
    }
}
