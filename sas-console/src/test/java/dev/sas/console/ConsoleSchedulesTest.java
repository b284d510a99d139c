package dev.sas.console;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.sas.core.SasRuntime;
import dev.sas.core.Schedule;
import dev.sas.core.TaskQuery;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The console's schedules page through {@link SasConsole#handle}: every schedule with its fire
 * times and state for anyone who reaches the console; pause, resume and trigger only with the
 * operator token.
 */
class ConsoleSchedulesTest {

    private static final String TOKEN = "s3cret-operator-token-0123456789";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Shop shop = new Shop();
    private final ManualClock clock = new ManualClock(Instant.parse("2026-11-27T08:00:00Z"));
    private final InMemoryStateStore store = new InMemoryStateStore();
    private SasRuntime runtime;
    private SasConsole console;

    @BeforeEach
    void schedules() {
        runtime = SasRuntime.builder().stateStore(store).clock(clock).instanceId("node-a").workflow(shop.refunds).build();
        runtime.client().schedules().register(Schedule.named("nightly-refunds")
                .cron("0 2 * * *", ZoneId.of("Europe/Berlin")).submits(shop.refunds, "all").build());
        runtime.client().schedules().register(Schedule.named("heartbeat").every(Duration.ofMinutes(5))
                .submits(shop.refunds, "ping").build());
        console = SasConsole.builder().client(runtime.client()).actionToken(TOKEN).build();
    }

    private ConsoleResponse get(String path) {
        return console.handle(ConsoleRequest.of("GET", path, null, Map.of("Host", "127.0.0.1:8089")));
    }

    private ConsoleResponse post(String path, boolean withToken) {
        Map<String, String> h = new HashMap<>(Map.of("Host", "127.0.0.1:8089", "Origin", "http://127.0.0.1:8089",
                "Sec-Fetch-Site", "same-origin"));
        if (withToken) {
            h.put(SasConsole.TOKEN_HEADER, TOKEN);
        }
        return console.handle(new ConsoleRequest("POST", path, null, h, "10.1.2.3"));
    }

    private static JsonNode json(ConsoleResponse r) throws Exception {
        return JSON.readTree(r.bodyText());
    }

    @Test
    void lists_every_schedule_with_its_fire_times_state_and_next_fire_time() throws Exception {
        JsonNode page = json(get("/api/schedules"));

        assertThat(page.get("supported").asBoolean()).isTrue();
        assertThat(page.get("schedules")).hasSize(2);
        JsonNode heartbeat = page.get("schedules").get(0);
        assertThat(heartbeat.get("name").asText()).isEqualTo("heartbeat");
        assertThat(heartbeat.get("trigger").asText()).isEqualTo("every:PT5M");
        assertThat(heartbeat.get("nextFireTime").asText()).isEqualTo("2026-11-27T08:05:00Z");
        JsonNode nightly = page.get("schedules").get(1);
        assertThat(nightly.get("zone").asText()).isEqualTo("Europe/Berlin");
        assertThat(nightly.get("paused").asBoolean()).isFalse();
        assertThat(nightly.get("missedFires").asText()).isEqualTo("RUN_ONCE");
        assertThat(nightly.get("missedAfter").asText()).isEqualTo("PT1M");
        assertThat(nightly.get("nextFireTime").asText()).isEqualTo("2026-11-28T01:00:00Z");
    }

    @Test
    void an_operator_pauses_triggers_and_resumes_a_schedule() throws Exception {
        ConsoleResponse paused = post("/api/schedules/nightly-refunds/pause", true);
        assertThat(paused.status()).isEqualTo(200);
        assertThat(json(paused).get("message").asText()).isEqualTo("schedule nightly-refunds paused");
        assertThat(runtime.client().schedules().find("nightly-refunds").orElseThrow().paused()).isTrue();

        ConsoleResponse triggered = post("/api/schedules/nightly-refunds/trigger", true);
        assertThat(json(triggered).get("message").asText()).startsWith("schedule nightly-refunds triggered: task ");
        assertThat(runtime.client().list(TaskQuery.all().withWorkflow("refunds")))
                .singleElement().satisfies(t -> assertThat(t.businessKey())
                        .isEqualTo("nightly-refunds@triggered-2026-11-27T08:00:00Z"));

        assertThat(post("/api/schedules/nightly-refunds/resume", true).status()).isEqualTo(200);
        assertThat(runtime.client().schedules().find("nightly-refunds").orElseThrow().paused()).isFalse();
    }

    @Test
    void actions_need_the_token_a_post_and_a_known_schedule() throws Exception {
        ConsoleResponse noToken = post("/api/schedules/heartbeat/pause", false);
        assertThat(noToken.status()).isIn(401, 403);
        assertThat(runtime.client().schedules().find("heartbeat").orElseThrow().paused()).isFalse();

        assertThat(get("/api/schedules/heartbeat/pause").status()).isIn(403, 405);
        ConsoleResponse unknown = post("/api/schedules/nope/pause", true);
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(json(unknown).get("error").asText()).contains("schedule 'nope' is not registered");
        assertThat(post("/api/schedules/heartbeat/delete", true).status()).isEqualTo(404);
    }
}
