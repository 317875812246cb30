package io.tollgate.server;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/** The JSON bodies the server writes, built with Jackson's streaming generator. Thread-safe. */
final class JsonText {

    private static final JsonFactory JSON = new JsonFactory();

    /** Writes one JSON value to a generator. */
    interface Writing {
        void write(JsonGenerator generator) throws IOException;
    }

    private JsonText() {}

    /** Returns what {@code writing} writes, as text. */
    static String of(Writing writing) {
        StringWriter out = new StringWriter(256);
        try (JsonGenerator generator = JSON.createGenerator(out)) {
            writing.write(generator);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // writing to a string does not fail
        }
        return out.toString();
    }

    /** Returns maps (in their order), lists, strings, numbers, booleans and nulls as JSON text. */
    static String ofValue(Object value) {
        return of(generator -> write(generator, value));
    }

    private static void write(JsonGenerator generator, Object value) throws IOException {
        if (value instanceof Map<?, ?> map) {
            generator.writeStartObject();
            for (Map.Entry<?, ?> entry : map.entrySet()) {
                generator.writeFieldName(String.valueOf(entry.getKey()));
                write(generator, entry.getValue());
            }
            generator.writeEndObject();
        } else if (value instanceof List<?> list) {
            generator.writeStartArray();
            for (Object element : list) {
                write(generator, element);
            }
            generator.writeEndArray();
        } else if (value instanceof Long || value instanceof Integer) {
            generator.writeNumber(((Number) value).longValue());
        } else if (value instanceof Boolean bool) {
            generator.writeBoolean(bool);
        } else if (value == null) {
            generator.writeNull();
        } else {
            generator.writeString(value.toString());
        }
    }

    /** Returns {@code micros} in whole milliseconds, rounded up: a client that waits that long is not early. */
    static long ceilMillis(long micros) {
        return (micros + 999) / 1_000;
    }
}
