package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.Codec;
import dev.sas.core.CompletionOutcome;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.Transition;
import dev.sas.testing.Drain;
import dev.sas.testing.ManualClock;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A human approval over days: JVM 1 runs a runtime whose step sends an approval request (here, the
 * token written to a file, as an e-mail link would carry it) and awaits the reply for up to 7 days,
 * on a manual clock; a separate JVM holding only a client completes the step with the token. No
 * scheduler thread is held while the task waits. A reply after the 7 days is rejected as LATE and
 * changes nothing.
 */
class AwaitCompletionCrossProcessTest {

    /** Where JVM 1's request puts the token (the approval e-mail, in effect). */
    static volatile Path tokenFile;

    /** The approval workflow, defined alike in both JVMs; the request writes the token to {@link #tokenFile}. */
    static final Workflow<String> APPROVAL = Workflow.builder("human-approval", Codec.string())
            .step("approve", s -> s.awaitCompletion((ctx, token) -> Files.writeString(tokenFile, token))
                    .completeWithin(Duration.ofDays(7)))
            .step("ship", s -> s.execute(ctx -> "shipped after " + ctx.output("approve").orElseThrow()))
            .build();

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"POSTGRES", "MARIADB"})
    void an_approval_completed_days_later_by_another_jvm_completes_the_task_once(TestDb db) throws Exception {
        run(db, Duration.ofDays(6), CompletionOutcome.COMPLETED);
    }

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"POSTGRES", "MARIADB"})
    void an_approval_after_the_seven_days_is_late_and_changes_nothing(TestDb db) throws Exception {
        run(db, Duration.ofDays(7).plusMillis(1), CompletionOutcome.LATE);
    }

    /** The keys of both JVMs: the same on every node, as in production. */
    private static final dev.sas.core.CompletionTokenKeys KEYS = dev.sas.core.CompletionTokenKeys.builder()
            .currentKey("k1", "cross-process test key, 32+ bytes long".getBytes(java.nio.charset.StandardCharsets.UTF_8))
            .build();

    private static void run(TestDb db, Duration wait, CompletionOutcome expected) throws Exception {
        String url = db.url();
        String prefix = TestDb.randomPrefix();
        tokenFile = Files.createTempFile("sas-approval", ".token");
        ManualClock clock = new ManualClock(Instant.parse("2030-03-01T09:00:00Z"));
        try (JdbcStateStore store = TestDb.builder(url, prefix).build();
                SasRuntime sas = SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock()
                        .instanceId("jvm-1").workflow(APPROVAL).completionTokenKeys(KEYS).build()) {
            TaskId id = sas.client().submit(APPROVAL, "order-7", "a car").id();
            Drain.untilIdle(sas);

            TaskInfo awaiting = sas.client().find(id).orElseThrow();
            assertThat(awaiting.status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
            assertThat(awaiting.lockedBy()).isEqualTo(Transition.AWAITING_COMPLETION_HOLDER);
            assertThat(sas.inFlight()).as("no scheduler holds the waiting task").isZero();
            assertThat(Thread.getAllStackTraces().values()).as("no thread is inside a step")
                    .noneMatch(stack -> Arrays.stream(stack).anyMatch(f -> f.getClassName().contains("AttemptRunner")));
            String token = Files.readString(tokenFile);
            assertThat(token).isNotBlank();
            int eventsBefore = sas.client().events(id).size();

            clock.tick(wait);
            String answer = replyFromAnotherJvm(url, prefix, token, clock.instant());

            assertThat(answer).isEqualTo(expected.name());
            Drain.untilIdle(sas);
            TaskInfo after = sas.client().find(id).orElseThrow();
            List<TaskEvent.Type> types = sas.client().events(id).stream().map(TaskEvent::type).toList();
            if (expected == CompletionOutcome.COMPLETED) {
                assertThat(after.status()).isEqualTo(TaskStatus.PROCESSED);
                assertThat(after.step("approve").output()).isEqualTo("approved by ann");
                assertThat(after.step("ship").output()).isEqualTo("shipped after approved by ann");
                assertThat(Collections.frequency(types, TaskEvent.Type.COMPLETION_RECEIVED)).isEqualTo(1);
                assertThat(Collections.frequency(types, TaskEvent.Type.STEP_COMPLETED)).isEqualTo(2);
                assertThat(after.lease()).as("claimed for approve, then for ship").isEqualTo(2);
                assertThat(sas.client().stepCompletion().complete(token, "again")).isEqualTo(CompletionOutcome.ALREADY_COMPLETED);
            } else {
                assertThat(after.status()).isEqualTo(TaskStatus.AWAITING_COMPLETION);
                assertThat(after.lease()).isEqualTo(awaiting.lease());
                assertThat(after.completeBy()).isEqualTo(awaiting.completeBy());
                assertThat(sas.client().events(id)).as("no event").hasSize(eventsBefore);
                assertThat(types).doesNotContain(TaskEvent.Type.COMPLETION_RECEIVED);
            }
        } finally {
            Files.deleteIfExists(tokenFile);
            db.drop(url, prefix);
        }
    }

    /** Starts a client-only JVM that replies with {@code token} at {@code now}; its answer. */
    private static String replyFromAnotherJvm(String url, String prefix, String token, Instant now) throws Exception {
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), ReplyingClient.class.getName(), url, prefix, token,
                now.toString()).redirectErrorStream(true).start();
        String answer = null;
        StringBuilder output = new StringBuilder();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(),
                StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                output.append(line).append('\n');
                if (line.startsWith("reply outcome: ")) {
                    answer = line.substring("reply outcome: ".length()).trim();
                }
            }
        }
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
        assertThat(p.exitValue()).as("the replying JVM's output:\n" + output).isZero();
        return answer;
    }

    /** The other JVM: a client with no runtime, at the manual clock's time, answers the approval. */
    static final class ReplyingClient {
        public static void main(String[] args) {
            String url = args[0];
            String prefix = args[1];
            String token = args[2];
            Clock at = Clock.fixed(Instant.parse(args[3]), ZoneOffset.UTC);
            try (JdbcStateStore store = TestDb.builder(url, prefix).build()) {
                SasClient client = SasClient.builder().stateStore(store).clock(at).trustLocalClock()
                        .workflow(APPROVAL).completionTokenKeys(KEYS).build();
                CompletionOutcome outcome = client.stepCompletion().complete(token, "approved by ann");
                System.out.println("reply outcome: " + outcome);
            }
        }
    }
}
