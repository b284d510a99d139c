package dev.sas.jackson;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

class JsonCodecTest {

    record Customer(String name, String email) {}

    record Line(String sku, int quantity, BigDecimal price) {}

    record Order(String id, Customer customer, List<Line> lines, Optional<String> note, Instant placedAt,
            BigDecimal total) {}

    record Times(LocalDate day, Duration within, OffsetDateTime offset, ZonedDateTime zoned) {}

    record Person(String givenName, String familyName) {}

    /** A later version of {@link Customer}'s shape: one field more. */
    record CustomerV2(String name, String email, String phone) {}

    record Throwing(String value) {
        @Override
        public String value() {
            throw new IllegalStateException("accessor failed");
        }
    }

    static final class NoProperties {}

    private static final String ORDER = Order.class.getName();

    static Order order(String id) {
        return new Order(id, new Customer("Jane Doe", "jane@example.com"),
                List.of(new Line("sku-1", 2, new BigDecimal("9.50")), new Line("sku-2", 1, new BigDecimal("100"))),
                Optional.of("leave at the door"), Instant.parse("2024-05-01T10:15:30.123456789Z"),
                new BigDecimal("119.00"));
    }

    @Nested
    class RoundTrip {

        private final JsonCodec<Order> codec = JsonCodec.of(Order.class);

        @Test
        void record_with_nested_record_list_optional_instant_and_big_decimal_round_trips_unchanged() {
            Order order = order("o-1");

            assertThat(codec.decode(codec.encode(order))).isEqualTo(order);
        }

        @Test
        void empty_optional_round_trips_as_empty() {
            Order order = new Order("o-2", new Customer("A", "a@example.com"), List.of(), Optional.empty(),
                    Instant.EPOCH, BigDecimal.ZERO);

            assertThat(codec.decode(codec.encode(order))).isEqualTo(order);
        }

        @Test
        void instants_are_iso_strings_and_big_decimals_keep_their_scale_in_the_json() {
            String json = codec.encode(order("o-1"));

            assertThat(json).contains("\"placedAt\":\"2024-05-01T10:15:30.123456789Z\"")
                    .contains("\"price\":9.50").contains("\"total\":119.00")
                    .contains("\"note\":\"leave at the door\"");
        }

        @Test
        void dates_durations_offsets_and_zones_round_trip_unchanged_as_iso_strings() {
            JsonCodec<Times> times = JsonCodec.of(Times.class);
            Times value = new Times(LocalDate.of(2024, 2, 29), Duration.ofMillis(1500),
                    OffsetDateTime.of(2024, 5, 1, 10, 0, 0, 0, ZoneOffset.ofHours(2)),
                    ZonedDateTime.of(2024, 5, 1, 10, 0, 0, 0, ZoneId.of("Europe/Berlin")));

            String json = times.encode(value);

            assertThat(json).contains("\"day\":\"2024-02-29\"").contains("\"within\":\"PT1.5S\"")
                    .contains("\"offset\":\"2024-05-01T10:00:00+02:00\"")
                    .contains("\"zoned\":\"2024-05-01T10:00:00+02:00[Europe/Berlin]\"");
            assertThat(times.decode(json)).isEqualTo(value);
        }

        @Test
        void list_of_records_round_trips_through_a_type_reference() {
            JsonCodec<List<Line>> lines = JsonCodec.of(new TypeReference<List<Line>>() {});
            List<Line> value = order("o-1").lines();

            List<Line> decoded = lines.decode(lines.encode(value));

            assertThat(decoded).isEqualTo(value).first().isInstanceOf(Line.class);
            assertThat(lines).hasToString("JsonCodec[java.util.List<" + Line.class.getName() + ">]");
        }

        @Test
        void plain_strings_round_trip_as_json_strings() {
            JsonCodec<String> strings = JsonCodec.of(String.class);

            assertThat(strings.encode("say \"hi\"")).isEqualTo("\"say \\\"hi\\\"\"");
            assertThat(strings.decode(strings.encode("say \"hi\""))).isEqualTo("say \"hi\"");
        }
    }

    @Nested
    class Evolution {

        @Test
        void property_added_by_a_newer_version_is_ignored_by_the_older_type() {
            String written = JsonCodec.of(CustomerV2.class).encode(new CustomerV2("Jane", "j@example.com", "+4912345"));

            assertThat(JsonCodec.of(Customer.class).decode(written)).isEqualTo(new Customer("Jane", "j@example.com"));
        }

        @Test
        void property_missing_from_an_older_input_decodes_as_null() {
            String written = JsonCodec.of(Customer.class).encode(new Customer("Jane", "j@example.com"));

            assertThat(JsonCodec.of(CustomerV2.class).decode(written))
                    .isEqualTo(new CustomerV2("Jane", "j@example.com", null));
        }

        @Test
        void optional_property_missing_from_an_older_input_decodes_as_empty() {
            String withoutNote = "{\"id\":\"o-9\",\"lines\":[],\"placedAt\":\"2024-05-01T10:15:30Z\",\"total\":1}";

            assertThat(JsonCodec.of(Order.class).decode(withoutNote).note()).isEmpty();
        }
    }

    @Nested
    class Failures {

        private final JsonCodec<Order> codec = JsonCodec.of(Order.class);

        @Test
        void malformed_json_is_rejected_naming_the_type_and_position_but_not_the_payload() {
            String payload = "{\"id\":\"o-1\",\"customer\":{\"name\":\"Jane Doe\",\"email\":\"jane@example.com\"},"
                    + "\"total\": abc}";

            assertThatThrownBy(() -> codec.decode(payload))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot decode JSON as " + ORDER + ": Unrecognized token 'abc'")
                    .hasMessageContaining("line 1 column ")
                    .hasMessageNotContaining("Jane Doe")
                    .hasMessageNotContaining("jane@example.com")
                    .hasMessageNotContaining(payload);
        }

        @Test
        void a_very_long_bad_token_is_cut_in_the_message() {
            String payload = "{\"id\": " + "x".repeat(10_000) + "}";

            assertThatThrownBy(() -> codec.decode(payload))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot decode JSON as " + ORDER + ": ")
                    .hasMessageContaining("…")
                    .satisfies(e -> assertThat(e.getMessage()).hasSizeLessThan(
                            ORDER.length() + 2 * JsonCodec.MAX_DETAIL_LENGTH));
        }

        @Test
        void value_of_the_wrong_type_is_rejected_with_the_property_path() {
            String payload = "{\"id\":\"o-1\",\"lines\":[{\"sku\":\"a\",\"quantity\":\"many\"}]}";

            assertThatThrownBy(() -> codec.decode(payload))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot decode JSON as " + ORDER + ": ")
                    .hasMessageContaining("`int`")
                    .hasMessageContaining(" at lines[0].quantity, line 1 column ");
        }

        @Test
        void text_after_the_json_value_is_rejected() {
            String payload = "{\"id\":\"o-1\"} {\"id\":\"o-2\"}";

            assertThatThrownBy(() -> codec.decode(payload))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot decode JSON as " + ORDER + ": ")
                    .hasMessageContaining("Trailing token");
        }

        @Test
        void json_null_and_empty_text_are_rejected_rather_than_decoded_as_null() {
            assertThatThrownBy(() -> codec.decode("null"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("cannot decode JSON as " + ORDER
                            + ": the text is the JSON literal null, which this codec never writes");
            assertThatThrownBy(() -> codec.decode(""))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot decode JSON as " + ORDER + ": No content");
        }

        @Test
        void encoding_or_decoding_null_throws_a_null_pointer_exception_naming_the_type() {
            assertThatThrownBy(() -> codec.encode(null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessageStartingWith("value must not be null: JsonCodec for " + ORDER + " does not encode null");
            assertThatThrownBy(() -> codec.decode(null))
                    .isInstanceOf(NullPointerException.class)
                    .hasMessage("text must not be null (JsonCodec for " + ORDER + ")");
        }

        @Test
        void value_whose_accessor_throws_is_rejected_naming_the_type_and_property() {
            JsonCodec<Throwing> throwing = JsonCodec.of(Throwing.class);

            assertThatThrownBy(() -> throwing.encode(new Throwing("x")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot encode " + Throwing.class.getName() + " as JSON: ")
                    .hasMessageContaining("accessor failed")
                    .hasMessageEndingWith(" at value");
        }

        @Test
        void value_jackson_has_no_serializer_for_is_rejected_naming_the_type() {
            JsonCodec<NoProperties> codec = JsonCodec.of(NoProperties.class);

            assertThatThrownBy(() -> codec.encode(new NoProperties()))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot encode " + NoProperties.class.getName() + " as JSON: ")
                    .hasMessageContaining("No serializer found");
        }

        @Test
        void null_type_or_mapper_is_rejected() {
            assertThatThrownBy(() -> JsonCodec.of((Class<String>) null))
                    .isInstanceOf(NullPointerException.class).hasMessage("type must not be null");
            assertThatThrownBy(() -> JsonCodec.of((TypeReference<String>) null))
                    .isInstanceOf(NullPointerException.class).hasMessage("type must not be null");
            assertThatThrownBy(() -> JsonCodec.of(String.class, null))
                    .isInstanceOf(NullPointerException.class).hasMessage("mapper must not be null");
            assertThatThrownBy(() -> JsonCodec.of(new TypeReference<List<String>>() {}, null))
                    .isInstanceOf(NullPointerException.class).hasMessage("mapper must not be null");
        }
    }

    @Nested
    class CustomMapper {

        @Test
        void a_custom_mapper_naming_strategy_is_used_for_both_directions() {
            ObjectMapper snake = JsonCodec.defaultMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);
            JsonCodec<Order> codec = JsonCodec.of(Order.class, snake);
            Order order = order("o-1");

            String json = codec.encode(order);

            assertThat(json).contains("\"placed_at\":\"2024-05-01T10:15:30.123456789Z\"").doesNotContain("placedAt");
            assertThat(codec.decode(json)).isEqualTo(order);
        }

        @Test
        void a_custom_mapper_that_fails_on_unknown_properties_keeps_failing_on_them() {
            ObjectMapper strict = JsonMapper.builder().addModule(new JavaTimeModule()).build();
            String written = JsonCodec.of(CustomerV2.class).encode(new CustomerV2("Jane", "j@example.com", "+4912345"));

            assertThatThrownBy(() -> JsonCodec.of(Customer.class, strict).decode(written))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("cannot decode JSON as " + Customer.class.getName() + ": ")
                    .hasMessageContaining("Unrecognized field \"phone\"")
                    .hasMessageNotContaining("+4912345");
        }

        @Test
        void a_generic_codec_uses_the_custom_mapper_too() {
            ObjectMapper snake = JsonCodec.defaultMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);
            JsonCodec<List<Person>> codec = JsonCodec.of(new TypeReference<List<Person>>() {}, snake);
            List<Person> value = List.of(new Person("Jane", "Doe"));

            assertThat(codec.encode(value)).isEqualTo("[{\"given_name\":\"Jane\",\"family_name\":\"Doe\"}]");
            assertThat(codec.decode("[{\"given_name\":\"Jane\",\"familyName\":\"Doe\"}]"))
                    .containsExactly(new Person("Jane", null));
        }

        @Test
        void each_default_mapper_is_new_so_changing_one_changes_no_codec() {
            JsonCodec<Order> before = JsonCodec.of(Order.class);
            JsonCodec.defaultMapper().setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE);

            assertThat(JsonCodec.defaultMapper()).isNotSameAs(JsonCodec.defaultMapper());
            assertThat(before.encode(order("o-1"))).contains("placedAt");
            assertThat(JsonCodec.of(Order.class).encode(order("o-1"))).contains("placedAt");
        }
    }

    @Nested
    class ThreadSafety {

        @Test
        void one_codec_shared_by_several_threads_encodes_and_decodes_every_value_correctly() throws Exception {
            JsonCodec<Order> codec = JsonCodec.of(Order.class);
            JsonCodec<List<Line>> lines = JsonCodec.of(new TypeReference<List<Line>>() {});
            int threads = 4;
            int perThread = 500;
            CountDownLatch start = new CountDownLatch(1);
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    Callable<Integer> work = () -> {
                        start.await();
                        int checked = 0;
                        for (int i = 0; i < perThread; i++) {
                            Order order = order("t" + thread + "-" + i);
                            assertThat(codec.decode(codec.encode(order))).isEqualTo(order);
                            assertThat(lines.decode(lines.encode(order.lines()))).isEqualTo(order.lines());
                            checked++;
                        }
                        return checked;
                    };
                    results.add(pool.submit(work));
                }
                start.countDown();
                for (Future<Integer> result : results) {
                    assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(perThread);
                }
            } finally {
                pool.shutdownNow();
            }
        }
    }
}
